/**
 * Operator refunds and voids of card payments through the real host and the embedded sandbox: what the terminal sends
 * to the gateway, and what it refuses by its own rules (src/flows/operator.ts operatorService, over the journal's
 * reading of the payment, src/host/operator-desk.ts findTransaction).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  OperatorAction,
  OperatorResponse,
  Result,
  TerminalSnapshot,
  UserEvent,
} from '../../src/host/api.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { closeHosts, startHost } from './host-harness.js';

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
async function paidSale(minor: number) {
  const host = await startHost({ terminal: { model: 'attended' } });
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
