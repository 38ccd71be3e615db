import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../src/gateway/index.js';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { openTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { hostedPageAnswer } from './link-harness.js';
import {
  ParkingClock,
  modelConfig,
  refusedUnprocessed,
  sandboxOpenAuthorizations,
  sendEvent,
  waitForScreen,
} from './models-harness.js';
import { startRewritingProxy } from './rewriting-proxy.js';

/**
 * The same card tapped at a tap-and-go exit again after an exit that did not end its hold, on a real host against the
 * sandbox:
 * - the first exit's capture has an unknown outcome that recovery cannot resolve yet (its timeout voids are lost too):
 *   what the gateway holds of the authorization is unknown until that capture is resolved, so the second exit must not
 *   capture it again (no blind resend, DESIGN.md rule 2) — it is a hold being settled, as one whose reversal is unknown;
 * - the first exit was paid by phone and the reversal of the hold was refused: the stay is paid, its hold is only to be
 *   released, and the second exit must not charge it again.
 * And the release an exit decided while its capture's outcome was unknown: it goes as soon as recovery resolves that
 * capture (voided: the whole authorization reversed; found standing: nothing, the gateway released the rest), after a
 * restart too — not at the hold's expiry, up to the maximum stay later.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** 45 minutes cost 3.00 (captured below the 5.98 hold). */
const STAY_MS = 45 * 60_000;

interface Lane {
  sandbox: Sandbox;
  clock: ParkingClock;
  host: TerminalHost;
  /** The terminal's directory (its journal database). */
  cwd: string;
}

/**
 * A tap-and-go terminal, started, with a parking clock of its own. `payByPhone`: the exit offers the phone beside the
 * card, which needs the link-paid notifications of the embedded sandbox; otherwise a standalone sandbox. `restart`:
 * the terminal starts again on the journal, the standalone sandbox and the clock of an earlier lane. `currency`: the
 * configured terminal.currency (default GBP). `oneStayPerCard`: tariff.tapAndGoOneStayPerCard (default: unset, on).
 * `rewrite`, `answerInstead`: the terminal reaches the standalone sandbox through a proxy that hands each answer to
 * `rewrite`, and answers a request `answerInstead` names without forwarding it (see rewriting-proxy.ts).
 */
async function lane(
  options: {
    payByPhone?: boolean;
    restart?: Lane;
    currency?: string;
    oneStayPerCard?: boolean;
    rewrite?: Parameters<typeof startRewritingProxy>[1];
    answerInstead?: Parameters<typeof startRewritingProxy>[2];
  } = {},
): Promise<Lane> {
  const embedded = options.payByPhone === true;
  const earlier = options.restart;
  const standalone = embedded
    ? undefined
    : (earlier?.sandbox ?? (await startSandbox({ logger: silentLogger() })));
  if (standalone && !earlier) cleanups.push(() => standalone.close());
  const cwd = earlier?.cwd ?? mkdtempSync(join(tmpdir(), 'pt-tap-exits-'));
  if (!earlier) cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const clock = earlier?.clock ?? new ParkingClock();
  const proxy =
    standalone && (options.rewrite || options.answerInstead)
      ? await startRewritingProxy(standalone.url, options.rewrite ?? (() => undefined), options.answerInstead)
      : undefined;
  if (proxy) cleanups.push(() => proxy.close());
  const config = modelConfig('tap-and-go', {
    ...(options.currency !== undefined ? { terminal: { currency: options.currency } } : {}),
    tariff: {
      tapAndGoHoldMinor: 598,
      ...(options.oneStayPerCard !== undefined ? { tapAndGoOneStayPerCard: options.oneStayPerCard } : {}),
    },
    ...(embedded ? { links: { payByPhone: { models: ['tap-and-go'] } } } : {}),
  });
  const host = await openTerminalHost(config, {
    logger: silentLogger(),
    cwd,
    parkingClock: clock,
    ...(standalone ? { gatewayUrlOverride: proxy?.url ?? standalone.url } : {}),
  });
  cleanups.push(() => host.close());
  await host.begin();
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  const sandbox = standalone ?? host.sandbox;
  if (!sandbox) throw new Error('no sandbox');
  return { sandbox, clock, host, cwd };
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

/** The n2-contact card taps at the exit: the screen the exit ends on (or asks on). */
async function tapAtExit(host: TerminalHost, what: string): Promise<TerminalSnapshot> {
  host.simulator!.setCard('n2-contact');
  await sendEvent(host, { type: 'TAP_EXIT' });
  return waitForScreen(
    host,
    (s) => ['approved', 'declined', 'error', 'pay-by-phone', 'confirm'].includes(s.customer.screen),
    what,
  );
}

/** The reason the tap-and-go machine gives for what it shows. */
function reasonOf(host: TerminalHost): unknown {
  return (host.actor?.getSnapshot() as { context?: { reason?: unknown } } | undefined)?.context?.reason;
}

/** The journal's requests for an authorization, `service:state`. */
function sentFor(host: TerminalHost, transactionId: string): string[] {
  return host.journal.referencing(transactionId).map((e) => `${e.service}:${e.state}`);
}

async function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

describe('tap-and-go: the card tapped at the exit again while the first exit’s capture is unresolved', () => {
  it('captures nothing again: the hold is being settled until recovery resolves that capture', async () => {
    const { sandbox, clock, host } = await lane();
    const holdId = await enter(host);

    // The capture reaches the gateway and its answer is lost; every timeout void of it is lost before the gateway
    // until the faults are cleared: its outcome stays unknown at the terminal meanwhile.
    sandbox.scheduleFaults([
      { kind: 'reset-after-commit', path: '/captures' },
      ...Array.from({ length: 400 }, () => ({ kind: 'reset-before-commit' as const, path: '/pts/v2/voids' })),
    ]);
    clock.offsetMs = STAY_MS;
    const first = await tapAtExit(host, 'the first exit');
    expect(first.customer.screen).toBe('error');
    expect(sentFor(host, holdId).filter((e) => e.startsWith('capture'))).toEqual(['capture:unknown']);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    // The exit handed the hold back (its release held back while the capture is unresolved).
    await until(() => host.holds.unclaimed().some((h) => h.holdId === holdId), 'the hold handed back');

    // The customer, still behind the shut gate, taps again.
    clock.offsetMs = STAY_MS + 2 * 60_000;
    const second = await tapAtExit(host, 'the second exit');
    expect({
      screen: second.customer.screen,
      reason: reasonOf(host),
      captures: sentFor(host, holdId).filter((e) => e.startsWith('capture')),
    }).toEqual({ screen: 'error', reason: 'HOLD_BEING_SETTLED', captures: ['capture:unknown'] });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toHaveLength(1);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // The gateway answers again: recovery voids the capture, and the exit's release of the hold goes then.
    await fetch(new URL('/__sandbox/faults', sandbox.url), { method: 'DELETE' });
    await until(
      () => !host.journal.referencing(holdId).some((e) => e.service === 'capture' && e.state === 'unknown'),
      'the capture resolved',
    );
    expect(
      sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.voided),
    ).toEqual([true]);
    await until(() => !host.holds.has(holdId), 'the hold released');
    expect(sentFor(host, holdId).filter((e) => e.startsWith('reversal'))).toEqual(['reversal:approved']);
  }, 60_000);
});

describe('tap-and-go: the card tapped at the exit again after its stay was paid by phone and the hold not released', () => {
  it('charges nothing again: the hold is only to be released', async () => {
    const { sandbox, clock, host } = await lane({ payByPhone: true });
    const holdId = await enter(host);
    // Every reversal of the hold is refused for good (the authorization stands until the expiry reverses it).
    const send = host.gateway.send.bind(host.gateway);
    host.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'reversal') return send(...args);
      return refusedUnprocessed('INVALID_DATA');
    };

    clock.offsetMs = STAY_MS;
    const choice = await tapAtExit(host, 'the choice at the exit');
    expect({ screen: choice.customer.screen, amount: choice.customer.amount?.minor }).toEqual({
      screen: 'confirm',
      amount: 300,
    });
    await sendEvent(host, { type: 'PAY_BY_LINK' });
    const shown = await waitForScreen(host, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
    expect(await hostedPageAnswer(shown.customer.payByPhone!.url)).toContain('Payment approved');
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'paid by phone');
    expect(reasonOf(host)).toBe('PAID_BY_LINK');
    expect(sentFor(host, holdId)).toEqual(['reversal:rejected']);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // The same card at the exit again (a second tap, or the card's next exit within the maximum stay).
    clock.offsetMs = STAY_MS + 2 * 60_000;
    const again = await tapAtExit(host, 'the second exit');
    if (again.customer.screen === 'confirm') await sendEvent(host, { type: 'CONFIRM' });
    await waitForScreen(
      host,
      (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
      'the second exit ends',
    );
    expect({
      screen: again.customer.screen,
      reason: reasonOf(host),
      captures: sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured),
    }).toEqual({ screen: 'approved', reason: 'PAID_BY_LINK', captures: [] });
    // The stay was paid (its payment journaled on the hold): the exit opens as paid and sends nothing — the hold's
    // release is its expiry watch's, due from the payment on, each reversal refused as the first.
    expect(new Set(sentFor(host, holdId))).toEqual(new Set(['reversal:rejected']));
    expect(host.holds.has(holdId)).toBe(true);
  }, 60_000);
});

describe('tap-and-go: a card that enters again while a hold of an earlier entry is still open', () => {
  // One card for several vehicles (tariff.tapAndGoOneStayPerCard false): with the option on, such an entry is refused
  // (test/integration/tap-and-go-one-stay.test.ts).
  it('releases the earlier hold at once (its full reversal), and charges the exit for the last entry', async () => {
    const { sandbox, clock, host } = await lane({ oneStayPerCard: false });
    // The first stay's car left without an exit of the card (let out by the operator), or the entry was tried again:
    // its hold is still open when the card enters again.
    const first = await enter(host);
    clock.offsetMs = 6 * 60 * 60_000;
    host.simulator!.setCard('n2-contact');
    await sendEvent(host, { type: 'TAP_ENTRY' });
    await waitForScreen(host, (s) => s.customer.screen === 'session', 'the second entry');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    const second = host.holds.unclaimed().find((h) => h.holdId !== first)?.holdId;
    expect(second).toBeDefined();

    // One hold on the card: the earlier one is reversed in full now, not 24 hours after its entry.
    await until(() => !host.holds.has(first), 'the earlier hold released');
    const heldAtGateway = (transactionId: string) => {
      const auth = sandbox.ledger().transactions.find((t) => t.transactionId === transactionId);
      return auth ? auth.amounts.authorized - auth.amounts.captured - auth.amounts.reversed : undefined;
    };
    expect({
      firstSent: sentFor(host, first),
      firstHeld: heldAtGateway(first),
      secondHeld: heldAtGateway(second!),
      open: host.holds.unclaimed().map((h) => h.holdId),
    }).toEqual({ firstSent: ['reversal:approved'], firstHeld: 0, secondHeld: 598, open: [second] });

    // 45 minutes after the second entry: 3.00, captured from the second entry's hold.
    clock.offsetMs = 6 * 60 * 60_000 + STAY_MS;
    const exit = await tapAtExit(host, 'the exit');
    expect({
      screen: exit.customer.screen,
      amount: exit.customer.amount?.minor,
      captured: sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured),
      increments: sandbox.ledger().transactions.filter((t) => t.kind === 'incremental').length,
      firstSent: sentFor(host, first),
      secondSent: sentFor(host, second!),
    }).toEqual({
      screen: 'approved',
      amount: 300,
      captured: [300],
      increments: 0,
      firstSent: ['reversal:approved'],
      secondSent: ['capture:approved'],
    });
    expect(host.holds.size).toBe(0);
  }, 60_000);
});

describe('tap-and-go: the card tapped at the exit again after its capture was found standing by recovery', () => {
  it('shows the exit paid, without sending the customer to the pay station', async () => {
    const { sandbox, clock, host } = await lane();
    const holdId = await enter(host);
    // The capture reaches the gateway and its answer is lost; its timeout void is refused NOT_VOIDABLE (the processor's
    // cut-off passed): the capture stands, and the hold is dropped with the authorization settled.
    sandbox.scheduleFaults([{ kind: 'reset-after-commit', path: '/captures' }]);
    const send = host.gateway.send.bind(host.gateway);
    host.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'timeout-void') return send(...args);
      return refusedUnprocessed('NOT_VOIDABLE');
    };
    clock.offsetMs = STAY_MS;
    await tapAtExit(host, 'the first exit');
    await until(() => !host.holds.has(holdId), 'the hold dropped once the capture is found standing');
    expect(
      sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured),
    ).toEqual([300]);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // The customer, still behind the shut gate, taps again: the stay is paid.
    clock.offsetMs = STAY_MS + 2 * 60_000;
    const again = await tapAtExit(host, 'the second exit');
    expect({
      screen: again.customer.screen,
      reason: reasonOf(host),
      amount: again.customer.amount?.minor,
    }).toEqual({ screen: 'approved', reason: 'ALREADY_PAID', amount: 300 });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toHaveLength(1);
  }, 60_000);
});

describe('tap-and-go: an exit whose capture outcome is unknown, once recovery resolves that capture', () => {
  /**
   * A car enters and exits after 45 minutes; the exit's capture reaches the gateway and its answer is lost, and every
   * timeout void of it is lost too until the faults are cleared: the exit releases the hold and collects nothing, but
   * that release is held back while the capture is unresolved.
   */
  async function exitWithCaptureUnresolved(l: Lane): Promise<string> {
    const { sandbox, clock, host } = l;
    const holdId = await enter(host);
    sandbox.scheduleFaults([
      { kind: 'reset-after-commit', path: '/captures' },
      ...Array.from({ length: 400 }, () => ({ kind: 'reset-before-commit' as const, path: '/pts/v2/voids' })),
    ]);
    clock.offsetMs = STAY_MS;
    const exit = await tapAtExit(host, 'the exit');
    expect(exit.customer.screen).toBe('error');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    expect(sentFor(host, holdId).filter((e) => !e.startsWith('timeout-void'))).toEqual(['capture:unknown']);
    return holdId;
  }

  /** What the gateway and the terminal hold of the authorization `waitMs` after the capture was resolved. */
  async function afterResolution(l: Lane, holdId: string, waitMs = 3_000) {
    const { sandbox, host } = l;
    await until(
      () => !host.journal.referencing(holdId).some((e) => e.service === 'capture' && e.state === 'unknown'),
      'the capture resolved',
    );
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline && host.holds.has(holdId)) await new Promise((res) => setTimeout(res, 20));
    const auth = sandbox.ledger().transactions.find((t) => t.transactionId === holdId);
    return {
      captures: sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => ({ captured: t.amounts.captured, voided: t.voided })),
      heldAtGateway: auth
        ? auth.amounts.authorized - auth.amounts.captured - auth.amounts.reversed
        : undefined,
      reversals: sentFor(host, holdId).filter((e) => e.startsWith('reversal')),
      holdOpen: host.holds.has(holdId),
      followUpsOpen: host.followUps.open().filter((f) => f.authorizationTransactionId === holdId).length,
    };
  }

  it('voided: reverses the whole authorization at once, not at the expiry of the hold', async () => {
    const l = await lane();
    const holdId = await exitWithCaptureUnresolved(l);
    // The exit's decision to release the hold is durable already (the journal database), before anything resolves.
    expect(l.host.followUps.open().map((f) => [f.authorizationTransactionId, f.amountMinor])).toEqual([
      [holdId, 598],
    ]);

    await fetch(new URL('/__sandbox/faults', l.sandbox.url), { method: 'DELETE' });
    expect(await afterResolution(l, holdId)).toEqual({
      captures: [{ captured: 300, voided: true }],
      heldAtGateway: 0,
      reversals: ['reversal:approved'],
      holdOpen: false,
      followUpsOpen: 0,
    });
  }, 60_000);

  it('found standing: sends no reversal (the gateway released the rest with the capture) and closes the hold', async () => {
    const l = await lane();
    const holdId = await exitWithCaptureUnresolved(l);
    // The timeout void that gets through is refused NOT_VOIDABLE (the processor's cut-off passed): the capture stands.
    const send = l.host.gateway.send.bind(l.host.gateway);
    l.host.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'timeout-void') return send(...args);
      return refusedUnprocessed('NOT_VOIDABLE');
    };
    await fetch(new URL('/__sandbox/faults', l.sandbox.url), { method: 'DELETE' });
    expect(await afterResolution(l, holdId)).toEqual({
      captures: [{ captured: 300, voided: false }],
      heldAtGateway: 0,
      reversals: [],
      holdOpen: false,
      followUpsOpen: 0,
    });
  }, 60_000);

  it('voided after a restart: the next start reverses the whole authorization before the first card', async () => {
    const first = await lane();
    const holdId = await exitWithCaptureUnresolved(first);
    await first.host.close();
    await fetch(new URL('/__sandbox/faults', first.sandbox.url), { method: 'DELETE' });

    const again = await lane({ restart: first });
    expect(await afterResolution(again, holdId, 0)).toEqual({
      captures: [{ captured: 300, voided: true }],
      heldAtGateway: 0,
      reversals: ['reversal:approved'],
      holdOpen: false,
      followUpsOpen: 0,
    });
  }, 60_000);
});

describe('tap-and-go: an exit whose fee exceeds the hold and whose increment is declined', () => {
  it('captures the hold and records the shortfall for the operator, in the journal database, without card data', async () => {
    const { sandbox, clock, host } = await lane();
    const holdId = await enter(host);
    // 180 minutes cost 9.00: the increment of 3.02 beyond the 5.98 hold is declined (the sandbox declines an amount
    // ending in 02), and the capture takes the 5.98 the hold covers.
    clock.offsetMs = 180 * 60_000;
    const exit = await tapAtExit(host, 'the exit');
    expect({
      screen: exit.customer.screen,
      amount: exit.customer.amount?.minor,
      reason: reasonOf(host),
      sent: sentFor(host, holdId),
      captured: sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured),
    }).toEqual({
      screen: 'approved',
      amount: 598,
      reason: 'INCREMENTAL_NOT_APPROVED',
      sent: ['incremental:declined', 'capture:approved'],
      captured: [598],
    });
    const capture = host.journal.referencing(holdId).find((e) => e.service === 'capture');

    // The durable fact: the audit log of the journal database, written with the capture's outcome.
    const records = host.audit.list({}).filter((r) => r.action === 'fee-shortfall');
    expect(
      records.map((r) => ({
        actor: r.actor,
        subject: r.subject,
        result: r.result,
        code: r.code,
        details: r.details,
      })),
    ).toEqual([
      {
        actor: 'system',
        subject: capture?.transactionId,
        result: 'refused',
        code: 'INCREMENTAL_NOT_APPROVED',
        details: {
          authorizationTransactionId: holdId,
          owedMinor: 900,
          capturedMinor: 598,
          shortfallMinor: 302,
          currency: host.config.terminal.currency,
        },
      },
    ]);
    expect(JSON.stringify(records)).not.toMatch(/\d{6}\*+\d{4}|\d{13,19}/);

    // The operator's status shows it, as what recovery left for the operator is shown.
    expect(
      host
        .status()
        .recovery.resolved.filter((i) => i.resolution.startsWith('fee-shortfall'))
        .map((i) => ({ transactionId: i.transactionId, service: i.service, amount: i.amount?.minor })),
    ).toEqual([{ transactionId: capture?.transactionId, service: 'capture', amount: 302 }]);

    // Operator mode's transaction list states it on the capture, read from the journal database (after a restart too).
    const listed = await host.operator({
      pin: host.generatedOperatorPin ?? '',
      action: { type: 'transactions' },
    });
    const summaries = listed.ok && listed.value.type === 'transactions' ? listed.value.transactions : [];
    expect(
      summaries
        .filter((t) => t.shortfall !== undefined)
        .map((t) => ({ transactionId: t.transactionId, service: t.service, shortfall: t.shortfall?.minor })),
    ).toEqual([{ transactionId: capture?.transactionId, service: 'capture', shortfall: 302 }]);

    // The operator status counts it until the operator acknowledges it: listed, acknowledged (audited), off the count.
    const pin = host.generatedOperatorPin ?? '';
    expect(host.status().feeShortfalls).toBe(1);
    const shown = await host.operator({ pin, action: { type: 'fee-shortfalls' } });
    expect(
      shown.ok && shown.value.type === 'fee-shortfalls'
        ? shown.value.shortfalls.map((f) => ({
            transactionId: f.transactionId,
            code: f.code,
            owed: f.owed.minor,
            captured: f.captured.minor,
            shortfall: f.shortfall.minor,
            authorizationTransactionId: f.authorizationTransactionId,
          }))
        : shown,
    ).toEqual([
      {
        transactionId: capture?.transactionId,
        code: 'INCREMENTAL_NOT_APPROVED',
        owed: 900,
        captured: 598,
        shortfall: 302,
        authorizationTransactionId: holdId,
      },
    ]);
    const acknowledged = await host.operator({
      pin,
      action: { type: 'fee-shortfall-acknowledge', transactionId: capture?.transactionId ?? '' },
    });
    expect(acknowledged).toMatchObject({
      ok: true,
      value: { type: 'fee-shortfall-acknowledge', acknowledged: true, shortfalls: [] },
    });
    expect(host.status().feeShortfalls).toBe(0);
    expect(
      host.audit
        .list({})
        .filter((r) => r.action === 'fee-shortfall-acknowledge')
        .map((r) => [r.actor, r.subject, r.result, r.code]),
    ).toEqual([['operator', capture?.transactionId, 'ok', 'ACKNOWLEDGED']]);
  }, 60_000);
});

describe('tap-and-go: an exit capture the gateway answers for less than asked', () => {
  it('shows what was captured, and records the fee less that for the operator with the capture’s outcome', async () => {
    // The gateway answers the capture 2.00 (`orderInformation.amountDetails.totalAmount`), whatever it was asked.
    const { sandbox, clock, host } = await lane({
      rewrite: (req, answer) => {
        const json = answer as {
          status?: string;
          orderInformation?: { amountDetails?: { totalAmount?: string } };
        };
        if (req.method !== 'POST' || !/^\/pts\/v2\/payments\/[^/]+\/captures$/.test(req.url))
          return undefined;
        if (json.status !== 'PENDING' || !json.orderInformation?.amountDetails) return undefined;
        json.orderInformation.amountDetails.totalAmount = '2.00';
        return json;
      },
    });
    const holdId = await enter(host);
    // 45 minutes cost 3.00, within the 5.98 hold: the capture asks 3.00 and takes 2.00.
    clock.offsetMs = STAY_MS;
    const exit = await tapAtExit(host, 'the exit');
    expect({
      screen: exit.customer.screen,
      amount: exit.customer.amount?.minor,
      sent: sentFor(host, holdId),
    }).toEqual({ screen: 'approved', amount: 200, sent: ['capture:approved'] });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toHaveLength(1);
    const capture = host.journal.referencing(holdId).find((e) => e.service === 'capture');

    // The 1.00 the capture did not take is the operator's to know of, as when an increment is declined.
    expect(
      host.audit
        .list({})
        .filter((r) => r.action === 'fee-shortfall')
        .map((r) => ({ subject: r.subject, code: r.code, details: r.details })),
    ).toEqual([
      {
        subject: capture?.transactionId,
        code: 'CAPTURED_LESS_THAN_ASKED',
        details: {
          authorizationTransactionId: holdId,
          owedMinor: 300,
          capturedMinor: 200,
          shortfallMinor: 100,
          currency: host.config.terminal.currency,
        },
      },
    ]);
    expect(host.status().feeShortfalls).toBe(1);
  }, 60_000);
});

describe('tap-and-go: an exit after the terminal’s currency was changed while the car was in', () => {
  it('charges no fee priced in the new currency: the hold is released in its own, the fee recorded for the operator', async () => {
    const first = await lane();
    const holdId = await enter(first.host);
    await first.host.close();

    // The operator changes terminal.currency (and with it the tariff's) from GBP to EUR and restarts.
    const again = await lane({ restart: first, currency: 'EUR' });
    const { sandbox, clock, host } = again;
    clock.offsetMs = STAY_MS;
    const exit = await tapAtExit(host, 'the exit');
    const auth = sandbox.ledger().transactions.find((t) => t.transactionId === holdId);
    expect({
      screen: exit.customer.screen,
      reason: reasonOf(host),
      sent: sentFor(host, holdId),
      captures: sandbox.ledger().transactions.filter((t) => t.kind === 'capture').length,
      authCurrency: auth?.currency,
      heldAtGateway: auth
        ? auth.amounts.authorized - auth.amounts.captured - auth.amounts.reversed
        : undefined,
      holdOpen: host.holds.has(holdId),
    }).toEqual({
      screen: 'error',
      reason: 'FEE_NOT_COMPUTABLE',
      sent: ['reversal:approved'],
      captures: 0,
      authCurrency: 'GBP',
      heldAtGateway: 0,
      holdOpen: false,
    });

    // The fee the tariff asks (45 minutes: 3.00, in the configured EUR) is uncollected: recorded for the operator.
    const records = host.audit.list({}).filter((r) => r.action === 'fee-shortfall');
    expect(records.map((r) => ({ subject: r.subject, code: r.code, details: r.details }))).toEqual([
      {
        subject: holdId,
        code: 'FEE_NOT_COMPUTABLE',
        details: {
          authorizedMinor: 598,
          holdCurrency: 'GBP',
          owedMinor: 300,
          capturedMinor: 0,
          shortfallMinor: 300,
          currency: 'EUR',
        },
      },
    ]);

    // Operator mode's transaction list says it on the hold, in the terminal's language (en-GB here).
    const listed = await host.operator({
      pin: host.generatedOperatorPin ?? '',
      action: { type: 'transactions' },
    });
    const summaries = listed.ok && listed.value.type === 'transactions' ? listed.value.transactions : [];
    expect(
      summaries
        .filter((t) => t.note !== undefined || t.shortfall !== undefined)
        .map((t) => ({
          transactionId: t.transactionId,
          service: t.service,
          shortfall: t.shortfall,
          note: t.note,
        })),
    ).toEqual([
      {
        transactionId: holdId,
        service: 'preauth',
        shortfall: { minor: 300, currency: 'EUR', text: '€3.00' },
        note: {
          code: 'FEE_NOT_COMPUTABLE',
          text: 'Fee of €3.00 not collected: the hold was in GBP, which the tariff cannot price. The hold was released and nothing was charged.',
          lang: 'en-GB',
        },
      },
    ]);
  }, 60_000);
});

describe('tap-and-go: an exit that owes nothing while the release of its hold cannot reach the gateway', () => {
  it('opens, and releases the hold as soon as the gateway takes the reversal, not at its expiry a day later', async () => {
    // The gateway refuses the terminal's credentials for every reversal (401: nothing processed, nothing reaches the
    // sandbox) until it is told otherwise.
    let refuseReversals = false;
    const { sandbox, clock, host } = await lane({
      answerInstead: (req) =>
        refuseReversals && req.method === 'POST' && /^\/pts\/v2\/payments\/[^/]+\/reversals$/.test(req.url)
          ? { status: 401, body: { response: { rmsg: 'Authentication Failed' } } }
          : undefined,
    });
    const holdId = await enter(host);
    refuseReversals = true;
    // Within the grace period: nothing owed.
    clock.offsetMs = 5 * 60_000;
    const exit = await tapAtExit(host, 'the exit');
    expect({ screen: exit.customer.screen, amount: exit.customer.amount?.minor }).toEqual({
      screen: 'approved',
      amount: 0,
    });
    expect(new Set(sentFor(host, holdId))).toEqual(new Set(['reversal:resolved']));
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // The gateway takes the terminal's requests again: the hold is released then, not at its expiry a day later.
    refuseReversals = false;
    await until(() => !host.holds.has(holdId), 'the hold released', 15_000);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
  }, 60_000);

  it('lets the card in again while its release waits for the gateway: the car has left', async () => {
    let refuseReversals = false;
    const { clock, host } = await lane({
      answerInstead: (req) =>
        refuseReversals && req.method === 'POST' && /^\/pts\/v2\/payments\/[^/]+\/reversals$/.test(req.url)
          ? { status: 401, body: { response: { rmsg: 'Authentication Failed' } } }
          : undefined,
    });
    const holdId = await enter(host);
    refuseReversals = true;
    clock.offsetMs = 5 * 60_000;
    expect((await tapAtExit(host, 'the exit')).customer.screen).toBe('approved');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    clock.offsetMs = 60 * 60_000;
    host.simulator!.setCard('n2-contact');
    await sendEvent(host, { type: 'TAP_ENTRY' });
    const entry = await waitForScreen(
      host,
      (s) => ['session', 'declined', 'error'].includes(s.customer.screen),
      'the entry',
    );
    expect({ screen: entry.customer.screen, reason: reasonOf(host) }).toEqual({
      screen: 'session',
      reason: 'APPROVED',
    });
    expect(host.holds.has(holdId)).toBe(true);
  }, 60_000);
});
