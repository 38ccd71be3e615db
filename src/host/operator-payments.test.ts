import { afterEach, describe, expect, it } from 'vitest';
import { alternativeMethodsSchema } from '../config/alt-methods.js';
import { parseConfig } from '../config/index.js';
import { FakeTerminal, testSettings } from '../flows/testing/fake-terminal.js';
import {
  GatewayError,
  type GatewayClient,
  type PaymentLink,
  type PaymentLinkInput,
} from '../gateway/index.js';
import {
  AuditStore,
  JournaledSender,
  openJournal,
  PaymentLinkStore,
  type AuditRecord,
  type SqliteJournal,
} from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { AltPaymentDesk } from './alt-payment-desk.js';
import type { OperatorAction, OperatorResponse, OperatorStatus, Result } from './api.js';
import { AuditTrail } from './audit-trail.js';
import { LinkDesk } from './link-desk.js';
import { OperatorDesk } from './operator-desk.js';
import { OperatorPin } from './operator-pin.js';

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;
const now = (): Date => new Date(t);

const journals: SqliteJournal[] = [];
const desks: LinkDesk[] = [];
afterEach(() => {
  for (const d of desks.splice(0)) d.stop();
  for (const j of journals.splice(0)) j.close();
  t = T0;
});

/** The gateway's payment links of the merchant, in memory: list pages, get, and updates that must repeat every field. */
class GatewayLinks {
  readonly links = new Map<string, PaymentLink>();
  readonly updates: { id: string; input: PaymentLinkInput }[] = [];
  readonly api: GatewayClient['paymentLinks'] = {
    create: (input) => Promise.resolve(this.put(input, 'ACTIVE')),
    update: (id, input) => {
      this.updates.push({ id, input });
      return Promise.resolve(this.put(input, input.status ?? 'ACTIVE'));
    },
    get: (id) => {
      const link = this.links.get(id);
      return link
        ? Promise.resolve(link)
        : Promise.reject(new GatewayError('GW_NOT_FOUND', 'not found', { httpStatus: 404 }));
    },
    list: ({ offset = 0, limit = 100 } = {}) => {
      const all = [...this.links.values()];
      return Promise.resolve({
        totalLinks: all.length,
        links: all.slice(offset, offset + limit),
        ...(offset + limit < all.length ? { next: { offset: offset + limit, limit } } : {}),
      });
    },
  };

  put(input: PaymentLinkInput, status: string): PaymentLink {
    const link: PaymentLink = {
      id: input.purchaseNumber,
      status,
      linkType: input.linkType,
      purchaseNumber: input.purchaseNumber,
      ...(status === 'ACTIVE' ? { paymentLink: `https://pay.example.test/pay/${input.purchaseNumber}` } : {}),
      currency: input.currency,
      totalAmountMinor: input.totalAmountMinor,
      lineItems: input.lineItems.map((i) => ({
        productName: i.productName,
        unitPriceMinor: i.unitPriceMinor,
        quantity: i.quantity ?? 1,
      })),
    };
    this.links.set(link.id, link);
    return link;
  }
}

const customer = { email: 'ana@example.com', firstName: 'Ana', lastName: 'Ruiz' };

/** An operator desk over one journal with the real link desk and alternative-method desk on fake gateways. */
function setup() {
  const journal = openJournal(':memory:', { now });
  journals.push(journal);
  const pin = new OperatorPin(undefined, () => t);
  const goodPin = pin.generated ?? '';
  const wrongPin = goodPin === '000000' ? '111111' : '000000';
  const fake = new FakeTerminal(T0);
  const audit = new AuditTrail(new AuditStore(journal), silentLogger());
  const gateway = new GatewayLinks();
  const links = new LinkDesk({
    terminalId: 'PT000001',
    store: new PaymentLinkStore(journal),
    gateway: { paymentLinks: gateway.api },
    audit,
    logger: silentLogger(),
    now,
    waitMs: 600_000,
    pollMs: 60_000,
    productName: 'Parking',
    partner: { developerId: '12345678', solutionId: 'PARKTERM' },
    notificationsReceived: true,
    notificationToleranceMs: 300_000,
  });
  desks.push(links);
  const refundsSent: string[] = [];
  const altPayments = new AltPaymentDesk({
    journal,
    sender: new JournaledSender(journal, {
      transmit: (request) => {
        refundsSent.push(request.transactionId ?? '');
        return Promise.resolve({
          kind: 'approved',
          gatewayId: `R-${request.transactionId ?? ''}`,
          status: 'REFUNDED',
          httpStatus: 201,
        });
      },
    }),
    gateway: {
      alternativeMethods: {
        sale: () =>
          Promise.resolve({ status: 'PENDING', id: 'G-1', paymentUrl: 'https://g.example.test/ap/G-1' }),
        status: () => Promise.reject(new Error('no status checks in these tests')),
      },
    },
    config: alternativeMethodsSchema.parse({
      profiles: [{ profile: 1, methodName: 'METHOD_1', label: 'Bank transfer' }],
    }),
    now,
    timers: { setTimeout: () => 0, clearTimeout: () => undefined },
    audit,
  });
  const desk = new OperatorDesk({
    config: parseConfig({}),
    journal,
    pin,
    effects: fake,
    settings: testSettings(),
    clock: fake.clock,
    now,
    logger: silentLogger(),
    authorizedTotal: () => undefined,
    toLocal: (_tx: string, minor: number, currency: string) => ({ minor, currency }),
    flushQueue: () => Promise.resolve({ forwarded: 0, declined: 0, remaining: 0 }),
    changed: () => undefined,
    status: () => ({ terminalId: 'T-1' }) as OperatorStatus,
    service: () => Promise.resolve({ outcome: 'ok' as const, message: 'done' }),
    audit,
    links,
    altPayments,
  });
  const operator = (action: OperatorAction, as = goodPin): Promise<Result<OperatorResponse>> =>
    desk.handle({ pin: as, action });
  /** A sale the customer paid: PENDING at the gateway, then SETTLED by a status check. */
  const settledSale = async (code: string, amountMinor: number): Promise<number> => {
    const sale = await altPayments.start(1, { code, amountMinor, customer });
    altPayments.store.recordStatus(sale.id, 'SETTLED');
    return sale.id;
  };
  const log = (): Omit<AuditRecord, 'id' | 'time'>[] =>
    desk.auditLog().map(({ id: _id, time: _time, ...r }) => r);
  return {
    desk,
    journal,
    gateway,
    links,
    altPayments,
    operator,
    goodPin,
    wrongPin,
    settledSale,
    refundsSent,
    log,
  };
}

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

describe('operator mode: payment links', () => {
  it('refuses every link and alternative-method action with a wrong PIN, sending and changing nothing', async () => {
    const s = setup();
    const created = await s.links.createForFee({ reference: 'TICKET-1', amountMinor: 600, currency: 'EUR' });
    const saleId = await s.settledSale('TICKET-2', 1250);
    const actions: OperatorAction[] = [
      { type: 'links' },
      { type: 'link-deactivate', linkId: created.linkId },
      { type: 'link-reactivate', linkId: created.linkId },
      { type: 'alt-sales' },
      { type: 'alt-refund', saleId, amountMinor: 100 },
    ];
    for (const action of actions)
      expect(await s.operator(action, s.wrongPin)).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN' },
      });
    expect(s.gateway.updates).toEqual([]);
    expect(s.refundsSent).toEqual([]);
    expect(s.links.get(created.linkId)?.state).toBe('active');
    expect(s.log().map((r) => `${r.action}:${r.code ?? ''}`)).toEqual(
      Array<string>(5).fill('sign-in-failed:OPERATOR_PIN'),
    );
  });

  it("lists the gateway's links a page at a time with what the journal knows of the terminal's own", async () => {
    const s = setup();
    await s.links.createForFee({ reference: 'TICKET-1', amountMinor: 600, currency: 'EUR' });
    await s.links.createForFee({
      reference: 'SESSION-7',
      amountMinor: 250,
      currency: 'EUR',
      purpose: 'pay-later',
    });
    // A link of another terminal of the merchant: listed, never changed from here.
    s.gateway.put(
      {
        linkType: 'PURCHASE',
        purchaseNumber: 'OTHER-1',
        currency: 'EUR',
        totalAmountMinor: 900,
        lineItems: [{ productName: 'Parking', unitPriceMinor: 900 }],
      },
      'ACTIVE',
    );
    const first = value(await s.operator({ type: 'links', offset: 0, limit: 2 }));
    expect(first).toMatchObject({
      type: 'links',
      offset: 0,
      limit: 2,
      totalLinks: 3,
      next: { offset: 2, limit: 2 },
    });
    if (first.type !== 'links') throw new Error('not a links page');
    expect(first.links).toEqual([
      expect.objectContaining({
        id: 'PT000001_TICKET-1',
        status: 'ACTIVE',
        amount: { minor: 600, currency: 'EUR', text: '€6.00' },
        terminal: expect.objectContaining({
          state: 'active',
          reference: 'TICKET-1',
          purpose: 'fee',
        }) as unknown,
        allowed: ['deactivate'],
      }),
      expect.objectContaining({
        id: 'PT000001_SESSION-7',
        terminal: expect.objectContaining({ reference: 'SESSION-7', purpose: 'pay-later' }) as unknown,
      }),
    ]);
    const second = value(await s.operator({ type: 'links', offset: 2, limit: 2 }));
    if (second.type !== 'links') throw new Error('not a links page');
    expect(second.next).toBeUndefined();
    expect(second.links).toEqual([expect.objectContaining({ id: 'OTHER-1', allowed: [] })]);
    expect(second.links[0]?.terminal).toBeUndefined();
    expect(await s.operator({ type: 'links', limit: 0 })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
  });

  it('deactivates a link at the gateway and in the journal, ending the wait; reactivates it, recorded once each', async () => {
    const s = setup();
    const created = await s.links.createForFee({ reference: 'TICKET-1', amountMinor: 600, currency: 'EUR' });
    const wait = s.links.watch(created.linkId);

    const off = value(await s.operator({ type: 'link-deactivate', linkId: created.linkId }));
    expect(off).toMatchObject({
      type: 'link-deactivate',
      link: { id: created.linkId, status: 'INACTIVE', allowed: ['reactivate'] },
    });
    // The update repeats every field of the link (spec 000), only the status changes.
    expect(s.gateway.updates).toEqual([
      {
        id: created.linkId,
        input: expect.objectContaining({
          status: 'INACTIVE',
          totalAmountMinor: 600,
          currency: 'EUR',
          lineItems: [expect.objectContaining({ productName: 'Parking', unitPriceMinor: 600 })],
        }) as unknown,
      },
    ]);
    expect(s.gateway.links.get(created.linkId)?.status).toBe('INACTIVE');
    expect(s.links.get(created.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'operator' });
    // A customer waiting on the link is told.
    await expect(wait).resolves.toMatchObject({ state: 'deactivated', closeReason: 'operator' });

    t += 60_000;
    const on = value(await s.operator({ type: 'link-reactivate', linkId: created.linkId }));
    expect(on).toMatchObject({ link: { status: 'ACTIVE', allowed: ['deactivate'] } });
    expect(s.gateway.links.get(created.linkId)?.status).toBe('ACTIVE');
    // Watched again for the wait; the reactivation is journaled before its update and again with the answer, each
    // moving the end of the wait 1 ms past the last, so that an older answer about the link can be told from it.
    expect(s.links.get(created.linkId)).toMatchObject({
      state: 'active',
      expiresAt: new Date(t + 600_001).toISOString(),
    });
    expect(s.log().filter((r) => r.action.startsWith('link-'))).toEqual([
      {
        actor: 'operator',
        action: 'link-deactivate',
        subject: created.linkId,
        result: 'ok',
        code: 'operator',
        details: { terminalLink: true, wasStatus: 'ACTIVE' },
      },
      {
        actor: 'operator',
        action: 'link-reactivate',
        subject: created.linkId,
        result: 'ok',
        code: 'ACTIVE',
        details: { terminalLink: true, wasStatus: 'INACTIVE' },
      },
    ]);
  });

  it('refuses a link of another terminal and the reactivation of a paid link, with the typed error', async () => {
    const s = setup();
    s.gateway.put(
      {
        linkType: 'PURCHASE',
        purchaseNumber: 'OTHER-1',
        currency: 'EUR',
        totalAmountMinor: 900,
        lineItems: [{ productName: 'Parking', unitPriceMinor: 900 }],
      },
      'ACTIVE',
    );
    expect(await s.operator({ type: 'link-deactivate', linkId: 'OTHER-1' })).toMatchObject({
      ok: false,
      error: { code: 'LINK_NOT_FOUND' },
    });
    const paid = await s.links.createForFee({ reference: 'TICKET-9', amountMinor: 600, currency: 'EUR' });
    s.links.notify({
      eventDate: now().toISOString(),
      linkId: paid.linkId,
      paymentId: 'PAY-1',
      status: 'AUTHORIZED',
      amountMinor: 600,
      currency: 'EUR',
    });
    await expect.poll(() => s.links.get(paid.linkId)?.closing).toBe(false);
    expect(await s.operator({ type: 'link-reactivate', linkId: paid.linkId })).toMatchObject({
      ok: false,
      error: { code: 'LINK_NOT_ALLOWED' },
    });
    expect(s.gateway.links.get('OTHER-1')?.status).toBe('ACTIVE');
    expect(s.gateway.links.get(paid.linkId)?.status).toBe('INACTIVE');
    expect(
      s
        .log()
        .filter((r) => r.actor === 'operator' && r.action.startsWith('link-'))
        .map((r) => `${r.action}:${r.subject ?? ''}:${r.result}:${r.code ?? ''}`),
    ).toEqual([
      'link-deactivate:OTHER-1:refused:LINK_NOT_FOUND',
      `link-reactivate:${paid.linkId}:refused:LINK_NOT_ALLOWED`,
    ]);
  });
});

describe('operator mode: alternative-method sales', () => {
  it('lists pending, settled, failed and abandoned sales with what may be refunded, and nothing of the customer', async () => {
    const s = setup();
    const pending = await s.altPayments.start(1, { code: 'TICKET-P', amountMinor: 400, customer });
    const settled = await s.settledSale('TICKET-S', 1250);
    const failed = await s.altPayments.start(1, { code: 'TICKET-F', amountMinor: 300, customer });
    s.altPayments.store.recordStatus(failed.id, 'FAILED', 'DECLINED');
    const abandoned = await s.altPayments.start(1, { code: 'TICKET-A', amountMinor: 200, customer });
    s.altPayments.store.recordStatus(abandoned.id, 'ABANDONED');

    const all = value(await s.operator({ type: 'alt-sales' }));
    if (all.type !== 'alt-sales') throw new Error('not the sales');
    expect(all.sales.map((x) => [x.id, x.status, x.state, x.refundable.minor, x.allowed])).toEqual([
      [abandoned.id, 'abandoned', 'ABANDONED', 0, []],
      [failed.id, 'failed', 'FAILED', 0, []],
      [settled, 'settled', 'SETTLED', 1250, ['refund']],
      [pending.id, 'pending', 'PENDING', 0, []],
    ]);
    expect(all.sales.find((x) => x.id === settled)).toMatchObject({
      label: 'Bank transfer',
      reference: 'TICKET-S',
      amount: { minor: 1250, currency: 'EUR', text: '€12.50' },
      settled: { minor: 1250 },
    });
    const text = JSON.stringify(all);
    for (const personal of ['ana@example.com', 'Ana', 'Ruiz', 'https://g.example.test/ap/G-1'])
      expect(text).not.toContain(personal);

    const some = value(await s.operator({ type: 'alt-sales', status: ['settled', 'pending'] }));
    if (some.type !== 'alt-sales') throw new Error('not the sales');
    expect(some.sales.map((x) => x.id)).toEqual([settled, pending.id]);
  });

  it('refunds part of a settled sale, refuses more than remains and a sale not settled; each recorded once', async () => {
    const s = setup();
    const saleId = await s.settledSale('TICKET-S', 1250);
    const pending = await s.altPayments.start(1, { code: 'TICKET-P', amountMinor: 400, customer });

    const part = value(await s.operator({ type: 'alt-refund', saleId, amountMinor: 500 }));
    expect(part).toMatchObject({
      type: 'alt-refund',
      saleId,
      refund: { amount: { minor: 500, currency: 'EUR' }, state: 'accepted' },
      sale: { refunded: { minor: 500 }, refundable: { minor: 750 }, allowed: ['refund'] },
    });
    expect(await s.operator({ type: 'alt-refund', saleId, amountMinor: 800 })).toMatchObject({
      ok: false,
      error: { code: 'ALT_REFUND_ABOVE_SETTLED' },
    });
    expect(await s.operator({ type: 'alt-refund', saleId: pending.id })).toMatchObject({
      ok: false,
      error: { code: 'ALT_NOT_REFUNDABLE' },
    });
    expect(await s.operator({ type: 'alt-refund', saleId: 999 })).toMatchObject({
      ok: false,
      error: { code: 'ALT_NOT_FOUND' },
    });
    const rest = value(await s.operator({ type: 'alt-refund', saleId }));
    expect(rest).toMatchObject({
      refund: { amount: { minor: 750 } },
      sale: { refundable: { minor: 0 }, allowed: [] },
    });
    expect(s.refundsSent).toHaveLength(2);
    expect(
      s
        .log()
        .filter((r) => r.action === 'refund')
        .map((r) => `${r.subject ?? ''}:${r.result}:${r.code ?? ''}`),
    ).toEqual([
      `alt-sale:${saleId}:ok:accepted`,
      `alt-sale:${saleId}:refused:ALT_REFUND_ABOVE_SETTLED`,
      `alt-sale:${pending.id}:refused:ALT_NOT_REFUNDABLE`,
      'alt-sale:999:refused:ALT_NOT_FOUND',
      `alt-sale:${saleId}:ok:accepted`,
    ]);
  });
});
