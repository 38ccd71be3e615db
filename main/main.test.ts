import type { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';

/** Electron's main-process modules as far as `runElectron` uses them; the test closes the window it opened. */
const electron = vi.hoisted(() => ({
  win: undefined as unknown as EventEmitter & { close(): void },
  app: undefined as unknown as EventEmitter & { quit(): void },
  /** Where the app's end is recorded (`app exited`), in the test's order of steps. */
  steps: undefined as string[] | undefined,
}));

vi.mock('electron', async () => {
  const { EventEmitter } = await import('node:events');
  let quitting = false;
  const app = Object.assign(new EventEmitter(), {
    enableSandbox: () => undefined,
    whenReady: () => Promise.resolve(),
    /**
     * As Electron's app.quit() — which is also what its browser process does on SIGTERM, SIGINT or SIGHUP: `before-quit`
     * (its default can be prevented), then every window closed *without* `window-all-closed` ("in this case the
     * window-all-closed event would not be emitted"), then `will-quit` and the end of the process.
     */
    quit: () => {
      let prevented = false;
      app.emit('before-quit', { preventDefault: () => (prevented = true) });
      if (prevented) return;
      quitting = true;
      electron.win?.close();
      app.emit('will-quit', { preventDefault: () => undefined });
      electron.steps?.push('app exited');
    },
    exit: () => {
      electron.steps?.push('app exited');
    },
    getVersion: () => '0.0.0-test',
  });
  electron.app = app;
  class BrowserWindow extends EventEmitter {
    closed = false;
    readonly webContents = Object.assign(new EventEmitter(), {
      loadURL: () => Promise.resolve(),
      executeJavaScript: () => Promise.resolve(1),
      isDestroyed: () => false,
      send: () => undefined,
    });
    constructor() {
      super();
      electron.win = this;
      // Each test's shell is an app of its own: not quitting yet.
      quitting = false;
    }
    loadURL(): Promise<void> {
      return Promise.resolve();
    }
    isDestroyed(): boolean {
      return this.closed;
    }
    show(): void {}
    /** As Electron does: `close` first, then the window is gone and, the last one, `window-all-closed`. */
    close(): void {
      if (this.closed) return;
      this.emit('close', { preventDefault: () => undefined });
      this.closed = true;
      this.emit('closed');
      if (!quitting) app.emit('window-all-closed');
    }
  }
  const webRequest = { onHeadersReceived: () => undefined };
  return {
    app,
    BrowserWindow,
    ipcMain: { handle: () => undefined, removeHandler: () => undefined },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: {
      defaultSession: {
        webRequest,
        setPermissionRequestHandler: () => undefined,
        setPermissionCheckHandler: () => undefined,
      },
    },
  };
});

const { electronEntry, runElectron } = await import('./main.js');

/** The terminal as the shell drives it: in service until told otherwise, every step of the stop recorded in order. */
function fakeHost(steps: string[]) {
  let outOfService: string | undefined;
  return {
    steps,
    begin: () => Promise.resolve(),
    close: () => {
      steps.push('host closed');
      return Promise.resolve();
    },
    status: () => ({ outOfService }),
    outOfService: (reason: string, options: { stopping?: boolean } = {}) => {
      outOfService = reason;
      steps.push(`out of service: ${reason}${options.stopping === true ? ' (stopping)' : ''}`);
    },
    snapshot: () => Promise.reject(new Error('not used')),
    send: () => Promise.reject(new Error('not used')),
    operator: () => Promise.reject(new Error('not used')),
    subscribe: () => () => undefined,
  };
}

/** Runs the shell until its kiosk service has started; returns the service's restart and the shell's end. */
async function started(steps: string[]) {
  let restart: (reason: string) => void = () => undefined;
  let serviceStarted: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (serviceStarted = resolve));
  const host = fakeHost(steps);
  const done = runElectron(host as never, {
    staticDir: '/nonexistent',
    preload: '/nonexistent/preload.cjs',
    service: (_uiAliveMs, restartWith) => {
      restart = restartWith;
      serviceStarted();
      return Promise.resolve({
        close: () => {
          steps.push('service closed (STOPPING=1)');
          return Promise.resolve();
        },
      });
    },
    closing: () => {
      steps.push('fleet link closed');
      return Promise.resolve();
    },
  });
  await running;
  // The service has been handed back to the shell.
  await Promise.resolve();
  return { restart: (reason: string) => restart(reason), done };
}

describe('Electron shell stop', () => {
  it('takes no new customer from the moment a restart is decided, before the service and fleet link close', async () => {
    const steps: string[] = [];
    const shell = await started(steps);
    shell.restart('daily restart');
    await shell.done;
    expect(steps).toEqual([
      'out of service: restarting: daily restart (stopping)',
      'service closed (STOPPING=1)',
      'fleet link closed',
      'host closed',
    ]);
  });

  it('takes no new customer once its window is closed (SIGTERM quits the app), before anything else closes', async () => {
    const steps: string[] = [];
    const shell = await started(steps);
    electron.win.close();
    await shell.done;
    expect(steps).toEqual([
      'out of service: stopping (stopping)',
      'service closed (STOPPING=1)',
      'fleet link closed',
      'host closed',
    ]);
  });
});

describe('Electron shell quit by a signal', () => {
  it('closes the terminal before the app exits: what is in flight is finished or journaled first', async () => {
    // Electron's browser process answers SIGTERM (systemctl stop) with app.quit(), whose window-all-closed never comes.
    const steps: string[] = [];
    electron.steps = steps;
    try {
      const shell = await started(steps);
      electron.app.quit();
      // The process is gone once the app has exited: whatever was not closed by then never is.
      await vi.waitFor(() => expect(steps).toContain('app exited'));
      expect(steps).toEqual([
        'out of service: stopping (stopping)',
        'service closed (STOPPING=1)',
        'fleet link closed',
        'host closed',
        'app exited',
      ]);
      await shell.done;
    } finally {
      electron.steps = undefined;
    }
  });
});

/**
 * Runs the Electron entry on a configuration of its own (with `terminal`), its window closed once it is open; answers
 * what it printed, and the generated PIN file's content while the window was open (`pinFile`, when given). `output`,
 * when given, is its standard output and error instead of the test's.
 */
async function runEntry(
  terminal: Record<string, unknown>,
  stdoutIsTTY: boolean,
  pinFile?: (dir: string) => string,
  output?: Writable,
): Promise<{ printed: string; pinWhileOpen: string | undefined; pinFileLeft: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'pt-electron-entry-'));
  const file = join(dir, 'terminal.json');
  const pinPath = pinFile?.(dir);
  writeFileSync(
    file,
    JSON.stringify({
      journal: { path: join(dir, 'journal.db') },
      offline: { keyFile: join(dir, 'offline.key') },
      terminal: { ...terminal, ...(pinPath !== undefined ? { generatedPinFile: pinPath } : {}) },
    }),
  );
  vi.stubEnv('PARKING_TERMINAL_CONFIG', file);
  let printed = '';
  const stdout = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        printed += chunk.toString('utf8');
        done();
      },
    }),
    stdoutIsTTY ? { isTTY: true } : {},
  );
  electron.win = undefined as never;
  let pinWhileOpen: string | undefined;
  try {
    const entry = electronEntry(output ?? stdout, output ?? new Writable());
    await vi.waitFor(() => expect(electron.win).toBeDefined(), { timeout: 60_000, interval: 50 });
    if (pinPath !== undefined) pinWhileOpen = readFileSync(pinPath, 'utf8');
    electron.win.close();
    await entry;
    return { printed, pinWhileOpen, pinFileLeft: pinPath !== undefined && existsSync(pinPath) };
  } finally {
    vi.unstubAllEnvs();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('Electron entry', () => {
  it('prints the operator PIN it generated for this start on a terminal, as `start --headless` does', async () => {
    // Without terminal.operatorPinFile the PIN exists only in the process that generated it: unless that process
    // hands it to whoever started the terminal, nobody can open operator mode.
    const { printed } = await runEntry({}, true);
    expect(printed).toMatch(/^Operator PIN for this start: \d{6}$/m);
  }, 120_000);

  it('writes the generated PIN to terminal.generatedPinFile when stdout is no terminal (the journal), never printing it', async () => {
    const { printed, pinWhileOpen, pinFileLeft } = await runEntry({}, false, (dir) =>
      join(dir, 'operator-pin'),
    );
    const pin = pinWhileOpen?.trim() ?? '';
    expect(pin).toMatch(/^\d{6}$/);
    expect(printed).toMatch(/^Operator PIN for this start: in \/.*operator-pin$/m);
    expect(printed).not.toContain(pin);
    // Removed once the window has closed: the PIN in it opens nothing any more.
    expect(pinFileLeft).toBe(false);
  }, 120_000);
});

/**
 * A pipe whose reader has gone: every write fails with EPIPE. Node makes an 'error' event nobody listens to an
 * uncaught exception; this stream records such an event instead (`unheard`), so that the test's process goes on.
 */
class PipeWithoutReader extends Writable {
  readonly unheard: unknown[] = [];
  constructor() {
    super({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
  }
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error' && this.listenerCount('error') === 0) {
      this.unheard.push(args[0]);
      return false;
    }
    return super.emit(event, ...args);
  }
}

describe('Electron entry with broken standard streams', () => {
  it('goes on when the reader of its standard output and error has gone: no write error is left unheard', async () => {
    // Under systemd or `parking-terminal start`, whose reader may go away: an unheard EPIPE is an uncaught exception
    // in the shell, which puts the terminal out of service.
    const broken = new PipeWithoutReader();
    await runEntry({}, false, undefined, broken);
    expect(broken.unheard).toEqual([]);
  }, 120_000);
});
