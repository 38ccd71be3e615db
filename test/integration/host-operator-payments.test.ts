/**
 * Operator mode's payment links and alternative-method sales through the real host and the real sandbox: the operator
 * actions behind the PIN, their effect at the gateway (the sandbox's own record) and in the journal, and the audit log.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { OperatorAction, OperatorResponse, Result } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { PaymentLinkStore } from '../../src/journal/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const MINUTE = 60_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

const config = parseConfig({
  terminal: { model: 'kiosk' },
  links: { notifications: { listen: { port: 0 } } },
  alternativeMethods: { profiles: [{ profile: 1, methodName: 'METHOD_1', label: 'Bank transfer' }] },
});
const customer = { email: 'ana@example.com', firstName: 'Ana', lastName: 'Ruiz' };

/** The sandbox and the terminal on one moved clock (signatures carry dates the sandbox checks). */
async function world() {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const clock = { offset: 0 };
  const host: TerminalHost = await createTerminalHost(config, {
    logger: silentLogger(),
    cwd: mkdtempSync(join(tmpdir(), 'pt-operator-payments-')),
    gatewayUrlOverride: sandbox.url,
    now: () => new Date(Date.now() + clock.offset),
  });
  open.push(host);
  const pin = host.pin.generated ?? '';
  const operator = (action: OperatorAction, as = pin): Promise<Result<OperatorResponse>> =>
    host.operator({ pin: as, action });
  const advance = (ms: number): void => {
    clock.offset += ms;
    sandbox.advanceClock(ms);
  };
  return { sandbox, host, pin, operator, advance, links: new PaymentLinkStore(host.journal) };
}

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

describe('operator mode through the host and the sandbox', () => {
  it('lists the links a page at a time, deactivates and reactivates one at the gateway and in the journal', async () => {
    const w = await world();
    const currency = w.host.config.terminal.currency;
    const made: { linkId: string }[] = [];
    for (const reference of ['TICKET-1', 'TICKET-2', 'TICKET-3'])
      made.push(await w.host.links.createForFee({ reference, amountMinor: 600, currency }));

    expect(await w.operator({ type: 'links' }, `${w.pin}9`)).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_PIN' },
    });
    const first = value(await w.operator({ type: 'links', offset: 0, limit: 2 }));
    if (first.type !== 'links') throw new Error('not a links page');
    expect(first.links).toHaveLength(2);
    expect(first.next).toEqual({ offset: 2, limit: 2 });
    const second = value(await w.operator({ type: 'links', offset: 2, limit: 2 }));
    if (second.type !== 'links') throw new Error('not a links page');
    const all = [...first.links, ...second.links];
    expect(all.map((l) => l.id).sort()).toEqual(made.map((m) => m.linkId).sort());
    expect(all.find((l) => l.id === made[0]?.linkId)).toMatchObject({
      status: 'ACTIVE',
      terminal: { state: 'active', reference: 'TICKET-1', purpose: 'fee' },
      allowed: ['deactivate'],
    });

    const linkId = made[0]?.linkId ?? '';
    expect(value(await w.operator({ type: 'link-deactivate', linkId }))).toMatchObject({
      link: { id: linkId, status: 'INACTIVE', allowed: ['reactivate'] },
    });
    expect((await w.host.gateway.paymentLinks.get(linkId)).status).toBe('INACTIVE');
    expect(w.links.get(linkId)).toMatchObject({
      state: 'deactivated',
      closeReason: 'operator',
      gatewayInactive: true,
    });

    expect(value(await w.operator({ type: 'link-reactivate', linkId }))).toMatchObject({
      link: { status: 'ACTIVE', allowed: ['deactivate'] },
    });
    const again = await w.host.gateway.paymentLinks.get(linkId);
    expect(again).toMatchObject({ status: 'ACTIVE', totalAmountMinor: 600, currency });
    expect(again.lineItems).toHaveLength(1);
    expect(w.links.get(linkId)).toMatchObject({ state: 'active', gatewayInactive: false });

    const records = w.host.audit
      .list()
      .filter((r) => r.action === 'link-deactivate' || r.action === 'link-reactivate');
    expect(records.map((r) => `${r.actor}:${r.action}:${r.subject ?? ''}:${r.result}`)).toEqual([
      `operator:link-deactivate:${linkId}:ok`,
      `operator:link-reactivate:${linkId}:ok`,
    ]);
  });

  it('lists a settled alternative-method sale and refunds part of it; more than remains is refused', async () => {
    const w = await world();
    const sale = await w.host.altPayments.start(1, { code: 'TICKET-42', amountMinor: 1250, customer });
    const paid = await fetch(sale.paymentUrl ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
    });
    expect(paid.status).toBe(200);
    w.advance(61 * MINUTE);
    expect(await w.host.altPayments.runDue()).toBe(1);

    const listed = value(await w.operator({ type: 'alt-sales', status: ['settled'] }));
    expect(listed).toMatchObject({
      type: 'alt-sales',
      sales: [{ id: sale.id, status: 'settled', refundable: { minor: 1250 }, allowed: ['refund'] }],
    });
    expect(JSON.stringify(listed)).not.toMatch(/ana@example\.com|Ruiz|\/ap\//);

    expect(
      await w.operator({ type: 'alt-refund', saleId: sale.id, amountMinor: 500 }, `${w.pin}9`),
    ).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN' } });
    expect(value(await w.operator({ type: 'alt-refund', saleId: sale.id, amountMinor: 500 }))).toMatchObject({
      refund: { amount: { minor: 500 }, state: 'accepted' },
      sale: { refundable: { minor: 750 } },
    });
    expect(await w.operator({ type: 'alt-refund', saleId: sale.id, amountMinor: 800 })).toMatchObject({
      ok: false,
      error: { code: 'ALT_REFUND_ABOVE_SETTLED' },
    });
    const atGateway = w.sandbox.ledger().transactions.find((t) => t.id === sale.gatewayId);
    expect(atGateway?.amounts).toMatchObject({ captured: 1250, refunded: 500 });
    expect(
      w.host.audit
        .list()
        .filter((r) => r.action === 'refund')
        .map((r) => `${r.subject ?? ''}:${r.result}:${r.code ?? ''}`),
    ).toEqual([`alt-sale:${sale.id}:ok:accepted`, `alt-sale:${sale.id}:refused:ALT_REFUND_ABOVE_SETTLED`]);
  });
});
