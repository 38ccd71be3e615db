import { describe, expect, it } from 'vitest';
import { IPC_CHANNELS, type TerminalSnapshot } from '../src/host/api.js';
import { FakeTerminal, FAKE_PIN } from '../test/e2e/fake-terminal.js';
import { registerTerminalIpc, type IpcSenderEvent, type MainIpc } from './ipc.js';
import { createPreloadApi, type PreloadIpc } from './preload-api.js';
import { isAppUrl } from './security.js';

type Handler = (event: IpcSenderEvent, ...args: unknown[]) => Promise<unknown>;

/** ipcMain and ipcRenderer joined in memory, with the sender frame's URL under the test's control. */
function wire(frameUrl = 'app://renderer/index.html') {
  const handlers = new Map<string, Handler>();
  const listeners = new Map<string, Set<(event: unknown, ...args: unknown[]) => void>>();
  const main: MainIpc = {
    handle: (channel, handler) => void handlers.set(channel, handler),
    removeHandler: (channel) => void handlers.delete(channel),
  };
  const renderer: PreloadIpc = {
    invoke: (channel, ...args) => {
      const h = handlers.get(channel);
      if (!h) return Promise.reject(new Error(`no handler for ${channel}`));
      return h({ senderFrame: { url: frameUrl } }, ...args);
    },
    on: (channel, l) => listeners.set(channel, (listeners.get(channel) ?? new Set()).add(l)),
    removeListener: (channel, l) => listeners.get(channel)?.delete(l),
  };
  const target = {
    destroyed: false,
    /** The page loading afresh or its renderer process gone, as the window's webContents tells them. */
    pageGone: [] as (() => void)[],
    onPageGone(listener: () => void) {
      this.pageGone.push(listener);
    },
    send: (channel: string, snapshot: TerminalSnapshot) => {
      for (const l of listeners.get(channel) ?? []) l({}, snapshot);
    },
    isDestroyed() {
      return this.destroyed;
    },
  };
  return { handlers, main, renderer, target };
}

describe('TerminalApi over Electron IPC', () => {
  it('carries snapshot, send and operator through the preload API', async () => {
    const fake = new FakeTerminal();
    const w = wire();
    registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const api = createPreloadApi(w.renderer);
    expect(await api.snapshot()).toMatchObject({ ok: true, value: { customer: { screen: 'idle' } } });
    expect(await api.send({ type: 'START' })).toMatchObject({
      ok: true,
      value: { customer: { screen: 'enter-ticket' } },
    });
    expect(await api.operator({ pin: FAKE_PIN, action: { type: 'flush-queue' } })).toMatchObject({
      ok: true,
    });
    fake.dispose();
  });

  it('pushes every snapshot to subscribers until they unsubscribe', async () => {
    const fake = new FakeTerminal();
    const w = wire();
    registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const api = createPreloadApi(w.renderer);
    const seen: string[] = [];
    const stop = api.subscribe((s) => seen.push(s.customer.screen));
    await api.send({ type: 'START' });
    stop();
    await api.send({ type: 'CANCEL' });
    expect(seen).toEqual(['enter-ticket']);
    fake.dispose();
  });

  it('answers malformed arguments with BAD_REQUEST without calling the terminal', async () => {
    const fake = new FakeTerminal();
    const w = wire();
    registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const invoke = (channel: string, arg: unknown) => w.renderer.invoke(channel, arg);
    expect(await invoke(IPC_CHANNELS.send, { type: 'START', extra: 1 })).toMatchObject({
      error: { code: 'BAD_REQUEST' },
    });
    expect(await invoke(IPC_CHANNELS.send, 'START')).toMatchObject({ error: { code: 'BAD_REQUEST' } });
    expect(await invoke(IPC_CHANNELS.operator, { action: { type: 'flush-queue' } })).toMatchObject({
      error: { code: 'BAD_REQUEST' },
    });
    expect(fake.events).toEqual([]);
    expect(fake.operatorRequests).toEqual([]);
    fake.dispose();
  });

  it('tells the terminal that a page gone (reloaded, crashed, its window closed) stopped saying what it said it was', async () => {
    const fake = new FakeTerminal({ speech: true });
    const w = wire();
    const dispose = registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const api = createPreloadApi(w.renderer);
    await api.send({ type: 'SET_ACCESSIBILITY', on: true });
    await api.send({ type: 'SPEECH_STATE', id: 7, speaking: true });
    // The window's page is a page of its own: its reports name it.
    const page = (fake.speechStates.at(-1) as { page?: unknown }).page;
    expect(page).toEqual(expect.any(Number));
    const told = fake.speechStates.length;
    for (const gone of w.target.pageGone) gone();
    expect(fake.speechStates.slice(told)).toEqual([{ type: 'SPEECH_STATE', id: 7, speaking: false, page }]);
    // Told once; a page that said it stopped leaves nothing to tell when the window goes.
    await api.send({ type: 'SPEECH_STATE', id: 8, speaking: true });
    await api.send({ type: 'SPEECH_STATE', id: 8, speaking: false });
    const later = fake.speechStates.length;
    for (const gone of w.target.pageGone) gone();
    dispose();
    expect(fake.speechStates.length).toBe(later);
    fake.dispose();
  });

  it('refuses calls from a frame that is not the app', async () => {
    const fake = new FakeTerminal();
    const w = wire('https://evil.example/');
    registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const api = createPreloadApi(w.renderer);
    expect(await api.send({ type: 'START' })).toMatchObject({ ok: false, error: { code: 'NOT_ALLOWED' } });
    expect(fake.events).toEqual([]);
    fake.dispose();
  });

  it('removes its handlers and subscription on dispose, and never sends to a destroyed window', async () => {
    const fake = new FakeTerminal();
    const w = wire();
    const dispose = registerTerminalIpc(w.main, fake, w.target, isAppUrl);
    const api = createPreloadApi(w.renderer);
    const seen: string[] = [];
    api.subscribe((s) => seen.push(s.customer.screen));
    w.target.destroyed = true;
    await api.send({ type: 'START' });
    expect(seen).toEqual([]);
    dispose();
    expect(w.handlers.size).toBe(0);
    expect(fake.subscribers).toBe(0);
    fake.dispose();
  });
});
