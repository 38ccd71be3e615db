import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VIRTUAL_CARDS } from '../../devices/sim/cards.js';
import { scanForCardData } from '../crash/card-scan.js';
import type { GatewayClient } from '../../src/gateway/index.js';
import type { Receipt, ReceiptLine, TerminalSnapshot } from '../../src/host/api.js';
import { openTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { RECEIPT_LABELS } from '../../src/host/receipts.js';
import { CATALOGUES } from '../../src/i18n/index.js';
import { HoldStore, openJournal } from '../../src/journal/index.js';
import {
  fingerprintKeyPath,
  REPLACE_FINGERPRINT_KEY_COMMAND,
  replaceFingerprintKey,
} from '../../src/host/keys.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { PaymentRouter } from '../../src/host/payment-router.js';
import { feeShortfalls } from '../../src/host/fee-shortfalls.js';
import { feeBetween } from '../../src/flows/index.js';
import { freePort, hostedPageAnswer } from './link-harness.js';
import { ParkingClock, modelConfig, refusedUnprocessed, sendEvent, waitForScreen } from './models-harness.js';

/**
 * A tap-and-go terminal interrupted between the outcome that settles a hold's authorization (the exit's capture, the
 * expiry's reversal) and the end of the hold, then restarted on the same journal against the same (standalone)
 * sandbox. The crash is simulated by making the hold's own close do nothing in the interrupted process: what was
 * committed with the outcome is all that survives. The restarted terminal must hold nothing open for that
 * authorization: no second capture at a second tap, no payment link for a fee already paid, no reversal at expiry.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** 45 minutes cost 3.00 (captured below the 5.98 hold); the maximum stay is 1,440 minutes. */
const STAY_MS = 45 * 60_000;
const PAST_MAX_STAY_MS = 1_441 * 60_000;

interface Lane {
  sandbox: Sandbox;
  clock: ParkingClock;
  cwd: string;
  /** Built and started: recovery has finished and the idle screen is up. */
  open(): Promise<TerminalHost>;
  /** Built, not started yet (`begin`): its gateway client can be watched before the first request. */
  build(): Promise<TerminalHost>;
}

/**
 * `shortGatewayWait`: one attempt of at most 2.2 s per request, which is then also how long a machine waits for an
 * answer before it gives up (`submitTimeoutMs`, src/flows/settings.ts).
 */
async function lane(
  options: { payLater?: boolean; shortGatewayWait?: boolean; payByPhone?: boolean } = {},
): Promise<Lane> {
  const { payLater = false, shortGatewayWait = false, payByPhone = false } = options;
  // Pay by phone is offered only while the terminal receives the link-paid notifications: the sandbox sends them to
  // the terminal's listener, on a port of its own that every terminal of the lane listens on.
  const notificationPort = payByPhone ? await freePort() : undefined;
  const sandbox = await startSandbox({
    logger: silentLogger(),
    ...(notificationPort !== undefined
      ? { webhookUrl: `http://127.0.0.1:${notificationPort}/payment-links/notifications` }
      : {}),
  });
  cleanups.push(() => sandbox.close());
  const cwd = mkdtempSync(join(tmpdir(), 'pt-tap-restart-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const config = modelConfig('tap-and-go', {
    tariff: { tapAndGoHoldMinor: 598 },
    links: {
      ...(payLater ? { payLater: true } : {}),
      ...(notificationPort !== undefined
        ? {
            payByPhone: { models: ['tap-and-go' as const] },
            notifications: { listen: { port: notificationPort } },
          }
        : {}),
    },
    ...(shortGatewayWait
      ? {
          gateway: {
            timeouts: { connectMs: 200, headersMs: 1_000, bodyMs: 1_000 },
            retry: { maxAttempts: 1 },
          },
        }
      : {}),
  });
  const clock = new ParkingClock();
  const build = (): Promise<TerminalHost> =>
    openTerminalHost(config, {
      logger: silentLogger(),
      cwd,
      parkingClock: clock,
      gatewayUrlOverride: sandbox.url,
    });
  return {
    sandbox,
    clock,
    cwd,
    build,
    open: async () => {
      const host = await build();
      try {
        await host.begin();
      } catch (e) {
        await host.close();
        throw e;
      }
      await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
      return host;
    },
  };
}

/**
 * The n2-contact card taps at the exit again, five minutes after the stay: the screen it ends on (`what` names the
 * wait).
 */
async function tapsAgainAtExit(l: Lane, host: TerminalHost, what: string): Promise<TerminalSnapshot> {
  host.simulator!.setCard('n2-contact');
  l.clock.offsetMs = STAY_MS + 5 * 60_000;
  await sendEvent(host, { type: 'TAP_EXIT' });
  return waitForScreen(
    host,
    (s) => ['approved', 'declined', 'error', 'pay-by-phone'].includes(s.customer.screen),
    what,
  );
}

/**
 * A car enters with the n2-contact card in a terminal that then stops; the lane's clock is moved past the maximum stay,
 * so that the next terminal's expiry watch reverses the hold at once. Returns the lane and the hold's id.
 */
async function enteredThenPastMaxStay(
  options: Parameters<typeof lane>[0] = {},
): Promise<{ l: Lane; holdId: string }> {
  const l = await lane(options);
  const first = await l.open();
  const holdId = await enter(first);
  await first.close();
  l.clock.offsetMs = PAST_MAX_STAY_MS;
  return { l, holdId };
}

/**
 * A car enters in a terminal that then stops; past the maximum stay, the next terminal's expiry reversal reaches the
 * gateway and its answer is lost, and every reversal after it is lost before the gateway until the faults are cleared:
 * the expiry watch hands the hold back with its reversal unknown (recovery's to resolve). Returns the lane, the hold's
 * id and that running terminal.
 */
async function expiryReversalUnknown(): Promise<{ l: Lane; holdId: string; second: TerminalHost }> {
  const l = await lane();
  const first = await l.open();
  const holdId = await enter(first);
  await first.close();
  l.sandbox.scheduleFaults([
    { kind: 'reset-after-commit', path: '/reversals' },
    ...Array.from({ length: 200 }, () => ({ kind: 'reset-before-commit' as const, path: '/reversals' })),
  ]);
  l.clock.offsetMs = PAST_MAX_STAY_MS;
  const second = await l.open();
  cleanups.push(() => second.close());
  await until(
    () =>
      second.holds.unclaimed().some((h) => h.holdId === holdId) &&
      second.journal.referencing(holdId).some((e) => e.service === 'reversal' && e.state === 'unknown'),
    'the hold handed back with its reversal unknown',
  );
  return { l, holdId, second };
}

/** A car enters with the n2-contact card; returns its hold's id (the pre-authorization's transactionId). */
async function enter(host: TerminalHost): Promise<string> {
  host.simulator!.setCard('n2-contact');
  await sendEvent(host, { type: 'TAP_ENTRY' });
  await waitForScreen(host, (s) => s.customer.screen === 'session', 'entry');
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  const [hold] = host.holds.unclaimed();
  if (!hold) throw new Error('no hold after the entry');
  return hold.holdId;
}

/** The journal's requests for an authorization, `service:state` (resolution attempts included). */
function sentFor(host: TerminalHost, transactionId: string): string[] {
  return host.journal.referencing(transactionId).map((e) => `${e.service}:${e.state}`);
}

/** The simulated crash: the hold's own close (the machine's closeHold, the expiry watch's close) never runs. */
function holdCloseNeverRuns(): () => void {
  const { close, drop } = HoldStore.prototype;
  HoldStore.prototype.close = () => undefined;
  HoldStore.prototype.drop = () => false;
  return () => {
    HoldStore.prototype.close = close;
    HoldStore.prototype.drop = drop;
  };
}

/** The reason the tap-and-go machine gives for what it shows. */
function reasonOf(host: TerminalHost): unknown {
  return (host.actor?.getSnapshot() as { context?: { reason?: unknown } } | undefined)?.context?.reason;
}

/** Waits until `done` holds (a real host runs its watch, requests and recovery on its own). */
async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function exitPaid(host: TerminalHost): Promise<TerminalSnapshot> {
  host.simulator!.setCard('n2-contact');
  await sendEvent(host, { type: 'TAP_EXIT' });
  return waitForScreen(host, (s) => s.customer.screen === 'approved', 'exit paid');
}

describe('tap-and-go: a restart after the outcome that settles a hold', () => {
  it('leaves a hold captured just before the crash closed: a second tap sends nothing for it and shows what was paid', async () => {
    const l = await lane({ payLater: true });
    const first = await l.open();
    const holdId = await enter(first);
    const restore = holdCloseNeverRuns();
    try {
      l.clock.offsetMs = STAY_MS;
      await exitPaid(first);
      expect(sentFor(first, holdId)).toEqual(['capture:approved']);
    } finally {
      restore();
    }
    await first.close();

    const second = await l.open();
    cleanups.push(() => second.close());
    expect(second.holds.unclaimed()).toEqual([]);
    // The customer whose gate did not open taps again.
    const shown = await tapsAgainAtExit(l, second, 'second exit');
    // The exit was paid: it is shown so again (the gate opens), with no second capture and no payment link (pay
    // later) for the fee already captured.
    expect({
      screen: shown.customer.screen,
      reason: reasonOf(second),
      sent: sentFor(second, holdId),
    }).toEqual({
      screen: 'approved',
      reason: 'ALREADY_PAID',
      sent: ['capture:approved'],
    });
    expect(
      l.sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured),
    ).toEqual([300]);
    // Like any paid exit: the amount captured for the stay, and its receipt (the capture's), the card as its last four
    // digits only.
    const capture = second.journal.referencing(holdId).find((e) => e.service === 'capture');
    expect(shown.customer.amount).toMatchObject({ minor: 300, currency: 'GBP' });
    expect(shown.customer.receipt?.lines).toEqual(
      expect.arrayContaining([
        { label: RECEIPT_LABELS.amount, value: shown.customer.amount?.text },
        { label: RECEIPT_LABELS.transaction, value: capture?.transactionId },
      ]),
    );
    const card = shown.customer.receipt?.lines.find((line) => line.label === RECEIPT_LABELS.card);
    expect(card?.value).toMatch(/0119$/);
    expect(JSON.stringify(shown.customer)).not.toContain('4761739001010119');
  });

  it('does not reverse at expiry an authorization captured just before the crash', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    const restore = holdCloseNeverRuns();
    try {
      l.clock.offsetMs = STAY_MS;
      await exitPaid(first);
    } finally {
      restore();
    }
    await first.close();

    // Restarted after the maximum stay: a hold still open would be reversed at once.
    l.clock.offsetMs = PAST_MAX_STAY_MS;
    const second = await l.open();
    cleanups.push(() => second.close());
    await new Promise((res) => setTimeout(res, 300));
    expect(second.holds.size).toBe(0);
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
    const capture = l.sandbox.ledger().transactions.find((t) => t.kind === 'capture');
    expect({ captured: capture?.amounts.captured, voided: capture?.voided }).toEqual({
      captured: 300,
      voided: false,
    });
  });

  it('does not reverse twice a hold whose expiry reversal was approved just before the crash', async () => {
    // The hold expires in the next process, which dies once the reversal's outcome is committed.
    const { l, holdId } = await enteredThenPastMaxStay();
    const restore = holdCloseNeverRuns();
    try {
      const second = await l.open();
      const deadline = Date.now() + 10_000;
      while (!sentFor(second, holdId).includes('reversal:approved')) {
        if (Date.now() > deadline) throw new Error(`no reversal: ${sentFor(second, holdId).join(', ')}`);
        await new Promise((res) => setTimeout(res, 10));
      }
      await second.close();
    } finally {
      restore();
    }

    const third = await l.open();
    cleanups.push(() => third.close());
    await new Promise((res) => setTimeout(res, 300));
    expect(third.holds.size).toBe(0);
    expect(sentFor(third, holdId)).toEqual(['reversal:approved']);
    // The car is still inside: its exit charges the stay by a sale, and sends nothing more for the hold.
    third.simulator!.setCard('n2-contact');
    await sendEvent(third, { type: 'TAP_EXIT' });
    await waitForScreen(third, (s) => s.customer.screen === 'approved', 'the stay charged by a sale');
    expect(reasonOf(third)).toBe('OVERSTAY_SALE');
    expect(sentFor(third, holdId)).toEqual(['reversal:approved']);
  });

  it('drops at start a hold an earlier version left open after its capture', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    l.clock.offsetMs = STAY_MS;
    await exitPaid(first);
    await first.close();
    // What a crash between the capture's outcome and the hold's close left with a version that closed them apart.
    const db = new Database(join(l.cwd, 'var/journal.db'));
    db.prepare('UPDATE holds SET closed_at = NULL, resolution = NULL WHERE hold_id = ?').run(holdId);
    db.close();

    l.clock.offsetMs = PAST_MAX_STAY_MS;
    const second = await l.open();
    cleanups.push(() => second.close());
    expect(second.holds.size).toBe(0);
    expect(second.journal.db.prepare('SELECT resolution FROM holds WHERE hold_id = ?').get(holdId)).toEqual({
      resolution: 'dropped',
    });
    await new Promise((res) => setTimeout(res, 300));
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_EXIT' });
    // Dropped with its capture standing, within the maximum stay of that capture: the exit was paid, and is shown so
    // again, with nothing sent.
    await waitForScreen(second, (s) => s.customer.screen === 'approved', 'the exit shown paid');
    expect(reasonOf(second)).toBe('ALREADY_PAID');
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
  });

  it('keeps at start a hold whose authorization nothing has settled, and captures it at the exit', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    await first.close();

    const second = await l.open();
    cleanups.push(() => second.close());
    expect(second.holds.unclaimed().map((h) => h.holdId)).toEqual([holdId]);
    expect(second.journal.db.prepare('SELECT resolution FROM holds WHERE hold_id = ?').get(holdId)).toEqual({
      resolution: null,
    });
    expect(sentFor(second, holdId)).toEqual([]);
    // The car that entered before the restart leaves by card after it: the capture of its EMV contact
    // pre-authorization repeats the tags kept in the journal, the card read of the entry being gone.
    l.clock.offsetMs = STAY_MS;
    await exitPaid(second);
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
    expect(second.holds.size).toBe(0);
  });

  it('refuses a start whose card fingerprint key file holds no key, and captures the stay at the exit once it is restored', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    const keyFile = resolve(l.cwd, dirname(first.config.journal.path), 'fingerprint.key');
    await first.close();
    const key = readFileSync(keyFile, 'utf8');

    // Cut short (a disk that lost its last write, a bad copy): a new key would match no stay of the journal.
    writeFileSync(keyFile, '', { mode: 0o600 });
    await expect(l.build()).rejects.toMatchObject({
      code: 'JOURNAL_KEY',
      message: expect.stringContaining(keyFile) as string,
    });
    expect(readFileSync(keyFile, 'utf8')).toBe('');

    writeFileSync(keyFile, key, { mode: 0o600 });
    const second = await l.open();
    cleanups.push(() => second.close());
    l.clock.offsetMs = STAY_MS;
    await exitPaid(second);
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
  });

  it('refuses a start whose fingerprint key file is missing under an open stay, naming the command; once the operator has written a new key the start goes on and the stay is released at its expiry', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    const journalPath = resolve(l.cwd, first.config.journal.path);
    const keyFile = fingerprintKeyPath(journalPath);
    const tariff = first.config.tariff;
    await first.close();

    rmSync(keyFile);
    await expect(l.build()).rejects.toMatchObject({
      code: 'JOURNAL_KEY',
      message: expect.stringContaining(REPLACE_FINGERPRINT_KEY_COMMAND) as string,
    });
    expect(existsSync(keyFile)).toBe(false);

    // What `offline replace-fingerprint-key --confirm` runs, under the journal's sender lock.
    const journal = openJournal(journalPath);
    try {
      journal.acquireSenderLock('parking-terminal offline replace-fingerprint-key');
      const replaced = replaceFingerprintKey(journal, {
        keyFile,
        settings: { tariff },
        confirm: () => undefined,
      });
      expect(replaced.openStays.map((s) => s.holdId)).toEqual([holdId]);
    } finally {
      journal.close();
    }

    l.clock.offsetMs = PAST_MAX_STAY_MS;
    const second = await l.open();
    cleanups.push(() => second.close());
    await until(
      () => !second.holds.has(holdId) && sentFor(second, holdId).includes('reversal:approved'),
      'the stay released at its expiry',
    );
  });
});

/** A receipt's lines that the journal must give back after a restart: what the issuer and the card said. */
const DURABLE_RECEIPT_LABELS = [
  RECEIPT_LABELS.application,
  RECEIPT_LABELS.aid,
  RECEIPT_LABELS.entry,
  RECEIPT_LABELS.verification,
  RECEIPT_LABELS.approvalCode,
];

function durableLines(receipt: Receipt | undefined): ReceiptLine[] {
  return (receipt?.lines ?? []).filter((line) => DURABLE_RECEIPT_LABELS.includes(line.label));
}

describe('tap-and-go: the receipt of a paid exit issued again after a restart', () => {
  it("shows the approval code and the card's application of the first receipt, read from the journal", async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    const restore = holdCloseNeverRuns();
    let firstReceipt: Receipt | undefined;
    try {
      l.clock.offsetMs = STAY_MS;
      firstReceipt = (await exitPaid(first)).customer.receipt;
    } finally {
      restore();
    }
    await first.close();
    // The first receipt states them all: the issuer's code of the authorization, and the card's application.
    expect(durableLines(firstReceipt).map((line) => line.label)).toEqual(DURABLE_RECEIPT_LABELS);
    const approvalCode = durableLines(firstReceipt).find(
      (line) => line.label === RECEIPT_LABELS.approvalCode,
    );
    const authorization = l.sandbox.ledger().transactions.find((t) => t.kind === 'authorization');
    expect(approvalCode?.value).toBe(authorization?.id.slice(-6));

    const second = await l.open();
    cleanups.push(() => second.close());
    const shown = await tapsAgainAtExit(l, second, 'second exit');
    expect({ screen: shown.customer.screen, reason: reasonOf(second) }).toEqual({
      screen: 'approved',
      reason: 'ALREADY_PAID',
    });
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
    expect(durableLines(shown.customer.receipt)).toEqual(durableLines(firstReceipt));
    // What the journal keeps for it is no card data (rule 4).
    await second.close();
    expect(scanForCardData(l.cwd).findings).toEqual([]);
  });

  it('states the approval code and the application of an authorization made before the restart on its capture', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    await first.close();

    const second = await l.open();
    cleanups.push(() => second.close());
    l.clock.offsetMs = STAY_MS;
    const { receipt } = (await exitPaid(second)).customer;
    expect(sentFor(second, holdId)).toEqual(['capture:approved']);
    const authorization = l.sandbox.ledger().transactions.find((t) => t.kind === 'authorization');
    const presented = VIRTUAL_CARDS['n2-contact']?.outcome;
    const card = presented?.kind === 'read' ? presented.card : undefined;
    expect(durableLines(receipt)).toEqual(
      expect.arrayContaining([
        { label: RECEIPT_LABELS.application, value: card?.label },
        { label: RECEIPT_LABELS.aid, value: card?.aid },
        { label: RECEIPT_LABELS.approvalCode, value: authorization?.id.slice(-6) },
      ]),
    );
  });
});

describe('tap-and-go: a hold whose expiry reversal has an unknown outcome', () => {
  it('is claimed by no exit until recovery resolves the reversal, and is closed once it stood', async () => {
    // The expiry watch gave up and handed the hold back with the reversal unknown (recovery's to resolve).
    const { l, holdId, second } = await expiryReversalUnknown();

    // The customer taps at the exit meanwhile, reading Arabic with speech on: the hold is being settled, nothing is
    // captured, and the screen and the speech say so in the customer's language.
    await sendEvent(second, { type: 'SET_LANGUAGE', locale: 'ar_AE' });
    await sendEvent(second, { type: 'SET_ACCESSIBILITY', on: true });
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_EXIT' });
    const shown = await waitForScreen(
      second,
      (s) => ['approved', 'declined', 'error', 'pay-by-phone'].includes(s.customer.screen),
      'exit while the reversal is unknown',
    );
    expect({
      screen: shown.customer.screen,
      reason: reasonOf(second),
      captures: sentFor(second, holdId).filter((e) => e.startsWith('capture')),
    }).toEqual({ screen: 'error', reason: 'HOLD_BEING_SETTLED', captures: [] });
    const settling = CATALOGUES.ar_AE['tapAndGo.holdBeingSettled'];
    expect(shown.customer.message).toBe(settling);
    expect(settling).not.toBe(CATALOGUES.ar_AE['meter.closeFailed']);
    expect(shown.customer.speech?.screen).toContain(settling);
    expect(second.holds.get(holdId)).toBeDefined();
    await sendEvent(second, { type: 'DONE' });
    await sendEvent(second, { type: 'SET_ACCESSIBILITY', on: false });

    // The gateway answers again: recovery's timeout reversal stands, and the hold ends closed with it.
    await fetch(new URL('/__sandbox/faults', l.sandbox.url), { method: 'DELETE' });
    await until(() => !second.holds.has(holdId), 'the hold closed after the resolution');
    expect(second.journal.db.prepare('SELECT resolution FROM holds WHERE hold_id = ?').get(holdId)).toEqual({
      resolution: 'dropped',
    });
    await waitForScreen(second, (s) => s.customer.screen === 'idle', 'idle');
    // Released at its maximum stay with the car inside: the exit charges the stay by a sale, never the hold.
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_EXIT' });
    await waitForScreen(second, (s) => s.customer.screen === 'approved', 'the stay charged by a sale');
    expect(reasonOf(second)).toBe('OVERSTAY_SALE');
    expect(sentFor(second, holdId).filter((e) => e.startsWith('capture'))).toEqual([]);
    expect(l.sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toEqual([]);
  });
});

describe('tap-and-go: a hold whose expiry reversal is refused after the watch stopped waiting for it', () => {
  it('is watched again and reversed, never while the first reversal is out: no authorization stands until the next start', async () => {
    // Restarted after the maximum stay: the expiry watch reverses the hold at once. The gateway refuses that first
    // reversal, but its answer comes only after the watch gave up waiting for it (the hold handed back, the reversal
    // still out): the authorization stands. Every later reversal reaches the sandbox.
    const { l, holdId } = await enteredThenPastMaxStay({ shortGatewayWait: true });
    const second = await l.build();
    cleanups.push(() => second.close());
    const events: string[] = [];
    const send = second.gateway.send.bind(second.gateway);
    second.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      const [prepared] = args;
      if (prepared.service !== 'reversal') return send(...args);
      events.push('reversal sent');
      if (events.length === 1) {
        await until(
          () => second.holds.unclaimed().some((h) => h.holdId === holdId),
          'the expiry watch giving up on its reversal',
        );
        events.push('reversal refused');
        return refusedUnprocessed('PROCESSOR_UNAVAILABLE');
      }
      const outcome = await send(...args);
      events.push(`reversal ${outcome.kind}`);
      return outcome;
    };
    await second.begin();

    // The refusal leaves the authorization standing: the hold is watched again, and its expiry reverses it.
    await until(() => !second.holds.has(holdId), 'the hold reversed after the late refusal');
    expect(events).toEqual(['reversal sent', 'reversal refused', 'reversal sent', 'reversal approved']);
    expect(sentFor(second, holdId)).toEqual(['reversal:rejected', 'reversal:approved']);
    expect(second.journal.db.prepare('SELECT resolution FROM holds WHERE hold_id = ?').get(holdId)).toEqual({
      resolution: 'reversed',
    });
    // The sandbox's ledger: every authorization captured or reversed.
    expect(l.sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('tap-and-go: an exit after the operator gave back the capture of the stay', () => {
  it.each(['void', 'refund'] as const)(
    'is not shown paid once the capture is given back (%s): no entry, nothing charged',
    async (action) => {
      const l = await lane();
      const host = await l.open();
      cleanups.push(() => host.close());
      const holdId = await enter(host);
      l.clock.offsetMs = STAY_MS;
      await exitPaid(host);
      await sendEvent(host, { type: 'DONE' });
      await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
      const capture = host.journal.referencing(holdId).find((e) => e.service === 'capture');
      const r = await host.operator({
        pin: host.generatedOperatorPin!,
        action: { type: action, transactionId: capture!.transactionId! },
      });
      expect(r.ok && r.value).toMatchObject({ type: action, outcome: 'approved' });
      await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

      // The customer taps at the exit again within the maximum stay.
      const shown = await tapsAgainAtExit(l, host, 'exit after the capture was given back');
      expect({ screen: shown.customer.screen, reason: reasonOf(host) }).toEqual({
        screen: 'declined',
        reason: 'NO_ENTRY',
      });
      expect(sentFor(host, holdId).filter((e) => e.startsWith('capture'))).toEqual(['capture:approved']);
    },
  );
});

/** The operator notices of a tap-and-go hold's reversal refused (the status bar's resolved items). */
function refusalNotices(host: TerminalHost): string[] {
  return host
    .status()
    .recovery.resolved.filter((r) => r.service === 'tap-and-go hold reversal refused')
    .map((r) => r.resolution);
}

/**
 * Answers every expiry reversal of the built host with a refusal (the first `times` only, when given; the later ones
 * reach the sandbox): `late`, only once the expiry watch stopped waiting for it (the hold handed back, the reversal
 * still out); otherwise at once. With `reachGateway` the reversal reaches the sandbox first (it releases the
 * authorization there) and its answer is then the refusal.
 */
function refuseReversals(
  host: TerminalHost,
  holdId: string,
  options: { reason: string; late: boolean; reachGateway: boolean; times?: number },
): string[] {
  const events: string[] = [];
  const send = host.gateway.send.bind(host.gateway);
  let refused = 0;
  host.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
    const [prepared] = args;
    if (prepared.service !== 'reversal') return send(...args);
    events.push('reversal sent');
    if (options.times !== undefined && refused >= options.times) {
      const outcome = await send(...args);
      events.push(`reversal ${outcome.kind}`);
      return outcome;
    }
    refused += 1;
    if (options.reachGateway) await send(...args);
    if (options.late)
      await until(
        () => host.holds.unclaimed().some((h) => h.holdId === holdId),
        'the expiry watch giving up on its reversal',
      );
    events.push('reversal refused');
    return {
      kind: 'rejected',
      reason: options.reason,
      details: [],
      httpStatus: 400,
      body: { status: 'INVALID_REQUEST', reason: options.reason },
    };
  };
  return events;
}

describe('tap-and-go: an expiry reversal refused because the authorization is released already', () => {
  it.each([
    ['in time', false],
    ['after the watch stopped waiting for it', true],
  ])(
    'closes the hold as settled when the refusal comes %s: no further reversal, nothing for the operator',
    async (_when, late) => {
      const { l, holdId } = await enteredThenPastMaxStay({ shortGatewayWait: true });
      const second = await l.build();
      cleanups.push(() => second.close());
      const events = refuseReversals(second, holdId, {
        reason: 'AUTH_ALREADY_REVERSED',
        late,
        reachGateway: true,
      });
      await second.begin();

      await until(() => !second.holds.has(holdId), 'the hold closed after the refusal');
      await new Promise((res) => setTimeout(res, 500));
      expect(events).toEqual(['reversal sent', 'reversal refused']);
      expect(sentFor(second, holdId)).toEqual(['reversal:rejected']);
      expect(second.journal.db.prepare('SELECT resolution FROM holds WHERE hold_id = ?').get(holdId)).toEqual(
        {
          resolution: 'dropped',
        },
      );
      expect(refusalNotices(second)).toEqual([]);
      expect(l.sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
    },
  );
});

describe('tap-and-go: a restart after an expiry reversal refused because the authorization is released already', () => {
  it('drops the hold at start from the journal: no further reversal is sent for it', async () => {
    // The hold expires in the next process, which dies once the refusal is committed, before the hold is dropped.
    const { l, holdId } = await enteredThenPastMaxStay({ shortGatewayWait: true });
    const restore = holdCloseNeverRuns();
    try {
      const second = await l.build();
      const events = refuseReversals(second, holdId, {
        reason: 'AUTH_ALREADY_REVERSED',
        late: false,
        reachGateway: true,
      });
      try {
        await second.begin();
        await until(() => sentFor(second, holdId).includes('reversal:rejected'), 'the refusal journaled');
        await new Promise((res) => setTimeout(res, 300));
        expect(events).toEqual(['reversal sent', 'reversal refused']);
      } finally {
        await second.close();
      }
    } finally {
      restore();
    }

    const third = await l.open();
    cleanups.push(() => third.close());
    // Dropped before the first card, as after an approved reversal: nothing left for the expiry watch to reverse.
    const openAtStart = third.holds.has(holdId);
    await new Promise((res) => setTimeout(res, 500));
    expect({
      openAtStart,
      open: third.holds.has(holdId),
      sent: sentFor(third, holdId),
      notices: refusalNotices(third),
    }).toEqual({ openAtStart: false, open: false, sent: ['reversal:rejected'], notices: [] });
    expect(l.sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('tap-and-go: a hold whose expiry reversals are all refused after the watch stopped waiting', () => {
  it("is reversed no more often than the machine's attempts, then left to the operator, also after a restart", async () => {
    const { l, holdId } = await enteredThenPastMaxStay({ shortGatewayWait: true });
    const second = await l.build();
    // A refusal for good: the request itself is wrong, and repeating it is refused the same way.
    const events = refuseReversals(second, holdId, {
      reason: 'INVALID_DATA',
      late: true,
      reachGateway: false,
    });
    await second.begin();
    await until(() => refusalNotices(second).length > 0, 'the operator notice', 40_000);
    await new Promise((res) => setTimeout(res, 500));
    expect(events.filter((e) => e === 'reversal sent')).toHaveLength(3);
    expect(sentFor(second, holdId)).toEqual(['reversal:rejected', 'reversal:rejected', 'reversal:rejected']);
    expect(refusalNotices(second)).toEqual(['INVALID_DATA']);
    // Never two reversals out at once, and the hold stays open for the operator to release.
    expect(events).toEqual(Array.from({ length: 3 }, () => ['reversal sent', 'reversal refused']).flat());
    expect(second.holds.get(holdId)).toBeDefined();
    await second.close();

    // The count is the journal's: a restart does not start the reversals over.
    const third = await l.open();
    cleanups.push(() => third.close());
    await until(() => refusalNotices(third).length > 0, 'the operator notice after the restart');
    await new Promise((res) => setTimeout(res, 300));
    expect(sentFor(third, holdId)).toEqual(['reversal:rejected', 'reversal:rejected', 'reversal:rejected']);
    expect(third.holds.get(holdId)).toBeDefined();
  }, 60_000);
});

describe('tap-and-go: a hold whose expiry reversals are refused because the processor is unavailable', () => {
  it("is reversed again after each refusal, past the machine's attempts, until one goes through: nothing for the operator", async () => {
    // Restarted after the maximum stay; the processor is down for the first four reversals (one more than the machine
    // tries), whose refusals come after the watch stopped waiting for them.
    const { l, holdId } = await enteredThenPastMaxStay({ shortGatewayWait: true });
    const second = await l.build();
    cleanups.push(() => second.close());
    const events = refuseReversals(second, holdId, {
      reason: 'PROCESSOR_UNAVAILABLE',
      late: true,
      reachGateway: false,
      times: 4,
    });
    await second.begin();
    await until(() => !second.holds.has(holdId), 'the hold reversed once the processor is back', 40_000);
    expect(events).toEqual([
      ...Array.from({ length: 4 }, () => ['reversal sent', 'reversal refused']).flat(),
      'reversal sent',
      'reversal approved',
    ]);
    expect(sentFor(second, holdId)).toEqual([
      ...Array.from({ length: 4 }, () => 'reversal:rejected'),
      'reversal:approved',
    ]);
    expect(refusalNotices(second)).toEqual([]);
    expect(l.sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  }, 60_000);
});

describe('tap-and-go: a terminal stopped while an expiry reversal is out', () => {
  it('stops the expiry machine without taking it as finished', async () => {
    const { l, holdId } = await enteredThenPastMaxStay();
    const second = await l.build();
    let sent = false;
    const send = second.gateway.send.bind(second.gateway);
    second.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'reversal') return send(...args);
      sent = true;
      await new Promise((res) => setTimeout(res, 300));
      return send(...args);
    };
    await second.begin();
    await until(() => sent, 'the expiry reversal sent');
    await second.close();
    // An expiry machine taken as finished when stopped would have thrown (its output is undefined).
    await new Promise((res) => setTimeout(res, 100));
    const third = await l.open();
    cleanups.push(() => third.close());
    await until(() => !third.holds.has(holdId), 'the hold reversed after the restart');
    expect(sentFor(third, holdId)).toEqual(['reversal:approved']);
  });
});

describe('tap-and-go: a restart between an exit’s approved increment and its capture', () => {
  it('charges the next exit against the authorized total with that increment, not the hold as entered', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    // 150 minutes cost 7.50: the 5.98 hold grows by an increment of 1.52 (approved), and the capture that follows
    // never reaches the gateway; the process dies before the hold is given back with its new total.
    const send = first.gateway.send.bind(first.gateway);
    first.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'capture') return send(...args);
      return refusedUnprocessed('PROCESSOR_UNAVAILABLE');
    };
    const restore = holdCloseNeverRuns();
    try {
      l.clock.offsetMs = 150 * 60_000;
      first.simulator!.setCard('n2-contact');
      await sendEvent(first, { type: 'TAP_EXIT' });
      await waitForScreen(first, (s) => s.customer.screen === 'error', 'the capture refused');
      expect(sentFor(first, holdId)).toEqual(['incremental:approved', 'capture:rejected']);
      await first.close();
    } finally {
      restore();
    }

    // 180 minutes cost 9.00: 1.50 more than the 7.50 authorized (approved), not 3.02 more than the 5.98 held at the
    // entry (declined: the capture would then take 5.98 of the 7.50 authorized, and the rest of the fee be lost).
    const second = await l.open();
    cleanups.push(() => second.close());
    l.clock.offsetMs = 180 * 60_000;
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_EXIT' });
    const shown = await waitForScreen(
      second,
      (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
      'the exit after the restart',
    );
    expect({
      screen: shown.customer.screen,
      amount: shown.customer.amount?.minor,
      sent: sentFor(second, holdId),
      increments: second.journal
        .referencing(holdId)
        .filter((e) => e.service === 'incremental')
        .map((e) => e.amountMinor),
    }).toEqual({
      screen: 'approved',
      amount: 900,
      sent: ['incremental:approved', 'capture:rejected', 'incremental:approved', 'capture:approved'],
      increments: [152, 150],
    });
    expect(l.sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

/**
 * A car enters with the n2-contact card and pays its exit by phone; the terminal dies once the payment is journaled,
 * before the release of the hold that follows it is (simulated: that reversal never goes out). Returns the lane and
 * the hold's id, the terminal closed.
 */
async function paidByPhoneThenCrash(): Promise<{ l: Lane; holdId: string }> {
  const l = await lane({ payByPhone: true });
  const first = await l.open();
  const holdId = await enter(first);
  const { submit } = PaymentRouter.prototype;
  PaymentRouter.prototype.submit = function (this: PaymentRouter, request, signal) {
    if (request.service === 'reversal' && request.original?.transactionId === holdId)
      return new Promise(() => undefined);
    return submit.call(this, request, signal);
  };
  try {
    l.clock.offsetMs = STAY_MS;
    first.simulator!.setCard('n2-contact');
    await sendEvent(first, { type: 'TAP_EXIT' });
    await waitForScreen(first, (s) => s.customer.screen === 'confirm', 'the fee and its two ways to pay');
    await sendEvent(first, { type: 'PAY_BY_LINK' });
    const shown = await waitForScreen(first, (s) => s.customer.screen === 'pay-by-phone', 'the QR code');
    const url = shown.customer.payByPhone?.url ?? '';
    const linkId = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    expect(await hostedPageAnswer(url)).toContain('Payment approved');
    await until(() => first.links.get(linkId)?.state === 'paid', 'the payment journaled');
    expect(sentFor(first, holdId)).toEqual([]);
  } finally {
    PaymentRouter.prototype.submit = submit;
  }
  await first.close();
  return { l, holdId };
}

/** What the sandbox holds of the stay: the link's payments, the hold's authorization, the captures. */
function stayInLedger(l: Lane): { linkPayments: string[]; hold: string | undefined; captures: number } {
  const ledger = l.sandbox.ledger().transactions;
  return {
    linkPayments: ledger.filter((t) => t.kind === 'link-payment').map((t) => t.status),
    hold: ledger.find((t) => t.kind === 'authorization' && t.amounts.authorized > 0)?.status,
    captures: ledger.filter((t) => t.kind === 'capture').length,
  };
}

describe('tap-and-go: a restart between the payment of the exit by phone and the release of the hold', () => {
  it('does not charge the card tapped again: the exit opens as paid, and the hold is released once', async () => {
    const { l, holdId } = await paidByPhoneThenCrash();
    const second = await l.open();
    cleanups.push(() => second.close());
    // The customer whose gate did not open taps the same card again.
    second.simulator!.setCard('n2-contact');
    l.clock.offsetMs = STAY_MS + 5 * 60_000;
    await sendEvent(second, { type: 'TAP_EXIT' });
    const again = await waitForScreen(
      second,
      (s) => ['approved', 'declined', 'error', 'confirm'].includes(s.customer.screen),
      'the second exit',
    );
    // Offered the fee again, the customer pays it with the card tapped.
    if (again.customer.screen === 'confirm') {
      await sendEvent(second, { type: 'CONFIRM' });
      await waitForScreen(
        second,
        (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
        'charged',
      );
    }
    await until(
      () => !second.journal.referencing(holdId).some((e) => e.state === 'pending'),
      'nothing in flight',
    );
    expect({ screen: again.customer.screen, reason: reasonOf(second), ledger: stayInLedger(l) }).toEqual({
      screen: 'approved',
      reason: 'PAID_BY_LINK',
      ledger: { linkPayments: ['AUTHORIZED'], hold: 'REVERSED', captures: 0 },
    });
    await until(() => second.holds.size === 0, 'the hold closed');
    expect(sentFor(second, holdId)).toEqual(['reversal:approved']);
  });

  it('releases the hold at start, with no card at the gate', async () => {
    const { l, holdId } = await paidByPhoneThenCrash();
    const second = await l.open();
    cleanups.push(() => second.close());
    await until(() => second.holds.size === 0, 'the hold released', 5_000);
    expect(sentFor(second, holdId)).toEqual(['reversal:approved']);
    expect(stayInLedger(l)).toEqual({ linkPayments: ['AUTHORIZED'], hold: 'REVERSED', captures: 0 });
  });
});

describe('tap-and-go: a restart between the approval of an entry’s pre-authorization and the store of its hold', () => {
  it('reverses the authorization at start, before the first card, not at the end of the capture window', async () => {
    const l = await lane();
    const first = await l.open();
    const holdId = await enter(first);
    await first.close();
    // What a crash between the pre-authorization's approved outcome (journaled) and the commit of its hold leaves: the
    // gate opens only once the hold is stored, so no car entered on it, and no exit or expiry watch will ever settle it.
    const db = new Database(join(l.cwd, 'var/journal.db'));
    db.prepare('DELETE FROM holds WHERE hold_id = ?').run(holdId);
    db.close();

    // Five minutes on: well within the capture window (tariff.captureWindowMinutes, a day).
    l.clock.offsetMs = 5 * 60_000;
    const second = await l.open();
    cleanups.push(() => second.close());
    expect(sentFor(second, holdId)).toEqual(['reversal:approved']);
    expect(second.journal.unsettledAuthorizations().map((e) => e.transactionId)).toEqual([]);
    const authorization = l.sandbox
      .ledger()
      .transactions.find((t) => t.kind === 'authorization' && t.amounts.authorized > 0);
    expect(authorization?.status).toBe('REVERSED');
    // Nothing left for the card: it enters again.
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_ENTRY' });
    await waitForScreen(second, (s) => s.customer.screen === 'session', 'the card enters again');
  });
});

describe('tap-and-go: an exit after the hold of the stay was released at the maximum stay', () => {
  it('finds the car inside and charges the fee by a sale on the card presented, once, for the operator to see', async () => {
    const { l, holdId } = await enteredThenPastMaxStay();
    const second = await l.open();
    cleanups.push(() => second.close());
    await until(() => !second.holds.has(holdId), 'the hold reversed at its maximum stay');
    expect(sentFor(second, holdId)).toEqual(['reversal:approved']);

    // The car leaves half an hour after its hold was released: its stay is in the journal, its fee owed.
    l.clock.offsetMs = PAST_MAX_STAY_MS + 30 * 60_000;
    second.simulator!.setCard('n2-contact');
    await sendEvent(second, { type: 'TAP_EXIT' });
    const shown = await waitForScreen(
      second,
      (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
      'the exit of the outstayed car',
    );
    const sales = l.sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect({
      screen: shown.customer.screen,
      reason: reasonOf(second),
      sales: sales.map((t) => t.status),
    }).toEqual({ screen: 'approved', reason: 'OVERSTAY_SALE', sales: ['AUTHORIZED'] });
    const sale = second.journal.findByTransactionId(sales[0]!.transactionId!);
    expect({ service: sale?.service, state: sale?.state, amountMinor: sale?.amountMinor }).toEqual({
      service: 'sale',
      state: 'approved',
      amountMinor: shown.customer.amount?.minor,
    });
    expect(sale?.amountMinor).toBeGreaterThan(0);
    // The operator sees it: the audit log names the stay at its maximum, then the sale that charged it.
    const audit = second.audit.list().filter((r) => r.action === 'stay-outstayed');
    expect(audit.map((r) => ({ subject: r.subject, result: r.result, holdId: r.details.holdId }))).toEqual([
      { subject: holdId, result: 'refused', holdId },
      { subject: sale?.transactionId, result: 'ok', holdId },
    ]);

    // Tapped again (the gate did not open, say): shown paid, not charged a second time.
    await sendEvent(second, { type: 'DONE' });
    await waitForScreen(second, (s) => s.customer.screen === 'idle', 'idle');
    await sendEvent(second, { type: 'TAP_EXIT' });
    await waitForScreen(second, (s) => s.customer.screen === 'approved', 'the exit shown paid again');
    expect(reasonOf(second)).toBe('ALREADY_PAID');
    expect(l.sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
  });
});

describe('tap-and-go: the card of a stay that outlasted its hold enters again before that stay’s exit', () => {
  it('records the outstayed stay’s fee for the operator, once, in the commit of the new entry’s hold', async () => {
    const { l, holdId } = await enteredThenPastMaxStay();
    const second = await l.open();
    cleanups.push(() => second.close());
    await until(() => !second.holds.has(holdId), 'the hold reversed at its maximum stay');
    const outstayedAtMs = Math.floor(l.clock.now());

    // The exit's read failed and the car was let out by hand; an hour later the card enters again.
    l.clock.offsetMs = PAST_MAX_STAY_MS + 60 * 60_000;
    const again = await enter(second);
    expect(again).not.toBe(holdId);
    // The new stay's exit charges the new stay: the old stay is no longer the card's last, and no exit asks for it.
    l.clock.offsetMs = PAST_MAX_STAY_MS + 60 * 60_000 + STAY_MS;
    await exitPaid(second);
    expect(reasonOf(second)).not.toBe('OVERSTAY_SALE');
    expect(l.sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(0);

    // Its fee is not lost: a fee shortfall of the whole of it, priced by the tariff from its entry to the end of its
    // maximum stay, awaits the operator (`parking-terminal shortfalls list`).
    const db = new Database(join(l.cwd, 'var/journal.db'), { readonly: true });
    const stay = db.prepare('SELECT entered_at, outstayed_at FROM holds WHERE hold_id = ?').get(holdId) as {
      entered_at: number;
      outstayed_at: number;
    };
    db.close();
    expect(stay.outstayed_at).toBe(outstayedAtMs);
    const owed = feeBetween(modelConfig('tap-and-go').tariff, stay.entered_at, stay.outstayed_at).feeMinor;
    expect(owed).toBeGreaterThan(0);
    const shortfalls = feeShortfalls(second.audit, 'en-GB').filter((s) => s.transactionId === holdId);
    expect(shortfalls.map((s) => ({ code: s.code, owed: s.owed.minor, captured: s.captured.minor }))).toEqual(
      [{ code: 'STAY_OUTSTAYED', owed, captured: 0 }],
    );
    // Once: the card's later entries find its last stay paid, not the outstayed one.
    await sendEvent(second, { type: 'DONE' });
    await waitForScreen(second, (s) => s.customer.screen === 'idle', 'idle');
    await enter(second);
    expect(
      second.audit.list().filter((r) => r.action === 'fee-shortfall' && r.subject === holdId),
    ).toHaveLength(1);
  });
});

describe('tap-and-go: a stay that outlasts its hold and whose exit never comes', () => {
  it('records for the operator, when its hold is released at the maximum stay, that its car is inside and its fee owed', async () => {
    const { l, holdId } = await enteredThenPastMaxStay();
    const second = await l.build();
    cleanups.push(() => second.close());
    // The first reversal is refused for now: the watch takes the hold again after its wait, and marks it again.
    const send = second.gateway.send.bind(second.gateway);
    let reversals = 0;
    second.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'reversal' || ++reversals > 1) return send(...args);
      return refusedUnprocessed('PROCESSOR_UNAVAILABLE');
    };
    await second.begin();
    await until(() => !second.holds.has(holdId), 'the hold reversed at its maximum stay');
    expect(reversals).toBe(2);

    const db = new Database(join(l.cwd, 'var/journal.db'), { readonly: true });
    const stay = db.prepare('SELECT entered_at, outstayed_at FROM holds WHERE hold_id = ?').get(holdId) as {
      entered_at: number;
      outstayed_at: number;
    };
    db.close();
    const owed = feeBetween(modelConfig('tap-and-go').tariff, stay.entered_at, stay.outstayed_at).feeMinor;
    // No exit comes: the audit log and the operator status say so, with the fee the stay owes at its maximum.
    const audit = second.audit.list().filter((r) => r.action === 'stay-outstayed');
    expect(
      audit.map((r) => ({ subject: r.subject, result: r.result, code: r.code, details: r.details })),
    ).toEqual([
      {
        subject: holdId,
        result: 'refused',
        code: 'MAXIMUM_STAY_REACHED',
        details: { holdId, feeMinor: owed, currency: 'GBP' },
      },
    ]);
    expect(JSON.stringify(second.status())).toContain('MAXIMUM_STAY_REACHED');
  });
});

describe('tap-and-go: the card enters again while its outstayed hold’s reversal is unresolved', () => {
  it('records the outstayed stay’s fee for the operator at the new entry: no exit asks for that stay again', async () => {
    // The hold is being settled (recovery's), and the card is not kept out by it.
    const { l, holdId, second } = await expiryReversalUnknown();
    const outstayedAtMs = Math.floor(l.clock.now());

    l.clock.offsetMs = PAST_MAX_STAY_MS + 60 * 60_000;
    await enter(second);
    expect(second.holds.unclaimed().filter((h) => h.holdId !== holdId)).toHaveLength(1);
    const owed = feeBetween(
      modelConfig('tap-and-go').tariff,
      outstayedAtMs - PAST_MAX_STAY_MS,
      outstayedAtMs,
    ).feeMinor;
    expect(
      feeShortfalls(second.audit, 'en-GB')
        .filter((s) => s.transactionId === holdId)
        .map((s) => ({ code: s.code, owed: s.owed.minor })),
    ).toEqual([{ code: 'STAY_OUTSTAYED', owed }]);
  });
});
