import { afterEach, describe, expect, it, vi } from 'vitest';
import { RendererRecovery, type RecoverableWindow } from './renderer-recovery.js';

/** A BrowserWindow as far as the policy sees it: its events fired by the test, its calls recorded. */
class FakeWindow implements RecoverableWindow {
  destroyed = false;
  readonly loads: string[] = [];
  crashes = 0;
  answering = true;
  private readonly listeners = new Map<string, ((...args: unknown[]) => void)[]>();
  readonly webContents = {
    on: (event: string, listener: (...args: unknown[]) => void) => {
      this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
      return this.webContents;
    },
    executeJavaScript: () => (this.answering ? Promise.resolve(1) : new Promise<unknown>(() => undefined)),
    forcefullyCrashRenderer: () => {
      this.crashes += 1;
      this.emit('render-process-gone', {}, { reason: 'killed' });
    },
    loadURL: (url: string) => {
      this.loads.push(url);
      return Promise.resolve();
    },
  } as unknown as RecoverableWindow['webContents'];
  isDestroyed(): boolean {
    return this.destroyed;
  }
  emit(event: string, ...args: unknown[]): void {
    for (const l of this.listeners.get(event) ?? []) l(...args);
  }
}

afterEach(() => vi.useRealTimers());

describe('renderer recovery', () => {
  it('loads the page again when the render process is gone', () => {
    const win = new FakeWindow();
    new RendererRecovery(win, { url: 'app://renderer/' });
    win.emit('render-process-gone', {}, { reason: 'crashed' });
    expect(win.loads).toEqual(['app://renderer/']);
  });

  it('kills a renderer that stays unresponsive, then loads it again', () => {
    vi.useFakeTimers();
    const win = new FakeWindow();
    new RendererRecovery(win, { url: 'app://renderer/', unresponsiveMs: 10_000 });
    win.emit('unresponsive');
    vi.advanceTimersByTime(9_999);
    expect(win.crashes).toBe(0);
    vi.advanceTimersByTime(1);
    expect(win.crashes).toBe(1);
    expect(win.loads).toEqual(['app://renderer/']);
  });

  it('leaves a renderer that becomes responsive again alone', () => {
    vi.useFakeTimers();
    const win = new FakeWindow();
    new RendererRecovery(win, { url: 'app://renderer/', unresponsiveMs: 10_000 });
    win.emit('unresponsive');
    vi.advanceTimersByTime(5_000);
    win.emit('responsive');
    vi.advanceTimersByTime(20_000);
    expect(win.crashes).toBe(0);
    expect(win.loads).toEqual([]);
  });

  it('stops reloading a renderer that keeps dying, so that the service watchdog restarts the terminal', () => {
    let now = 0;
    const win = new FakeWindow();
    new RendererRecovery(win, { url: 'u', maxReloads: 3, burstWindowMs: 60_000, now: () => now });
    for (let i = 0; i < 5; i++) win.emit('render-process-gone', {}, { reason: 'oom' });
    expect(win.loads).toHaveLength(3);
    now = 61_000;
    win.emit('render-process-gone', {}, { reason: 'oom' });
    expect(win.loads).toHaveLength(4);
  });

  it('notes the renderer alive only when it answers a probe', async () => {
    let now = 1_000;
    const win = new FakeWindow();
    const recovery = new RendererRecovery(win, { url: 'u', now: () => now });
    await recovery.probe();
    expect(recovery.lastAliveMs).toBe(1_000);
    win.answering = false;
    now = 5_000;
    void recovery.probe();
    await Promise.resolve();
    expect(recovery.lastAliveMs).toBe(1_000);
  });

  it('does nothing to a destroyed window', () => {
    const win = new FakeWindow();
    new RendererRecovery(win, { url: 'u' });
    win.destroyed = true;
    win.emit('render-process-gone', {}, { reason: 'crashed' });
    expect(win.loads).toEqual([]);
  });
});
