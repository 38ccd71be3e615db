/**
 * The customer's time limits on a running terminal (issue 13, "Time"; WCAG 2.2.1): an input screen left alone asks
 * "Do you need more time?", a yes gives the time again, no answer returns to the attract screen; accessibility mode
 * doubles both limits and ends with the customer; typing the page keeps to itself (ACTIVITY) counts as an answer.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';

let host: TerminalHost | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await host?.close();
  host = undefined;
});

async function start(): Promise<TerminalHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-inactivity-'));
  host = await createTerminalHost(
    parseConfig({ customer: { inactivitySeconds: 45, moreTimeSeconds: 20, accessibilityFactor: 2 } }),
    { logger: silentLogger(), cwd },
  );
  await waitFor(host, ['idle'], 10_000);
  // Time runs as usual, and the test can jump it forward.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
  return host;
}

async function send(h: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
  return r.value;
}

async function now(h: TerminalHost): Promise<TerminalSnapshot['customer']> {
  const r = await h.snapshot();
  if (!r.ok) throw new Error(r.error.message);
  return r.value.customer;
}

/**
 * The customer asked "Do you need more time?" at the card screen answers yes and then presents the card: a fresh
 * activation reads it, the sale is approved and charged once.
 */
async function moreTimeThenCardFound(h: TerminalHost): Promise<void> {
  h.simulator!.setCard('n2-contact');
  const more = await send(h, { type: 'MORE_TIME' });
  expect(more.customer.screen).toBe('present-card');
  expect(more.customer.prompt).toBeUndefined();
  expect((await waitFor(h, ['approved', 'declined', 'error', 'idle'], 15_000)).customer.screen).toBe(
    'approved',
  );
  const sales = h.sandbox!.ledger().transactions;
  expect(sales).toHaveLength(1);
  expect(sales[0]?.requests).toHaveLength(1);
}

describe('time limits on the customer screens', () => {
  it('asks after the limit, gives more time on yes, and returns to the attract screen without an answer', async () => {
    const h = await start();
    expect((await send(h, { type: 'START' })).customer.screen).toBe('enter-ticket');
    await vi.advanceTimersByTimeAsync(44_000);
    expect((await now(h)).prompt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_500);
    const asked = await now(h);
    expect(asked.screen).toBe('enter-ticket');
    expect(asked.prompt).toMatchObject({ kind: 'more-time' });
    expect(asked.actions).toContain('MORE_TIME');

    const more = await send(h, { type: 'MORE_TIME' });
    expect(more.customer.prompt).toBeUndefined();
    expect(more.customer.screen).toBe('enter-ticket');

    await vi.advanceTimersByTimeAsync(46_000);
    expect((await now(h)).prompt).toBeDefined();
    await vi.advanceTimersByTimeAsync(21_000);
    const left = await now(h);
    expect(left.screen).toBe('idle');
    expect(left.prompt).toBeUndefined();
  }, 30_000);

  it('gives twice the time in accessibility mode, and forgets the mode when the customer is gone', async () => {
    const h = await start();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    expect((await send(h, { type: 'START' })).customer.accessibility).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await now(h)).prompt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(31_000);
    expect((await now(h)).prompt).toBeDefined();
    await vi.advanceTimersByTimeAsync(41_000);
    const back = await now(h);
    expect(back.screen).toBe('idle');
    expect(back.accessibility).toBeUndefined();
  }, 30_000);

  it('keeps the question away while the customer types on the page (ACTIVITY), and asks 45 s after the last key', async () => {
    const h = await start();
    expect((await send(h, { type: 'START' })).customer.screen).toBe('enter-ticket');
    // Three minutes of typing a long ticket number, told every 30 s: never a question, never back to the start.
    for (let typed = 0; typed < 6; typed += 1) {
      await vi.advanceTimersByTimeAsync(30_000);
      const seen = await now(h);
      expect(seen.screen).toBe('enter-ticket');
      expect(seen.prompt).toBeUndefined();
      expect((await send(h, { type: 'ACTIVITY' })).customer.screen).toBe('enter-ticket');
    }
    await vi.advanceTimersByTimeAsync(44_000);
    expect((await now(h)).prompt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_500);
    expect((await now(h)).prompt).toMatchObject({ kind: 'more-time' });
  }, 30_000);

  it('leaves the question to its own answer while it is asked, and publishes nothing for a key', async () => {
    const h = await start();
    await send(h, { type: 'START' });
    const published: TerminalSnapshot[] = [];
    const unsubscribe = h.subscribe((s) => published.push(s));
    await send(h, { type: 'ACTIVITY' });
    expect(published).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(45_500);
    const asked = await now(h);
    expect(asked.prompt).toMatchObject({ kind: 'more-time' });
    // A key while the dialog is up (a Tab between Yes and No) neither answers nor hides it.
    const count = published.length;
    const again = await send(h, { type: 'ACTIVITY' });
    expect(again.customer.prompt).toMatchObject({ kind: 'more-time' });
    expect(again.customer.actions).toContain('MORE_TIME');
    expect(published).toHaveLength(count);
    unsubscribe();
    // Its own answer does.
    expect((await send(h, { type: 'MORE_TIME' })).customer.prompt).toBeUndefined();
  }, 30_000);

  it('refuses ACTIVITY out of service without a word, where a press is refused aloud', async () => {
    const h = await start();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    h.outOfService('test');
    const pressed = await h.send({ type: 'START' });
    expect(!pressed.ok && pressed.error.code).toBe('OUT_OF_SERVICE');
    expect(!pressed.ok && pressed.error.customerText).toBeTruthy();
    const before = await h.snapshot();
    const typed = await h.send({ type: 'ACTIVITY' });
    expect(!typed.ok && typed.error.code).toBe('OUT_OF_SERVICE');
    expect(!typed.ok && typed.error.customerText).toBeUndefined();
    const after = await h.snapshot();
    expect(after.ok && after.value.seq).toBe(before.ok && before.value.seq);
  }, 30_000);

  it('refuses "more time" when nothing was asked', async () => {
    const h = await start();
    const r = await h.send({ type: 'MORE_TIME' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('NOT_ALLOWED_NOW');
  }, 30_000);
});

describe('time limits on the currency choice', () => {
  /** An attended terminal pricing in EUR: the simulator's N2 card gets a conversion offer (host-dcc.test.ts). */
  async function startConverting(): Promise<TerminalHost> {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-inactivity-dcc-'));
    host = await createTerminalHost(
      parseConfig({
        terminal: {
          model: 'attended',
          currency: 'EUR',
          country: 'DE',
          countryNumeric: '276',
          timezone: 'Europe/Berlin',
        },
        reader: { sim: { card: 'n2-contact', presentDelayMs: 50 } },
        customer: { inactivitySeconds: 45, moreTimeSeconds: 20, accessibilityFactor: 2 },
      }),
      { logger: silentLogger(), cwd },
    );
    await waitFor(host, ['idle'], 10_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    return host;
  }

  it('gives the choice the longer time of accessibility mode, asks before it ends, and sends nothing unanswered', async () => {
    const h = await startConverting();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_AMOUNT', minor: 1_250 });
    await send(h, { type: 'CONFIRM' });
    expect(
      (await waitFor(h, ['choose-currency', 'approved', 'declined', 'error'], 15_000)).customer.screen,
    ).toBe('choose-currency');
    // Rate, markup and the disclaimer read out take time: the choice is not taken away after the reader's time.
    await vi.advanceTimersByTimeAsync(66_000);
    const reading = await now(h);
    expect(reading.screen).toBe('choose-currency');
    expect(reading.prompt).toBeUndefined();
    // Twice the 45 s of silence: "Do you need more time?", and a yes gives the time again.
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await now(h)).prompt).toMatchObject({ kind: 'more-time' });
    const more = await send(h, { type: 'MORE_TIME' });
    expect(more.customer.screen).toBe('choose-currency');
    expect(more.customer.prompt).toBeUndefined();
    // Nobody answers the next question: the choice is cancelled, nothing is sent, the card is let go.
    await vi.advanceTimersByTimeAsync(91_000);
    expect((await now(h)).prompt).toMatchObject({ kind: 'more-time' });
    await vi.advanceTimersByTimeAsync(41_000);
    expect((await now(h)).screen).toBe('idle');
    expect(h.sandbox!.ledger().transactions).toEqual([]);
    expect(h.cards.size).toBe(0);
  }, 30_000);

  it("gives the meter's choice again at completion the same time: the machine never takes it away before the question", async () => {
    const clock = { offsetMs: 0 };
    const cwd = mkdtempSync(join(tmpdir(), 'pt-inactivity-meter-dcc-'));
    host = await createTerminalHost(
      parseConfig({
        terminal: {
          model: 'meter',
          currency: 'EUR',
          country: 'DE',
          countryNumeric: '276',
          timezone: 'Europe/Berlin',
        },
        reader: { sim: { card: 'n2-contact', presentDelayMs: 50 } },
        dcc: { choiceAtCompletion: true },
        customer: { inactivitySeconds: 45, moreTimeSeconds: 20, accessibilityFactor: 2 },
      }),
      { logger: silentLogger(), cwd, parkingClock: { now: () => Date.now() + clock.offsetMs } },
    );
    const h = host;
    await waitFor(h, ['idle'], 10_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await send(h, { type: 'START' });
    await send(h, { type: 'CHOOSE_DURATION', minutes: 120 });
    await send(h, { type: 'CONFIRM' });
    expect((await waitFor(h, ['choose-currency', 'session', 'error'], 15_000)).customer.screen).toBe(
      'choose-currency',
    );
    await send(h, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitFor(h, ['session', 'declined', 'error'], 15_000)).customer.screen).toBe('session');
    clock.offsetMs = 45 * 60_000;
    await send(h, { type: 'END_SESSION' });
    const choice = await waitFor(h, ['choose-currency', 'approved', 'declined', 'error'], 15_000);
    expect(choice.customer.screen).toBe('choose-currency');
    expect(choice.customer.accessibility).toBe(true);
    // The fee in both currencies, the rate, the markup and the disclaimer read out: past the reader's time, the
    // choice is still the customer's, and nothing has asked or moved on.
    await vi.advanceTimersByTimeAsync(66_000);
    const reading = await now(h);
    expect(reading.screen).toBe('choose-currency');
    expect(reading.prompt).toBeUndefined();
    // Twice the 45 s of silence: "Do you need more time?", and a yes gives the time again.
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await now(h)).prompt).toMatchObject({ kind: 'more-time' });
    expect((await send(h, { type: 'MORE_TIME' })).customer.screen).toBe('choose-currency');
    await vi.advanceTimersByTimeAsync(66_000);
    expect((await now(h)).screen).toBe('choose-currency');
    // Nobody answers the next question: the choice is cancelled, never converted (the fee is asked in EUR).
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await now(h)).prompt).toMatchObject({ kind: 'more-time' });
    await vi.advanceTimersByTimeAsync(41_000);
    expect((await now(h)).screen).not.toBe('choose-currency');
    expect(h.sandbox!.ledger().transactions.filter((t) => t.kind === 'capture')).toEqual([]);
  }, 30_000);

  it('never sends an offer that expired during a long choice: a fresh one is shown and authorized', async () => {
    const h = await startConverting();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_AMOUNT', minor: 1_250 });
    await send(h, { type: 'CONFIRM' });
    const first = await waitFor(h, ['choose-currency', 'approved', 'declined', 'error'], 15_000);
    expect(first.customer.screen).toBe('choose-currency');
    const firstExpiry = Date.parse(first.customer.dcc?.expiresAt ?? '');
    // The customer has the screen read out again and again and answers every "Do you need more time?" with yes,
    // past the offer's expiry (the sandbox's offers live 10 minutes).
    while (Date.now() < firstExpiry + 1_000) {
      await vi.advanceTimersByTimeAsync(30_000);
      // A fresh offer asked for at the expiry is a real request to the sandbox: the clock jumps no further until it is
      // on screen, or the jumps alone would run out the request's time on a loaded machine (30 s of headers).
      await waitFor(h, ['choose-currency'], 15_000);
      if ((await now(h)).prompt !== undefined) await send(h, { type: 'MORE_TIME' });
    }
    const renewed = await now(h);
    expect(renewed.screen).toBe('choose-currency');
    await send(h, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    const done = await waitFor(h, ['approved', 'declined', 'error'], 15_000);
    // The gateway refuses an authorization against an expired offer (src/sandbox/dcc.ts): the customer would start again.
    expect(done.customer.screen).toBe('approved');
    expect(renewed.message).toBe('The exchange rate has been updated: check both amounts before you choose');
    // Read out as well: the rate the customer heard before is not the one on screen now.
    expect(renewed.speech?.screen).toContain('The exchange rate has been updated');
    expect(Date.parse(renewed.dcc?.expiresAt ?? '')).toBeGreaterThan(firstExpiry);
    expect(h.dcc.exchanges().map((e) => [e.amountMinor, e.status])).toEqual([
      [1_250, 'PENDING'],
      [1_250, 'PENDING'],
    ]);
    const [tx, ...others] = h.sandbox!.ledger().transactions;
    expect(others).toEqual([]);
    expect(tx).toMatchObject({ kind: 'sale', status: 'AUTHORIZED', currency: 'JPY' });
    expect(tx?.amounts.requested).toBe(renewed.dcc?.card.minor);
    // The receipt states the terms the customer accepted on the renewed screen.
    expect(done.customer.receipt?.lines).toEqual(
      expect.arrayContaining([{ label: 'Transaction amount (JPY)', value: renewed.dcc?.card.text }]),
    );
  }, 30_000);
});

describe('time limits on the card presentation', () => {
  /** Pay station on the embedded defaults; the simulated reader sees no card until the test puts one in its field. */
  async function startKiosk(): Promise<TerminalHost> {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-inactivity-card-'));
    host = await createTerminalHost(
      parseConfig({
        reader: { activateTimeoutSeconds: 60, sim: { card: 'no-card' } },
        customer: { inactivitySeconds: 45, moreTimeSeconds: 20, accessibilityFactor: 2 },
      }),
      { logger: silentLogger(), cwd },
    );
    await waitFor(host, ['idle'], 10_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    return host;
  }

  function ticketEnteredMinutesAgo(minutes: number): string {
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/London',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(Date.now() - minutes * 60_000));
    const g = (t: string): string => local.find((x) => x.type === t)?.value ?? '00';
    return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}01`;
  }

  async function presentCard(h: TerminalHost): Promise<void> {
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_TICKET', ticket: ticketEnteredMinutesAgo(95) });
    expect((await waitFor(h, ['confirm'], 10_000)).customer.screen).toBe('confirm');
    await send(h, { type: 'CONFIRM' });
    expect((await waitFor(h, ['present-card'], 10_000)).customer.screen).toBe('present-card');
  }

  /** Jumps time forward 5 s at a time until the question is asked or the screen changes. */
  async function untilAskedOrGone(h: TerminalHost): Promise<TerminalSnapshot['customer']> {
    for (let waited = 0; waited < 600_000; waited += 5_000) {
      const seen = await now(h);
      if (seen.prompt !== undefined || seen.screen !== 'present-card') return seen;
      await vi.advanceTimersByTimeAsync(5_000);
    }
    return now(h);
  }

  /** Waits as {@link untilAskedOrGone} and checks that "Do you need more time?" came while the card was awaited. */
  async function askedAtCardScreen(h: TerminalHost): Promise<TerminalSnapshot['customer']> {
    const asked = await untilAskedOrGone(h);
    expect(asked.screen).toBe('present-card');
    expect(asked.prompt).toMatchObject({ kind: 'more-time' });
    return asked;
  }

  /** Jumps time forward 5 s at a time until the card is no longer awaited: the screen that follows. */
  async function untilGone(h: TerminalHost): Promise<TerminalSnapshot['customer']> {
    for (let waited = 0; waited < 600_000; waited += 5_000) {
      const seen = await now(h);
      if (seen.screen !== 'present-card') return seen;
      await vi.advanceTimersByTimeAsync(5_000);
    }
    return now(h);
  }

  it('asks "Do you need more time?" in accessibility mode before the reader stops, and a yes reads the card found later', async () => {
    const h = await startKiosk();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await presentCard(h);
    // Longer than the reader's configured 60 s: a blind customer is still looking for the reader.
    await vi.advanceTimersByTimeAsync(70_000);
    expect((await now(h)).screen).toBe('present-card');
    const asked = await askedAtCardScreen(h);
    expect(asked.actions).toContain('MORE_TIME');
    // Spoken as well as shown (WCAG 2.2.1: more than one sensory channel).
    expect(asked.speech?.text).toContain('Do you need more time?');
    // The customer answers yes, then finds the reader: a fresh activation reads the card, charged once.
    await moreTimeThenCardFound(h);
    // The customer is done: the card read is let go, and none of the aborted activation was ever kept.
    expect((await send(h, { type: 'DONE' })).customer.screen).toBe('idle');
    expect(h.cards.size).toBe(0);
  }, 30_000);

  it('cancels the sale without an answer in accessibility mode: nothing is sent and no card is kept', async () => {
    const h = await startKiosk();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await presentCard(h);
    await askedAtCardScreen(h);
    // The question ends the sale (CANCEL: the attract screen) before the reader gives up.
    expect((await untilGone(h)).screen).toBe('idle');
    expect(h.sandbox!.ledger().transactions).toEqual([]);
    expect(h.cards.size).toBe(0);
  }, 30_000);

  it("keeps the question within the reader's wait when the customer changes the language while the card is awaited", async () => {
    const h = await startKiosk();
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await presentCard(h);
    await vi.advanceTimersByTimeAsync(30_000);
    await send(h, { type: 'SET_LANGUAGE', locale: 'de_DE' });
    await askedAtCardScreen(h);
    // Unanswered, the question ends the sale (CANCEL: the attract screen), not the reader giving up under it.
    expect((await untilGone(h)).screen).toBe('idle');
  }, 30_000);

  it('gives the longer wait to a customer who turns accessibility mode on while the card is awaited', async () => {
    const h = await startKiosk();
    await presentCard(h);
    await vi.advanceTimersByTimeAsync(30_000);
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    // Past the end of the first activation: the reader was activated afresh with the wait of accessibility mode.
    await vi.advanceTimersByTimeAsync(45_000);
    expect((await now(h)).screen).toBe('present-card');
    await askedAtCardScreen(h);
  }, 30_000);

  it('asks "Do you need more time?" without accessibility mode too, before the reader stops, and a yes reads the card found later', async () => {
    const h = await startKiosk();
    await presentCard(h);
    // WCAG 2.2.1 applies to every customer: no unannounced end of the reader's wait.
    const asked = await askedAtCardScreen(h);
    expect(asked.actions).toContain('MORE_TIME');
    await moreTimeThenCardFound(h);
    expect((await send(h, { type: 'DONE' })).customer.screen).toBe('idle');
    expect(h.cards.size).toBe(0);
  }, 30_000);

  it('never asks while a card detected just before the question is being read: the read ends, approved, with no question', async () => {
    const h = await startKiosk();
    // The card comes 59 s into the reader's wait and takes 1.5 s to read: the question, due at 60 s, falls in the read.
    h.simulator!.setCard('slow');
    h.simulator!.setPresentDelay(59_000);
    const asked: TerminalSnapshot['customer'][] = [];
    const unsubscribe = h.subscribe((s) => {
      if (s.customer.prompt !== undefined) asked.push(s.customer);
    });
    await presentCard(h);
    await vi.advanceTimersByTimeAsync(62_000);
    const done = await waitFor(h, ['approved', 'declined', 'error', 'idle'], 15_000);
    unsubscribe();
    expect(asked.map((c) => [c.screen, c.prompt?.kind])).toEqual([]);
    expect(done.customer.screen).toBe('approved');
    const sales = h.sandbox!.ledger().transactions;
    expect(sales).toHaveLength(1);
    expect(sales[0]?.requests).toHaveLength(1);
  }, 30_000);

  it('reads on a card being read when the customer turns accessibility mode on: no fresh activation breaks it off', async () => {
    const h = await startKiosk();
    h.simulator!.setCard('slow');
    h.simulator!.setPresentDelay(10_000);
    await presentCard(h);
    const activations = (): number =>
      h.simulator!.received.filter((f) => f.cmd === 0x02 && f.sub === 0x01).length;
    expect(activations()).toBe(1);
    // The card is detected at 10 s and read until 11.5 s; accessibility mode comes on in the middle.
    await vi.advanceTimersByTimeAsync(10_500);
    expect((await send(h, { type: 'SET_ACCESSIBILITY', on: true })).customer.screen).toBe('present-card');
    expect((await waitFor(h, ['approved', 'declined', 'error', 'idle'], 15_000)).customer.screen).toBe(
      'approved',
    );
    expect(activations()).toBe(1);
    expect(h.simulator!.received.filter((f) => f.cmd === 0x05)).toEqual([]);
  }, 30_000);

  it('asks "Do you need more time?" after a chip card swiped was refused, and ends the sale unanswered: nothing sent, no card kept', async () => {
    const h = await startKiosk();
    // The customer swipes a chip card (refused: "This card has a chip"), then walks away: no card at the next activation.
    h.simulator!.setCard('chip-swiped-fallback');
    const unsubscribe = h.subscribe((s) => {
      if (s.customer.message.startsWith('This card has a chip')) h.simulator!.setCard('no-card');
    });
    await presentCard(h);
    await expect.poll(async () => (await now(h)).message).toMatch(/^This card has a chip/);
    unsubscribe();
    const asked = await askedAtCardScreen(h);
    expect(asked.actions).toContain('MORE_TIME');
    // The unanswered question ends the sale (CANCEL: the attract screen) before the reader gives up.
    expect((await untilGone(h)).screen).toBe('idle');
    expect(h.sandbox!.ledger().transactions).toEqual([]);
    expect(h.cards.size).toBe(0);
  }, 30_000);

  it('cancels the sale without an answer without accessibility mode: nothing is sent, no card kept, the reader ready', async () => {
    const h = await startKiosk();
    await presentCard(h);
    await askedAtCardScreen(h);
    // The unanswered question ends the sale (CANCEL: the attract screen) before the reader gives up.
    expect((await untilGone(h)).screen).toBe('idle');
    expect(h.sandbox!.ledger().transactions).toEqual([]);
    expect(h.cards.size).toBe(0);
    // The reader confirms the Cancel of the sale's activation a moment after the screen has moved on.
    await expect
      .poll(async () => {
        const status = await h.snapshot();
        return status.ok && status.value.status.reader.health;
      })
      .toBe('ready');
  }, 30_000);
});
