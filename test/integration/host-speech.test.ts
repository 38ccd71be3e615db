/**
 * Speech output on a running terminal (issue 13, "Accessibility"; EN 301 549 5.1.3): only in accessibility mode, each
 * screen in the customer's language, the speech keys as SPEECH events, and nothing left of it after the session.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { Result, TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { startBridge } from '../../src/host/bridge/server.js';
import { silentLogger } from '../../src/log/index.js';
import { CATALOGUES } from '../../src/i18n/index.js';
import { makeStaticDir, openSocket, ownHost, SocketLog } from '../e2e/bridge-client.js';

let host: TerminalHost | undefined;
/** What else a test opened, closed after it. */
const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of opened.splice(0).reverse()) await close();
  await host?.close();
  host = undefined;
});

async function start(config: ConfigInput = {}): Promise<TerminalHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-speech-'));
  host = await createTerminalHost(parseConfig(config), { logger: silentLogger(), cwd });
  await waitFor(host, ['idle'], 10_000);
  return host;
}

async function send(h: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
  return r.value;
}

async function screenOf(h: TerminalHost): Promise<string | undefined> {
  const r = await h.snapshot();
  return r.ok ? r.value.customer.screen : undefined;
}

/** A sale of the demo ticket in accessibility mode, up to its approval. */
async function approvedSale(h: TerminalHost): Promise<TerminalSnapshot> {
  await send(h, { type: 'SET_ACCESSIBILITY', on: true });
  const ticket = /(\d{16})\)/.exec((await send(h, { type: 'START' })).customer.message)?.[1] ?? '';
  await send(h, { type: 'ENTER_TICKET', ticket });
  await waitFor(h, ['confirm'], 10_000);
  await send(h, { type: 'CONFIRM' });
  return waitFor(h, ['approved', 'declined', 'error'], 15_000);
}

describe('speech output on the terminal', () => {
  it('speaks through the renderer only in accessibility mode, in the customer’s language, until the session ends', async () => {
    const h = await start();
    const idle = await h.snapshot();
    expect(idle.ok && idle.value.customer.speech).toBeFalsy();
    expect((await h.send({ type: 'SPEECH', command: 'repeat' })).ok).toBe(false);

    const on = await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    expect(on.customer.speech).toMatchObject({ by: 'renderer', lang: 'en-GB', volume: 0.6 });
    expect(on.customer.speech?.text).toContain('Speech is on.');

    await send(h, { type: 'SET_LANGUAGE', locale: 'de_DE' });
    const ticket = await send(h, { type: 'START' });
    expect(ticket.customer.screen).toBe('enter-ticket');
    expect(ticket.customer.speech?.lang).toBe('de-DE');
    expect(ticket.customer.speech?.text).toContain(ticket.customer.title);
    expect(ticket.customer.speech?.text).toContain('Enter-Taste');
    const id = ticket.customer.speech?.id ?? 0;

    const louder = await send(h, { type: 'SPEECH', command: 'louder' });
    expect(louder.customer.speech).toMatchObject({ volume: 0.7 });
    expect(louder.customer.speech?.id).toBeGreaterThan(id);

    const back = await send(h, { type: 'CANCEL' });
    expect(back.customer.screen).toBe('idle');
    expect(back.customer.speech).toBeUndefined();
    expect(h.status().speech).toEqual({ engine: 'platform' });
    // The next customer starts at the configured volume.
    expect((await send(h, { type: 'SET_ACCESSIBILITY', on: true })).customer.speech?.volume).toBe(0.6);
  });

  it('keeps the demo ticket it offers while the ticket screen is up, so that saying it again says the same', async () => {
    const h = await start();
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const shown = (await send(h, { type: 'START' })).customer.message;
    expect(shown).toMatch(/demo ticket, entered 95 minutes ago: \d{16}\)/);
    // Past the next minute: the ticket the customer is reading stays the same.
    vi.setSystemTime(Date.now() + 61_000);
    const later = await h.snapshot();
    expect(later.ok && later.value.customer.message).toBe(shown);
    // The next customer is offered a ticket of their own time.
    await send(h, { type: 'CANCEL' });
    expect((await send(h, { type: 'START' })).customer.message).not.toBe(shown);
  });

  it('reports a missing espeak-ng in the operator status and goes on taking customers', async () => {
    const h = await start({
      customer: { speech: { engine: 'espeak-ng', espeakPath: '/nonexistent/espeak-ng' } },
    });
    const on = await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    expect(on.customer.speech?.by).toBe('terminal');
    await new Promise((r) => setTimeout(r, 100));
    expect(h.status().speech?.lastError).toMatch(/^SPEECH_ENGINE_MISSING/);
    expect((await send(h, { type: 'START' })).customer.screen).toBe('enter-ticket');
  });

  it('echoes the keys the customer presses through espeak-ng, and counts them as activity', async () => {
    // A program behind espeak-ng's contract (the text on stdin): each utterance said to the end is a line in `said`.
    const dir = mkdtempSync(join(tmpdir(), 'pt-echo-'));
    const said = join(dir, 'said');
    const program = join(dir, 'espeak-ng');
    writeFileSync(said, '');
    writeFileSync(program, `#!/bin/sh\ntext=$(cat)\nprintf '%s\\n' "$text" >> '${said}'\n`);
    chmodSync(program, 0o755);
    const h = await start({
      customer: {
        inactivitySeconds: 45,
        accessibilityFactor: 2,
        speech: { engine: 'espeak-ng', espeakPath: program },
      },
    });
    const lines = (): string[] => readFileSync(said, 'utf8').split('\n').filter(Boolean);
    const refused = await h.send({ type: 'ECHO', text: '5' });
    expect(refused.ok === false && refused.error.code).toBe('NOT_ALLOWED_NOW');

    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    // Each utterance is waited for: the next one would cut it off before the program has read it. The first one ends
    // with the other languages, each name a run of its own voice (one process each), the last العربية, and how to
    // reach the Language button.
    await expect.poll(() => lines().at(-1), { timeout: 5_000 }).toBe(CATALOGUES.en_GB['speech.chooseKeys']);
    expect(lines().at(-2)).toBe('العربية.');
    const n = lines().length;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    const ticket = await send(h, { type: 'START' });
    expect(ticket.customer.speech?.by).toBe('terminal');
    await expect.poll(lines, { timeout: 5_000 }).toHaveLength(n + 1);

    const echoed = await send(h, { type: 'ECHO', text: '5' });
    expect(echoed.customer.speech).toEqual(ticket.customer.speech);
    await expect.poll(lines, { timeout: 5_000 }).toHaveLength(n + 2);
    expect(lines()[n + 1]).toBe('5');

    // A masked entry is refused without a word, and the repeat key still says the screen.
    const masked = await h.send({ type: 'ECHO', text: '••••' });
    expect(masked.ok === false && masked.error.code).toBe('NOT_ALLOWED_NOW');
    await send(h, { type: 'SPEECH', command: 'repeat' });
    await expect.poll(lines, { timeout: 5_000 }).toHaveLength(n + 3);
    expect(lines()[n + 2]).toBe(lines()[n]);

    // Twice 80 s of a 90 s limit, with a key pressed between: no "Do you need more time?".
    await vi.advanceTimersByTimeAsync(80_000);
    await send(h, { type: 'ECHO', text: '5' });
    await vi.advanceTimersByTimeAsync(80_000);
    const customer = await h.snapshot();
    expect(customer.ok && customer.value.customer.screen).toBe('enter-ticket');
    expect(customer.ok && customer.value.customer.prompt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(11_000);
    const asked = await h.snapshot();
    expect(asked.ok && asked.value.customer.prompt).toMatchObject({ kind: 'more-time' });

    // A key echoed while the question is asked (Tab onto Yes) is said, and leaves the question to its own answer.
    const onYes = await send(h, { type: 'ECHO', text: 'Yes' });
    expect(onYes.customer.prompt).toMatchObject({ kind: 'more-time' });
    await expect.poll(lines, { timeout: 5_000 }).toContain('Yes');
    expect((await send(h, { type: 'MORE_TIME' })).customer.prompt).toBeUndefined();
  });

  it('keeps a result screen up while its speech is said, then for the result time; at most ten times that', async () => {
    // A program behind espeak-ng's contract whose utterances end only once the test releases them (the file `release`).
    const dir = mkdtempSync(join(tmpdir(), 'pt-result-'));
    const release = join(dir, 'release');
    const program = join(dir, 'espeak-ng');
    writeFileSync(program, `#!/bin/sh\ncat > /dev/null\nwhile [ ! -e '${release}' ]; do sleep 0.02; done\n`);
    chmodSync(program, 0o755);
    const h = await start({
      customer: { accessibilityFactor: 2, speech: { engine: 'espeak-ng', espeakPath: program } },
    });
    const screen = (): Promise<string | undefined> => screenOf(h);
    const approved = (): Promise<TerminalSnapshot> => approvedSale(h);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });

    // The result screen stays (10 s, twice that in accessibility mode) while the receipt is still being said…
    expect((await approved()).customer.screen).toBe('approved');
    expect(h.speech.speaking).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await screen()).toBe('approved');
    // …and the repeat key still says it again.
    await send(h, { type: 'SPEECH', command: 'repeat' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await screen()).toBe('approved');
    // Once said to the end, the result time of accessibility mode runs from there.
    writeFileSync(release, '');
    await expect.poll(() => h.speech.speaking, { timeout: 5_000 }).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await screen()).toBe('approved');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await screen()).toBe('idle');
    expect(h.speech.view()).toBeUndefined();

    // Done still ends it at once, while it is being said.
    rmSync(release);
    expect((await approved()).customer.screen).toBe('approved');
    expect(h.speech.speaking).toBe(true);
    expect((await send(h, { type: 'DONE' })).customer.screen).toBe('idle');

    // A speech that never ends holds the screen no longer than ten times its result time: 200 s.
    expect((await approved()).customer.screen).toBe('approved');
    await vi.advanceTimersByTimeAsync(190_000);
    expect(await screen()).toBe('approved');
    expect(h.speech.speaking).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await screen()).toBe('idle');
  });

  it('keeps a result screen up while the page says it (platform speech), then for the result time; at most ten times that', async () => {
    const h = await start({ customer: { accessibilityFactor: 2 } });
    const screen = (): Promise<string | undefined> => screenOf(h);
    /** What the page says it is doing with the utterance it was last given. */
    const page = async (speaking: boolean): Promise<Result<TerminalSnapshot>> => {
      const now = await h.snapshot();
      const id = now.ok ? (now.value.customer.speech?.id ?? 0) : 0;
      return h.send({ type: 'SPEECH_STATE', id, speaking });
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });

    // The result screen (10 s, twice that in accessibility mode) stays while the page says the result and receipt…
    const shown = await approvedSale(h);
    expect(shown.customer.screen).toBe('approved');
    expect(shown.customer.speech?.by).toBe('renderer');
    expect((await page(true)).ok).toBe(true);
    expect(h.speech.speaking).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await screen()).toBe('approved');
    // …and once the page has said it to the end, for the result time of accessibility mode from there.
    expect((await page(false)).ok).toBe(true);
    expect(h.speech.speaking).toBe(false);
    await vi.advanceTimersByTimeAsync(19_000);
    expect(await screen()).toBe('approved');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await screen()).toBe('idle');

    // A page that never says it has finished holds the screen no longer than ten times its result time: 200 s.
    expect((await approvedSale(h)).customer.screen).toBe('approved');
    expect((await page(true)).ok).toBe(true);
    await vi.advanceTimersByTimeAsync(190_000);
    expect(await screen()).toBe('approved');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await screen()).toBe('idle');

    // A report the terminal cannot take is refused without a word (no utterance of its own that the page would say).
    const said = await h.snapshot();
    for (const event of [
      { type: 'SPEECH_STATE', id: 10_000, speaking: true },
      { type: 'SPEECH_STATE', id: 1, speaking: true },
    ] as const) {
      const r = await h.send(event);
      expect(r.ok ? undefined : r.error.code).toBe('NOT_ALLOWED_NOW');
      expect(r.ok ? undefined : r.error.customerText).toBeUndefined();
    }
    const after = await h.snapshot();
    expect(after.ok && after.value.seq).toBe(said.ok && said.value.seq);
  });
});

describe('speech output said by more than one page', () => {
  /** Pages on the terminal's headless bridge (the kiosk screen, a second browser page): each its own socket. */
  async function bridgePages(h: TerminalHost) {
    const dir = await makeStaticDir();
    opened.push(() => dir.cleanup());
    const bridge = await startBridge(h, { port: 0, staticDir: dir.staticDir });
    opened.push(() => bridge.close());
    let request = 0;
    return async () => {
      const outcome = await openSocket(bridge.port, `/ws?s=${bridge.secret}`, {
        ...ownHost(bridge.port),
        Origin: `http://127.0.0.1:${bridge.port}`,
      });
      if (!outcome.opened) throw new Error(`refused with ${outcome.status}`);
      const log = new SocketLog(outcome.socket);
      opened.push(() => Promise.resolve(log.socket.close()));
      return {
        /** The page's report on utterance `id` (SPEECH_STATE), answered. */
        says: async (id: number, speaking: boolean): Promise<void> => {
          request += 1;
          await log.ask(
            JSON.stringify({ id: request, method: 'send', params: { type: 'SPEECH_STATE', id, speaking } }),
            request,
          );
        },
        /** The page goes away (its socket closed), once the bridge has seen it go. */
        gone: async (): Promise<void> => {
          const closed = new Promise((r) => log.socket.once('close', r));
          log.socket.close();
          await closed;
        },
      };
    };
  }

  it('holds the result screen while any page still says it: another page’s end, or its going away, ends nothing', async () => {
    const h = await start();
    const page = await bridgePages(h);
    const kiosk = await page();
    const second = await page();
    // A page with no speech synthesis: it never says anything, and holds nothing.
    await page();
    const shown = await approvedSale(h);
    expect(shown.customer.screen).toBe('approved');
    const id = shown.customer.speech?.id ?? 0;

    await kiosk.says(id, true);
    await second.says(id, true);
    // The second page has said it all: the kiosk screen is still saying it.
    await second.says(id, false);
    expect(h.speech.speaking).toBe(true);
    // The second page says it again (its repeat key) and goes away meanwhile: it says nothing any more, the kiosk does.
    await second.says(id, true);
    await second.gone();
    await expect.poll(() => h.speech.speaking).toBe(true);
    expect(await screenOf(h)).toBe('approved');
    // The last page saying it has said it to the end: the result time runs.
    await kiosk.says(id, false);
    expect(h.speech.speaking).toBe(false);
  });

  it('takes one page’s end of what it says, however late, as that page’s only', async () => {
    const h = await start();
    const page = await bridgePages(h);
    const kiosk = await page();
    const second = await page();
    const shown = await approvedSale(h);
    const first = shown.customer.speech?.id ?? 0;
    await kiosk.says(first, true);
    // The repeat key: a new utterance, which the second page starts while the kiosk's end of the first is on its way.
    const repeated = await send(h, { type: 'SPEECH', command: 'repeat' });
    const next = repeated.customer.speech?.id ?? 0;
    expect(next).toBeGreaterThan(first);
    await second.says(next, true);
    await kiosk.says(next, false);
    expect(h.speech.speaking).toBe(true);
    await second.says(next, false);
    expect(h.speech.speaking).toBe(false);
  });
});
