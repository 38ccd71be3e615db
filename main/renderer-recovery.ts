/** The part of a BrowserWindow the policy uses (injected so that tests need no Electron). */
export interface RecoverableWindow {
  isDestroyed(): boolean;
  webContents: {
    on(
      event: 'render-process-gone',
      listener: (event: unknown, details: { reason: string }) => void,
    ): unknown;
    on(event: 'unresponsive' | 'responsive', listener: () => void): unknown;
    /** Electron's `executeJavaScript`: resolves only when the renderer's main thread runs the script. */
    executeJavaScript(code: string): Promise<unknown>;
    /** Kills a hung renderer (Electron's `forcefullyCrashRenderer`); `render-process-gone` follows. */
    forcefullyCrashRenderer(): void;
    loadURL(url: string): Promise<void>;
  };
}

export interface RendererRecoveryOptions {
  url: string;
  /** How long a renderer may stay unresponsive before it is killed and the page loaded again. */
  unresponsiveMs?: number;
  /** How often the renderer is asked for a sign of life. */
  probeMs?: number;
  /** After this many reloads within `burstWindowMs` the policy stops reloading (the UI check then fails). */
  maxReloads?: number;
  burstWindowMs?: number;
  now?: () => number;
  log?: (message: string, details: Record<string, unknown>) => void;
}

/**
 * Keeps the kiosk's screen alive (issue 15): a renderer that dies (`render-process-gone`: crashed, killed, out of
 * memory) is loaded again; one that hangs (`unresponsive` for `unresponsiveMs`) is killed and then loaded again. The
 * renderer holds no payment state (DESIGN.md: snapshots only), so a reload loses nothing. The main process probes the
 * renderer every `probeMs`; `lastAliveMs` is the last answer — the UI check of the service watchdog. Too many reloads
 * in a short time stop the reloading: the UI check then fails and systemd restarts the whole service.
 */
export class RendererRecovery {
  private readonly now: () => number;
  private unresponsiveTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private reloads: number[] = [];
  /** When the renderer last answered a probe (or loaded). */
  lastAliveMs: number | undefined;

  constructor(
    private readonly win: RecoverableWindow,
    private readonly options: RendererRecoveryOptions,
  ) {
    this.now = options.now ?? Date.now;
    const contents = win.webContents;
    contents.on('render-process-gone', (_event, details) => {
      this.clearUnresponsive();
      this.reload(`renderer process gone (${details.reason})`);
    });
    contents.on('unresponsive', () => {
      if (this.unresponsiveTimer) return;
      this.unresponsiveTimer = setTimeout(() => {
        this.unresponsiveTimer = undefined;
        if (win.isDestroyed()) return;
        this.options.log?.('renderer unresponsive: killing it', {
          ms: this.options.unresponsiveMs ?? 10_000,
        });
        contents.forcefullyCrashRenderer();
      }, options.unresponsiveMs ?? 10_000);
    });
    contents.on('responsive', () => this.clearUnresponsive());
  }

  private clearUnresponsive(): void {
    if (this.unresponsiveTimer) clearTimeout(this.unresponsiveTimer);
    this.unresponsiveTimer = undefined;
  }

  /** Whether a reload is still allowed: fewer than `maxReloads` within the last `burstWindowMs`. */
  private allowed(): boolean {
    const now = this.now();
    const window = this.options.burstWindowMs ?? 10 * 60_000;
    this.reloads = this.reloads.filter((at) => now - at < window);
    return this.reloads.length < (this.options.maxReloads ?? 5);
  }

  private reload(reason: string): void {
    if (this.win.isDestroyed()) return;
    if (!this.allowed()) {
      this.options.log?.('renderer keeps failing: not reloading again (the service watchdog restarts)', {
        reason,
      });
      return;
    }
    this.reloads.push(this.now());
    this.options.log?.('reloading the renderer', { reason });
    void this.win.webContents.loadURL(this.options.url).catch(() => undefined);
  }

  /** Asks the renderer for a sign of life; `lastAliveMs` moves when it answers. */
  async probe(): Promise<void> {
    if (this.win.isDestroyed()) return;
    try {
      await this.win.webContents.executeJavaScript('1');
      this.lastAliveMs = this.now();
    } catch {
      // A renderer that is gone or navigating: no sign of life.
    }
  }

  /** Starts probing every `probeMs`. */
  start(): this {
    void this.probe();
    this.probeTimer = setInterval(() => void this.probe(), this.options.probeMs ?? 5_000);
    this.probeTimer.unref();
    return this;
  }

  stop(): void {
    this.clearUnresponsive();
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }
}
