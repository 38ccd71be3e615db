/**
 * Alternative methods (spec 001) through the real stack and the real sandbox: the host's AltPaymentDesk sends AP_SALE,
 * the customer pays on the sandbox's page, AP_STATUS sees SETTLED, partial AP_REFUNDs follow within the settled
 * amount; the sandbox (which refuses and counts any status check sooner than 60 minutes) never sees one too early,
 * and a restart with a pending sale resumes its checks from the journal.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { runAltMethodSimulation } from '../../src/host/alt-simulation.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const MINUTE = 60_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

const config = parseConfig({
  terminal: { model: 'kiosk' },
  alternativeMethods: { profiles: [{ profile: 1, methodName: 'METHOD_1', label: 'Bank transfer' }] },
});
const customer = { email: 'ana@example.com', firstName: 'Ana', lastName: 'Ruiz' };

/** The sandbox and the terminal on one moved clock (signatures carry dates the sandbox checks). */
async function world() {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-alt-'));
  const clock = { offset: 0 };
  const advance = (ms: number): void => {
    clock.offset += ms;
    sandbox.advanceClock(ms);
  };
  const host = async (): Promise<TerminalHost> => {
    const h = await createTerminalHost(config, {
      logger: silentLogger(),
      cwd,
      gatewayUrlOverride: sandbox.url,
      now: () => new Date(Date.now() + clock.offset),
    });
    open.push(h);
    return h;
  };
  const saleAt = (id: string | undefined) => sandbox.ledger().transactions.find((t) => t.id === id);
  return { sandbox, host, advance, saleAt, now: () => Date.now() + clock.offset };
}

async function pay(url: string): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=pay',
  });
  expect(res.status).toBe(200);
}

describe('alternative-method sales through the embedded sandbox', () => {
  it('goes PENDING → SETTLED and refunds partially; a refund above the settled amount is refused', async () => {
    const w = await world();
    const host = await w.host();
    const sale = await host.altPayments.start(1, { code: 'TICKET-42', amountMinor: 1250, customer });
    expect(sale.state).toBe('PENDING');
    expect(sale.paymentUrl).toMatch(new RegExp(`^${w.sandbox.url}/ap/`));
    await pay(sale.paymentUrl ?? '');
    // Nothing is checked before the interval (and the minute the terminal adds for network latency).
    w.advance(60 * MINUTE);
    expect(await host.altPayments.runDue()).toBe(0);
    w.advance(MINUTE);
    expect(await host.altPayments.runDue()).toBe(1);
    expect(host.altPayments.get(sale.id)).toMatchObject({ state: 'SETTLED', settledMinor: 1250 });

    const partial = await host.altPayments.refund(sale.id, 500);
    expect(partial).toMatchObject({ state: 'accepted', amountMinor: 500 });
    await expect(host.altPayments.refund(sale.id, 800)).rejects.toMatchObject({
      code: 'ALT_REFUND_ABOVE_SETTLED',
    });
    const gatewaySale = w.saleAt(sale.gatewayId);
    expect(gatewaySale?.amounts).toMatchObject({ captured: 1250, refunded: 500 });
    const refunds = w.sandbox.ledger().transactions.filter((t) => t.kind === 'refund');
    expect(refunds.map((r) => r.status)).toEqual(['REFUNDED']);
    // The refund went through the journal as a money-moving refund of the payment, outcome recorded.
    const entry = host.journal.get(partial.entryId);
    expect(entry).toMatchObject({ service: 'refund-payment', state: 'approved', moneyMoving: true });
    expect(w.sandbox.consistency().ok).toBe(true);
  });

  it('never polls faster than every 60 minutes, and resumes the checks of a pending sale after a restart', async () => {
    const w = await world();
    let host = await w.host();
    const sale = await host.altPayments.start(1, { code: 'TICKET-43', amountMinor: 800, customer });
    // Ask every seven minutes for almost two hours (the sandbox abandons an unpaid sale at two); restart in between.
    for (let minute = 7; minute <= 119; minute += 7) {
      w.advance(7 * MINUTE);
      if (minute === 70) {
        await host.close();
        open.splice(open.indexOf(host), 1);
        host = await w.host();
      }
      await host.altPayments.runDue();
    }
    const atGateway = w.saleAt(sale.gatewayId);
    expect(atGateway?.altPayment?.statusChecksTooEarly).toBe(0);
    expect(atGateway?.altPayment?.statusChecks).toBe(1);
    expect(host.altPayments.get(sale.id)).toMatchObject({ state: 'PENDING', checks: 1 });

    // Paid while the terminal was restarted: the next check (from the journal's times) sees it.
    await pay(host.altPayments.get(sale.id)?.paymentUrl ?? '');
    const next = host.altPayments.nextCheckAt() ?? 0;
    w.advance(Math.max(0, next - w.now()) + MINUTE);
    await host.altPayments.runDue();
    expect(host.altPayments.get(sale.id)).toMatchObject({ state: 'SETTLED', checks: 2 });
    expect(w.saleAt(sale.gatewayId)?.altPayment).toMatchObject({ statusChecks: 2, statusChecksTooEarly: 0 });
    expect(w.sandbox.consistency().ok).toBe(true);
  });

  it.each([1, 3, 8])(
    'simulate kiosk --alt-method %i: AP_SALE, AP_STATUS SETTLED, a partial AP_REFUND',
    async (n) => {
      const result = await runAltMethodSimulation(n);
      expect(result.messages.map((m) => [m.service, m.httpStatus, m.status])).toEqual([
        ['AP_SALE', 201, 'PENDING'],
        ['AP_STATUS', 200, 'SETTLED'],
        ['AP_REFUND', 201, 'REFUNDED'],
      ]);
      expect(result.altSale).toMatchObject({ state: 'SETTLED', settledMinor: 1250, refundedMinor: 500 });
      expect(result.ledger.consistency.ok).toBe(true);
    },
  );

  it('an AP refund whose answer is lost is voided by recovery (timeout void by its transactionId), never resent', async () => {
    const w = await world();
    const host = await w.host();
    const sale = await host.altPayments.start(1, { code: 'TICKET-44', amountMinor: 1000, customer });
    await pay(sale.paymentUrl ?? '');
    w.advance(61 * MINUTE);
    await host.altPayments.runDue();
    w.sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/refunds', method: 'POST' }]);
    const refund = await host.altPayments.refund(sale.id, 400);
    expect(refund.state).toBe('in-flight');
    await host.settle(30_000);
    const after = host.altPayments.get(sale.id);
    expect(after?.refunds.map((r) => r.state)).toEqual(['voided']);
    expect(after?.refundableMinor).toBe(1000);
    const kinds = w.sandbox.ledger().transactions.map((t) => t.kind);
    expect(kinds.filter((k) => k === 'refund')).toHaveLength(1);
    expect(kinds).toContain('timeout-void');
    expect(w.saleAt(sale.gatewayId)?.amounts.refunded).toBe(0);
    expect(w.sandbox.consistency({ requireResolved: true }).ok).toBe(true);
  });
});
