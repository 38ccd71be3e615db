/**
 * Operator refunds and voids of card payments through the real host and the embedded sandbox: what the terminal sends
 * to the gateway, and what it refuses by its own rules (src/flows/operator.ts operatorService, over the journal's
 * reading of the payment, src/host/operator-desk.ts findTransaction).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type {
  OperatorAction,
  OperatorResponse,
  Result,
  TerminalSnapshot,
  UserEvent,
} from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { closeHosts, startHost } from './host-harness.js';
import { modelConfig, startModelHost } from './models-harness.js';

afterEach(closeHosts);

async function send(host: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

async function waitForScreen(host: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    await new Promise((res) => setTimeout(res, 20));
  }
}

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** An attended terminal with an approved sale of `minor`; its transactionId and the operator's actions. */
async function paidSale(minor: number, journal: { resolutionRetryMs?: number } = {}) {
  const host = await startHost({ terminal: { model: 'attended' }, journal });
  await waitForScreen(host, ['idle']);
  await send(host, { type: 'START' });
  await send(host, { type: 'ENTER_AMOUNT', minor });
  await send(host, { type: 'CONFIRM' });
  expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
  const sale = host.journal.list({ limit: 10 }).find((e) => e.service === 'sale' && e.state === 'approved');
  if (sale?.transactionId === undefined) throw new Error('no approved sale in the journal');
  const pin = host.generatedOperatorPin ?? '';
  const operator = async (action: OperatorAction): Promise<OperatorResponse> =>
    value(await host.operator({ pin, action }));
  /** The follow-ons of the sale the gateway received (its own ledger). */
  const atGateway = () =>
    (host.sandbox?.ledger().transactions ?? [])
      .filter((t) => t.kind !== 'sale')
      .map((t) => [t.kind, t.status]);
  return { host, saleTx: sale.transactionId, operator, atGateway };
}

describe('operator refunds and voids given at the same time', () => {
  it('refunds no more than was paid when two refunds of one sale are asked at once', async () => {
    const { saleTx, operator, atGateway } = await paidSale(600);
    const [first, second] = await Promise.all([
      operator({ type: 'refund', transactionId: saleTx, amountMinor: 400 }),
      operator({ type: 'refund', transactionId: saleTx, amountMinor: 400 }),
    ]);
    expect(first).toMatchObject({ outcome: 'approved' });
    // 4.00 of the 6.00 are refunded: the terminal's own rule refuses the second 4.00, which is never sent.
    expect(second).toMatchObject({ outcome: 'not-allowed', code: 'REFUND_EXCEEDS_CAPTURED' });
    expect(atGateway()).toEqual([['refund', 'PENDING']]);
  });

  it('does not void a sale whose refund is asked at the same time', async () => {
    const { saleTx, operator, atGateway } = await paidSale(600);
    const [refund, voided] = await Promise.all([
      operator({ type: 'refund', transactionId: saleTx, amountMinor: 200 }),
      operator({ type: 'void', transactionId: saleTx }),
    ]);
    expect(refund).toMatchObject({ outcome: 'approved' });
    expect(voided).toMatchObject({ outcome: 'not-allowed', code: 'REFUNDS_STANDING' });
    expect(atGateway()).toEqual([['refund', 'PENDING']]);
  });
});

describe('operator refunds after terminal.currency changed', () => {
  it('refunds a sale in the currency it was paid in, not the one configured since', async () => {
    const sandbox = await startSandbox({ logger: silentLogger() });
    const cwd = mkdtempSync(join(tmpdir(), 'pt-refund-currency-'));
    const open = async (currency: string): Promise<TerminalHost> => {
      const config = parseConfig({
        terminal: { model: 'attended', currency },
        reader: { sim: { presentDelayMs: 50 } },
      });
      const host = await createTerminalHost(config, {
        logger: silentLogger(),
        cwd,
        gatewayUrlOverride: sandbox.url,
      });
      await waitForScreen(host, ['idle']);
      return host;
    };
    try {
      // A sale of 6.00 GBP; the operator then changes terminal.currency to EUR and restarts.
      const first = await open('GBP');
      await send(first, { type: 'START' });
      await send(first, { type: 'ENTER_AMOUNT', minor: 600 });
      await send(first, { type: 'CONFIRM' });
      expect((await waitForScreen(first, ['approved', 'declined', 'error'])).customer.screen).toBe(
        'approved',
      );
      const sale = first.journal.list({ limit: 10 }).find((e) => e.service === 'sale');
      const saleTx = sale?.transactionId ?? '';
      await first.close();

      const again = await open('EUR');
      try {
        const refund = value(
          await again.operator({
            pin: again.generatedOperatorPin ?? '',
            action: { type: 'refund', transactionId: saleTx, amountMinor: 200 },
          }),
        );
        const refunds = again.journal
          .referencing(saleTx)
          .filter((e) => e.service === 'refund-payment')
          .map((e) => ({ state: e.state, amountMinor: e.amountMinor, currency: e.currency }));
        // The operator refunded 2.00 of the 6.00 GBP listed: 2.00 GBP, as the sale was paid.
        const outcome = 'outcome' in refund ? refund.outcome : refund.type;
        expect({ outcome, refunds }).toEqual({
          outcome: 'approved',
          refunds: [{ state: 'approved', amountMinor: 200, currency: 'GBP' }],
        });
      } finally {
        await again.close();
      }
    } finally {
      await sandbox.close();
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('operator refunds whose answer was lost', () => {
  it('tells the operator that the terminal cancels the refund, which it then does: the sale is refundable again', async () => {
    const { host, saleTx, operator, atGateway } = await paidSale(1000, { resolutionRetryMs: 100 });
    // The refund reaches the gateway and its answer is lost; so are the answers to the timeout voids that follow it.
    host.sandbox?.scheduleFaults([
      { kind: 'timeout-502', path: '/refunds' },
      ...Array.from({ length: 4 }, () => ({ kind: 'server-error-502' as const, path: '/voids' })),
    ]);
    const refund = await operator({ type: 'refund', transactionId: saleTx, amountMinor: 300 });
    expect(refund).toMatchObject({ type: 'refund', outcome: 'unknown' });
    // Recovery's plan of a refund left unknown is its timeout void (reference/gateway.md §2): the operator must not
    // be told that the terminal finishes it, nor tell the customer that the money is on its way.
    expect('message' in refund ? refund.message : '').toBe(
      'The answer to the refund was lost: the terminal is cancelling it. Do not tell the customer it is refunded; ' +
        'once the transaction list shows it resolved (timeout-void), nothing was refunded: refund again',
    );
    await host.settle(20_000);
    expect(atGateway()).toEqual([
      ['refund', 'VOIDED'],
      ['timeout-void', 'VOIDED'],
    ]);
    const listed = await operator({ type: 'transactions' });
    const sale =
      listed.type === 'transactions'
        ? listed.transactions.find((t) => t.transactionId === saleTx)
        : undefined;
    const cancelled =
      listed.type === 'transactions'
        ? listed.transactions.find((t) => t.service === 'refund-payment')
        : undefined;
    expect(cancelled).toMatchObject({
      transactionId: 'transactionId' in refund ? refund.transactionId : '',
      state: 'resolved (timeout-void)',
    });
    expect(sale).toMatchObject({ amount: { minor: 1000 }, allowed: ['refund', 'void'] });
    // The audit log says so too: the refund recorded with its outcome unknown, then cancelled — nothing refunded.
    const audit = await operator({ type: 'audit' });
    expect(
      (audit.type === 'audit' ? audit.records : [])
        .filter((r) => r.action === 'refund')
        .map((r) => [r.actor, r.subject, r.result, r.code, r.details.outcome, r.details.sentTransactionId]),
    ).toEqual([
      ['operator', saleTx, 'failed', 'UNKNOWN', 'unknown', cancelled?.transactionId],
      ['system', saleTx, 'failed', 'timeout-void', 'cancelled', cancelled?.transactionId],
    ]);
  });
});

describe('operator voids whose answer was lost', () => {
  it('records in the audit log what became of the void once recovery finished it', async () => {
    const { host, saleTx, operator, atGateway } = await paidSale(1000, { resolutionRetryMs: 100 });
    // The void reaches the gateway and its answer is lost: recovery finishes it by a timeout void of the sale.
    host.sandbox?.scheduleFaults([{ kind: 'timeout-502', path: '/voids' }]);
    const voided = await operator({ type: 'void', transactionId: saleTx });
    expect(voided).toMatchObject({ type: 'void', outcome: 'unknown' });
    await host.settle(20_000);
    expect(atGateway()).toEqual([
      ['void', 'VOIDED'],
      ['timeout-void', 'VOIDED'],
    ]);
    const audit = await operator({ type: 'audit' });
    const records = audit.type === 'audit' ? audit.records : [];
    expect(
      records
        .filter((r) => r.action === 'void' || r.action === 'recovery')
        .map((r) => [r.actor, r.action, r.subject, r.result, r.code, r.details.outcome]),
    ).toEqual([
      ['operator', 'void', saleTx, 'failed', 'UNKNOWN', 'unknown'],
      ['system', 'recovery', saleTx, 'ok', 'timeout-void', undefined],
      // The void went through: recovery's timeout void of the sale gave the money back.
      ['system', 'void', saleTx, 'ok', 'timeout-void', 'approved'],
    ]);
    // Once: a second resolution of the same entry is not recorded again.
    expect(records.filter((r) => r.action === 'void' && r.actor === 'system')).toHaveLength(1);
  });
});

describe('operator voids of a capture whose release of the hold got no answer', () => {
  it('tells the operator that the terminal finishes the release, which it then does', async () => {
    const m = await startModelHost(modelConfig('meter'));
    try {
      const { host, clock } = m;
      await send(host, { type: 'START' });
      await send(host, { type: 'CHOOSE_DURATION', minutes: 60 });
      await waitForScreen(host, ['confirm']);
      await send(host, { type: 'CONFIRM' });
      await waitForScreen(host, ['session']);
      clock.offsetMs += 30 * 60_000;
      await send(host, { type: 'END_SESSION' });
      expect((await waitForScreen(host, ['approved', 'error'])).customer.screen).toBe('approved');
      await host.settle(15_000);
      const capture = host.journal.list({ limit: 20 }).find((e) => e.service === 'capture');
      // The void of the capture is approved; the reversal of its hold reaches the gateway and its answer is lost.
      host.sandbox?.scheduleFaults([{ kind: 'timeout-502', path: '/reversals' }]);
      const voided = value(
        await host.operator({
          pin: host.generatedOperatorPin ?? '',
          action: { type: 'void', transactionId: capture?.transactionId ?? '' },
        }),
      );
      // Recovery's plan of a reversal left unknown is a timeout reversal of the whole authorization: the hold is
      // released by the terminal, not left for the operator to release at the processor.
      // The void itself went through: it is approved, its code saying what became of the hold.
      expect(voided).toMatchObject({
        type: 'void',
        outcome: 'approved',
        code: 'HOLD_RELEASE_UNKNOWN',
        message:
          'Voided. The answer to the release of the authorization hold was lost: the terminal finishes it; ' +
          'see the transaction list',
      });
      await host.settle(15_000);
      const authorization = host.sandbox?.ledger().transactions.find((t) => t.kind === 'authorization');
      expect(authorization?.status).toBe('REVERSED');
      expect(host.journal.inFlight()).toEqual([]);
    } finally {
      await m.close();
    }
  });
});
