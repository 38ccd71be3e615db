import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { ServiceRequest } from '../../src/flows/index.js';
import { PaymentRouter } from '../../src/host/payment-router.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sendEvent, waitForSnapshot } from './host-harness.js';
import { ParkingClock, sandboxOpenAuthorizations } from './models-harness.js';
import { startRewritingProxy } from './rewriting-proxy.js';

/*
 * An on-street meter session holding two authorizations (tariff.meterAuthorization `chosen` without incremental
 * authorizations: the extension is a second Parking Auth) settles in steps: the fee is captured from the first hold,
 * then the second is reversed. The terminal stops between the two — the capture's outcome is journaled, the second
 * hold's reversal never is (the crash is simulated by the reversal never leaving the interrupted process's door:
 * what the journal committed up to the capture's outcome is all that survives). The restarted terminal must release
 * the second hold at once (recovery, then the follow-ups), not leave it on the customer's card until its capture
 * window ends; and must neither capture nor reverse the first hold again.
 */

let sandbox: Sandbox;
let dir: string;
const hosts: TerminalHost[] = [];
let restoreSubmit: (() => void) | undefined;

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-settlement-'));
});

afterEach(async () => {
  restoreSubmit?.();
  restoreSubmit = undefined;
  while (hosts.length > 0) await hosts.pop()?.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A meter of two holds per extended session: 60 minutes cost 3.00 and 30 more 1.50 (the default tariff). */
const TWO_HOLDS: ConfigInput = {
  terminal: { model: 'meter' },
  reader: { sim: { presentDelayMs: 5 } },
  tariff: { meterAuthorization: 'chosen', allowIncremental: false },
};

/**
 * A meter pricing in EUR whose card (the simulator's N2 card) is billed in JPY, asking for the currency again at
 * completion (reference/kiosk.md §1): a fee declined in JPY then is a local sale, and the converted hold is reversed.
 */
const CONVERTED: ConfigInput = {
  terminal: {
    model: 'meter',
    currency: 'EUR',
    country: 'DE',
    countryNumeric: '276',
    timezone: 'Europe/Berlin',
  },
  reader: { sim: { card: 'n2-contact', presentDelayMs: 5 } },
  dcc: { choiceAtCompletion: true },
};

async function meterHost(
  clock: ParkingClock,
  config: ConfigInput = TWO_HOLDS,
  gatewayUrl: string = sandbox.url,
): Promise<TerminalHost> {
  const host = await createTerminalHost(
    parseConfig({
      ...config,
      journal: { path: 'journal.db', timeoutReversalDelayMs: 50, resolutionRetryMs: 100 },
    }),
    { logger: silentLogger(), cwd: dir, gatewayUrlOverride: gatewayUrl, parkingClock: clock },
  );
  hosts.push(host);
  await waitForSnapshot(host, (s) => s.customer.screen === 'idle', 'idle');
  return host;
}

/** What the journal holds of the requests that follow `transactionId`, as `service:state`, in order. */
function followOns(host: TerminalHost, transactionId: string): string[] {
  return host.journal.referencing(transactionId).map((e) => `${e.service}:${e.state}`);
}

/** Nothing of the session left: no follow-up open, no authorization the terminal holds, none open at the sandbox. */
function expectNothingLeftOpen(host: TerminalHost): void {
  expect(host.followUps.open()).toEqual([]);
  expect(host.openAuthorizationCount()).toBe(0);
  expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
}

/** Polls `ok` until it holds or `timeoutMs` passed; returns its last answer. */
async function eventually<T>(read: () => T, ok: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = read();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 20));
    v = read();
  }
  return v;
}

/** The ledger's requests, `kind comments authorized/captured`, in order. */
function ledger(): string[] {
  return sandbox
    .ledger()
    .transactions.map(
      (t) =>
        `${t.kind} ${t.comments ?? ''} ${t.amounts.authorized}/${t.amounts.captured}${t.voided ? ' voided' : ''}`,
    );
}

interface Session {
  host: TerminalHost;
  /** transactionIds of the two pre-authorizations, in order. */
  first: string;
  second: string;
  secondGatewayId: string;
}

/**
 * A 60-minute session extended by 30 (a second pre-authorization), ended after `minutes` (25 by default: 1.50 owed,
 * captured from the first hold; 5: within the grace period, both holds reversed).
 */
async function twoHoldSessionEnded(
  clock: ParkingClock,
  host: TerminalHost,
  minutes = 25,
  beforeEnd: (session: Session) => void = () => undefined,
): Promise<Session> {
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await waitForSnapshot(host, (s) => s.customer.screen === 'confirm', 'confirm');
  await sendEvent(host, { type: 'CONFIRM' });
  await waitForSnapshot(host, (s) => s.customer.screen === 'session', 'session');
  await sendEvent(host, { type: 'EXTEND', minutes: 30 });
  await waitForSnapshot(
    host,
    (s) => s.customer.screen === 'session' && s.customer.session?.held?.minor === 450,
    'session extended',
  );
  const preauths = host.journal
    .list({ limit: 20 })
    .filter((e) => e.service === 'preauth' && e.state === 'approved')
    .sort((a, b) => a.id - b.id);
  expect(preauths.map((e) => e.amountMinor)).toEqual([300, 150]);
  const session = {
    host,
    first: preauths[0]?.transactionId ?? '',
    second: preauths[1]?.transactionId ?? '',
    secondGatewayId: preauths[1]?.gatewayId ?? '',
  };
  beforeEnd(session);
  clock.offsetMs += minutes * 60_000;
  await sendEvent(host, { type: 'END_SESSION' });
  return session;
}

/**
 * The sandbox behind a proxy that refuses, unprocessed (401: provably never sent), the reversal of the authorization
 * `refusing.id` names while it is set.
 */
async function proxyRefusingReversals(): Promise<{
  proxy: Awaited<ReturnType<typeof startRewritingProxy>>;
  refusing: { id: string | undefined };
}> {
  const refusing: { id: string | undefined } = { id: undefined };
  const proxy = await startRewritingProxy(
    sandbox.url,
    () => undefined,
    (req) =>
      refusing.id !== undefined &&
      req.method === 'POST' &&
      req.url === `/pts/v2/payments/${refusing.id}/reversals`
        ? { status: 401, body: { response: { rmsg: 'Authentication Failed' } } }
        : undefined,
  );
  return { proxy, refusing };
}

/** The simulated crash: no reversal leaves the door of the interrupted process (nothing of it is journaled). */
function reversalsNeverLeave(): { asked: () => number } {
  const { submit } = PaymentRouter.prototype;
  let asked = 0;
  PaymentRouter.prototype.submit = function (
    this: PaymentRouter,
    request: ServiceRequest,
    signal?: AbortSignal,
  ) {
    if (request.service !== 'reversal') return submit.call(this, request, signal);
    asked += 1;
    return new Promise(() => undefined);
  };
  restoreSubmit = () => {
    PaymentRouter.prototype.submit = submit;
  };
  return { asked: () => asked };
}

/** The simulated crash: no capture after the first leaves the door of the interrupted process (none is journaled). */
function capturesAfterTheFirstNeverLeave(): { asked: () => number } {
  const { submit } = PaymentRouter.prototype;
  let asked = 0;
  PaymentRouter.prototype.submit = function (
    this: PaymentRouter,
    request: ServiceRequest,
    signal?: AbortSignal,
  ) {
    if (request.service !== 'capture') return submit.call(this, request, signal);
    asked += 1;
    return asked === 1 ? submit.call(this, request, signal) : new Promise(() => undefined);
  };
  restoreSubmit = () => {
    PaymentRouter.prototype.submit = submit;
  };
  return { asked: () => asked };
}

describe('meter: a session of two holds interrupted between the capture of one and the reversal of the other', () => {
  it('releases the other hold at the next start, and captures nothing again', async () => {
    const clock = new ParkingClock();
    const first = await meterHost(clock);
    const interrupted = reversalsNeverLeave();
    const session = await twoHoldSessionEnded(clock, first);
    // The capture's outcome is journaled; the machine is about to reverse the second hold when the process dies.
    expect(await eventually(interrupted.asked, (n) => n > 0, 10_000)).toBe(1);
    expect(followOns(first, session.first)).toEqual(['capture:approved']);
    expect(first.journal.referencing(session.second)).toEqual([]);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([session.secondGatewayId]);
    await first.close();
    hosts.pop();
    restoreSubmit?.();
    restoreSubmit = undefined;

    const again = await meterHost(clock);
    // Released by the start, not left on the card until its capture window ends (24 hours by default).
    expect(
      await eventually(
        () => sandboxOpenAuthorizations(sandbox),
        (open) => open.length === 0,
        10_000,
      ),
    ).toEqual([]);
    expect(
      await eventually(
        () => again.journal.authorizationSettled(session.second),
        (settled) => settled,
        5_000,
      ),
    ).toBe(true);
    // Reversed once; the captured hold neither captured again nor reversed.
    expect(followOns(again, session.second)).toEqual(['reversal:approved']);
    expect(followOns(again, session.first)).toEqual(['capture:approved']);
    expect(ledger()).toEqual([
      'authorization Parking Auth 300/150',
      'authorization Parking Auth 150/0',
      'capture Parking Capture Less Than Auth 0/150',
      'reversal REVERSAL 0/0',
    ]);
    expectNothingLeftOpen(again);
  });

  it('uninterrupted, tells the customer the fee taken and leaves nothing held or open', async () => {
    const clock = new ParkingClock();
    const host = await meterHost(clock);
    const session = await twoHoldSessionEnded(clock, host);
    const end = await waitForSnapshot(
      host,
      (s) => s.customer.actions.includes('DONE'),
      'the end of the session',
    );
    expect({ screen: end.customer.screen, amount: end.customer.amount?.minor }).toEqual({
      screen: 'approved',
      amount: 150,
    });
    expect(end.customer.message).toBe('Thank you');
    expect(followOns(host, session.second)).toEqual(['reversal:approved']);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    // The follow-up written with the capture's outcome was closed by the machine's own reversal: nothing sends it again.
    expect(host.followUps.open()).toEqual([]);
    expect(host.openAuthorizationCount()).toBe(0);
    expect(ledger()).toEqual([
      'authorization Parking Auth 300/150',
      'authorization Parking Auth 150/0',
      'capture Parking Capture Less Than Auth 0/150',
      'reversal REVERSAL 0/0',
    ]);
  });

  it('releases at the next start a converted hold whose fee was sold in the local currency just before the crash', async () => {
    const clock = new ParkingClock();
    const first = await meterHost(clock, CONVERTED);
    await sendEvent(first, { type: 'START' });
    await sendEvent(first, { type: 'CHOOSE_DURATION', minutes: 120 });
    await sendEvent(first, { type: 'CONFIRM' });
    await waitForSnapshot(first, (s) => s.customer.screen === 'choose-currency', 'the currency choice');
    await sendEvent(first, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    await waitForSnapshot(first, (s) => s.customer.screen === 'session', 'session');
    const hold = first.journal
      .list({ limit: 20 })
      .find((e) => e.service === 'preauth' && e.state === 'approved');
    const holdTx = hold?.transactionId ?? '';
    const interrupted = reversalsNeverLeave();
    clock.offsetMs += 45 * 60_000;
    await sendEvent(first, { type: 'END_SESSION' });
    await waitForSnapshot(
      first,
      (s) => s.customer.screen === 'choose-currency',
      'the currency choice at completion',
    );
    await sendEvent(first, { type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    // The sale's outcome is journaled; the machine is about to reverse the converted hold when the process dies.
    expect(await eventually(interrupted.asked, (n) => n > 0, 10_000)).toBe(1);
    expect(first.journal.referencing(holdTx)).toEqual([]);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([hold?.gatewayId]);
    await first.close();
    hosts.pop();
    restoreSubmit?.();
    restoreSubmit = undefined;

    const again = await meterHost(clock, CONVERTED);
    expect(
      await eventually(
        () => sandboxOpenAuthorizations(sandbox),
        (open) => open.length === 0,
        10_000,
      ),
    ).toEqual([]);
    expect(followOns(again, holdTx)).toEqual(['reversal:approved']);
    // The fee sold in EUR; the converted hold released in full, in its billing currency.
    expect(
      sandbox.ledger().transactions.map((t) => `${t.kind} ${t.status} ${t.currency} ${t.comments ?? ''}`),
    ).toEqual([
      'authorization REVERSED JPY Parking Auth',
      'sale AUTHORIZED EUR Parking Sale',
      'reversal REVERSED JPY REVERSAL',
    ]);
    expect(again.followUps.open()).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });

  it('sends the release of the other hold again soon when the gateway did not take it, not at the end of its window', async () => {
    // Nothing owed (5 minutes, within the grace period): both holds reversed, the first's reversal naming the second's
    // release; the second's reversal then refused unprocessed (401: provably never sent).
    const { proxy, refusing } = await proxyRefusingReversals();
    try {
      const clock = new ParkingClock();
      const host = await meterHost(clock, TWO_HOLDS, proxy.url);
      const session = await twoHoldSessionEnded(clock, host, 5, (s) => {
        refusing.id = s.secondGatewayId;
      });
      await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'), 'the end of the session');
      expect(sandboxOpenAuthorizations(sandbox)).toEqual([session.secondGatewayId]);
      refusing.id = undefined;
      expect(
        await eventually(
          () => sandboxOpenAuthorizations(sandbox),
          (open) => open.length === 0,
          10_000,
        ),
      ).toEqual([]);
      expect(
        await eventually(
          () => host.journal.authorizationSettled(session.second),
          (settled) => settled,
          5_000,
        ),
      ).toBe(true);
      expect(
        await eventually(
          () => host.followUps.open(),
          (open) => open.length === 0,
          5_000,
        ),
      ).toEqual([]);
    } finally {
      while (hosts.length > 0) await hosts.pop()?.close();
      await proxy.close();
    }
  });
});

describe('meter: the release of the other hold never reaches the gateway', () => {
  it('tells the customer the session is closed, what was charged, and that the rest will be released', async () => {
    // 25 minutes: 1.50 captured from the first hold; the second hold's reversal refused unprocessed (401: provably never
    // sent), sent again by the host once the gateway takes it.
    const { proxy, refusing } = await proxyRefusingReversals();
    try {
      const clock = new ParkingClock();
      const host = await meterHost(clock, TWO_HOLDS, proxy.url);
      const session = await twoHoldSessionEnded(clock, host, 25, (s) => {
        refusing.id = s.secondGatewayId;
      });
      const end = await waitForSnapshot(
        host,
        (s) => s.customer.actions.includes('DONE'),
        'the end of the session',
      );
      expect({
        screen: end.customer.screen,
        amount: end.customer.amount?.minor,
        message: end.customer.message,
      }).toEqual({
        screen: 'approved',
        amount: 150,
        message: 'Session closed: £1.50 charged. The rest held on your card will be released shortly',
      });
      expect(
        host.journal.referencing(session.second).map((e) => `${e.service}:${e.resolution ?? e.state}`),
      ).toContain('reversal:not-sent');
      // And so it is, once the gateway takes the terminal's requests again.
      refusing.id = undefined;
      expect(
        await eventually(
          () => sandboxOpenAuthorizations(sandbox),
          (open) => open.length === 0,
          10_000,
        ),
      ).toEqual([]);
      expect(
        await eventually(
          () => host.followUps.open(),
          (open) => open.length === 0,
          5_000,
        ),
      ).toEqual([]);
    } finally {
      while (hosts.length > 0) await hosts.pop()?.close();
      await proxy.close();
    }
  });
});

describe('meter: a fee spread over two holds, interrupted between the capture of the first and that of the second', () => {
  it('captures the second part at the next start, once, and reverses nothing', async () => {
    const clock = new ParkingClock();
    const first = await meterHost(clock);
    const interrupted = capturesAfterTheFirstNeverLeave();
    // 80 minutes: 4.50 owed (the tariff counts started half hours), 3.00 captured from the first hold, 1.50 from the
    // second.
    const session = await twoHoldSessionEnded(clock, first, 80);
    expect(await eventually(interrupted.asked, (n) => n > 1, 10_000)).toBe(2);
    expect(followOns(first, session.first)).toEqual(['capture:approved']);
    expect(first.journal.referencing(session.second)).toEqual([]);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([session.secondGatewayId]);
    await first.close();
    hosts.pop();
    restoreSubmit?.();
    restoreSubmit = undefined;

    const again = await meterHost(clock);
    // The second part captured by the start, in the second hold's currency: not reversed, nothing captured twice.
    expect(
      await eventually(
        () =>
          again.journal
            .referencing(session.second)
            .map((e) => `${e.service}:${e.state}:${e.amountMinor ?? ''}${e.currency ?? ''}`),
        (entries) => entries.length > 0,
        10_000,
      ),
    ).toEqual(['capture:approved:150GBP']);
    expect(
      await eventually(
        () => sandboxOpenAuthorizations(sandbox),
        (open) => open.length === 0,
        5_000,
      ),
    ).toEqual([]);
    expect(followOns(again, session.first)).toEqual(['capture:approved']);
    expect(ledger()).toEqual([
      'authorization Parking Auth 300/300',
      'authorization Parking Auth 150/150',
      'capture Parking Capture 0/300',
      'capture Parking Capture 0/150',
    ]);
    expectNothingLeftOpen(again);
  });

  it('uninterrupted, captures both parts and leaves nothing open', async () => {
    const clock = new ParkingClock();
    const host = await meterHost(clock);
    const session = await twoHoldSessionEnded(clock, host, 80);
    const end = await waitForSnapshot(
      host,
      (s) => s.customer.actions.includes('DONE'),
      'the end of the session',
    );
    expect({ screen: end.customer.screen, amount: end.customer.amount?.minor }).toEqual({
      screen: 'approved',
      amount: 450,
    });
    expect(followOns(host, session.second)).toEqual(['capture:approved']);
    // The capture follow-up written with the first capture's outcome was closed by the machine's own capture.
    expect(host.followUps.open()).toEqual([]);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(host.openAuthorizationCount()).toBe(0);
  });
});

/** The converted meter of {@link CONVERTED} with two holds per extended session, captured in JPY at completion. */
const CONVERTED_TWO_HOLDS: ConfigInput = {
  ...CONVERTED,
  dcc: { choiceAtCompletion: false },
  tariff: { meterAuthorization: 'chosen', allowIncremental: false },
};

/** `orderInformation.amountDetails` of the first request the sandbox received for the transaction `t`. */
function amountDetailsOf(t: { requests: Array<{ body: unknown }> } | undefined): Record<string, unknown> {
  const body = t?.requests[0]?.body as { orderInformation?: { amountDetails?: Record<string, unknown> } };
  return body?.orderInformation?.amountDetails ?? {};
}

describe('meter: a fee spread over two converted holds, interrupted between the capture of the first and that of the second', () => {
  it('captures the second part at the next start in the card currency, at the second hold rate, with its offer ids', async () => {
    const clock = new ParkingClock();
    const first = await meterHost(clock, CONVERTED_TWO_HOLDS);
    const interrupted = capturesAfterTheFirstNeverLeave();
    await sendEvent(first, { type: 'START' });
    await sendEvent(first, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(first, { type: 'CONFIRM' });
    await waitForSnapshot(first, (s) => s.customer.screen === 'choose-currency', 'the currency choice');
    await sendEvent(first, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    await waitForSnapshot(first, (s) => s.customer.screen === 'session', 'session');
    await sendEvent(first, { type: 'EXTEND', minutes: 30 });
    await waitForSnapshot(
      first,
      (s) => s.customer.screen === 'choose-currency',
      'the currency choice of the extension',
    );
    await sendEvent(first, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    await waitForSnapshot(
      first,
      (s) => s.customer.screen === 'session' && s.customer.session?.held?.minor === 450,
      'session extended',
    );
    const preauths = first.journal
      .list({ limit: 20 })
      .filter((e) => e.service === 'preauth' && e.state === 'approved')
      .sort((a, b) => a.id - b.id);
    expect(preauths.map((e) => e.currency)).toEqual(['JPY', 'JPY']);
    const [firstHold, secondHold] = preauths;
    // 80 minutes: 4.50 EUR owed, 3.00 captured from the first hold, 1.50 from the second, each converted.
    clock.offsetMs += 80 * 60_000;
    await sendEvent(first, { type: 'END_SESSION' });
    expect(await eventually(interrupted.asked, (n) => n > 1, 10_000)).toBe(2);
    expect(followOns(first, firstHold?.transactionId ?? '')).toEqual(['capture:approved']);
    expect(first.journal.referencing(secondHold?.transactionId ?? '')).toEqual([]);
    await first.close();
    hosts.pop();
    restoreSubmit?.();
    restoreSubmit = undefined;

    const again = await meterHost(clock, CONVERTED_TWO_HOLDS);
    expect(
      await eventually(
        () =>
          again.journal
            .referencing(secondHold?.transactionId ?? '')
            .map((e) => `${e.service}:${e.state}:${e.amountMinor ?? ''}${e.currency ?? ''}`),
        (entries) => entries.length > 0,
        10_000,
      ),
    ).toEqual([`capture:approved:${secondHold?.amountMinor ?? ''}JPY`]);
    const txs = sandbox.ledger().transactions;
    expect(txs.map((t) => `${t.kind} ${t.status} ${t.currency} ${t.comments ?? ''}`)).toEqual([
      'authorization AUTHORIZED JPY Parking Auth',
      'authorization AUTHORIZED JPY Parking Auth',
      'capture PENDING JPY Parking Capture',
      'capture PENDING JPY Parking Capture',
    ]);
    // The capture after the restart repeats the second hold's choice: its currency, amount, rate, time stamp and offer.
    const secondAuth = amountDetailsOf(txs[1]);
    expect(amountDetailsOf(txs[3])).toEqual({
      totalAmount: secondAuth.totalAmount,
      currency: 'JPY',
      originalAmount: '1.50',
      originalCurrency: 'EUR',
      exchangeRate: secondAuth.exchangeRate,
      exchangeRateTimeStamp: secondAuth.exchangeRateTimeStamp,
      currencyConversion: secondAuth.currencyConversion,
    });
    expect(secondAuth.currencyConversion).toMatchObject({ indicator: '1' });
    expect(typeof (secondAuth.currencyConversion as { id?: unknown }).id).toBe('string');
    expectNothingLeftOpen(again);
  });
});
