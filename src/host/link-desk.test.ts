import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor, type Actor } from 'xstate';
import { describeView, provideFlowEffects } from '../flows/index.js';
import { FakeTerminal, settle, testSettings } from '../flows/testing/fake-terminal.js';
import {
  GatewayError,
  personalDataIn,
  type GatewayClient,
  type PaymentLink,
  type PaymentLinkInput,
} from '../gateway/index.js';
import { AuditStore, openJournal, PaymentLinkStore, type SqliteJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { AuditTrail } from './audit-trail.js';
import { createFlowEffects } from './flow-effects.js';
import { LinkDesk, type LinkDeskDeps, type LinkView } from './link-desk.js';
import { setLinkStatus } from './link-status.js';
import { carriesTerminalId, purchaseNumber, purchaseNumberBase, withoutLongDigitRuns } from './link-ids.js';

/** The gateway's payment links, in memory, with every call recorded. */
class FakeLinks {
  readonly links = new Map<string, PaymentLink>();
  readonly calls: string[] = [];
  /** Set to make the next create fail this way (after recording it as made, for an unknown outcome). */
  failCreate: GatewayError | undefined;
  makeDespiteFailure = false;
  /** Set to answer an update with the link as it was, its status unchanged (the change did not take). */
  keepStatus = false;
  /** Set to make the next update fail this way after it took effect (an answer lost: the outcome unknown). */
  failUpdateAfterChange: GatewayError | undefined;
  seenAtCreate: string | undefined;
  constructor(private readonly store: () => PaymentLinkStore) {}

  readonly api: GatewayClient['paymentLinks'] = {
    create: (input: PaymentLinkInput) => {
      this.calls.push(`create ${input.purchaseNumber}`);
      this.seenAtCreate = this.store().get(input.purchaseNumber)?.state;
      const link = this.toLink(input, 'ACTIVE');
      if (this.failCreate) {
        if (this.makeDespiteFailure) this.links.set(link.id, link);
        return Promise.reject(this.failCreate);
      }
      // The purchase number is unique per link among all of the merchant's links (spec 000): DUPLICATE_RECORD.
      if (this.links.has(input.purchaseNumber))
        return Promise.reject(
          new GatewayError('GW_INVALID_REQUEST', 'DUPLICATE_RECORD: purchaseNumber is already used', {
            httpStatus: 400,
          }),
        );
      this.links.set(link.id, link);
      return Promise.resolve(link);
    },
    update: (id: string, input: PaymentLinkInput) => {
      this.calls.push(`update ${id} ${input.status ?? ''}`);
      const was = this.links.get(id)?.status ?? 'ACTIVE';
      const link = this.toLink(input, this.keepStatus ? was : (input.status ?? 'ACTIVE'));
      this.links.set(id, link);
      const failure = this.failUpdateAfterChange;
      this.failUpdateAfterChange = undefined;
      return failure ? Promise.reject(failure) : Promise.resolve(link);
    },
    get: (id: string) => {
      this.calls.push(`get ${id}`);
      const link = this.links.get(id);
      return link
        ? Promise.resolve(link)
        : Promise.reject(new GatewayError('GW_NOT_FOUND', 'not found', { httpStatus: 404 }));
    },
    list: () => Promise.resolve({ links: [...this.links.values()] }),
  };

  private toLink(input: PaymentLinkInput, status: string): PaymentLink {
    return {
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
  }
}

let journal: SqliteJournal;
let store: PaymentLinkStore;
let audit: AuditTrail;
let gateway: FakeLinks;
let desk: LinkDesk;
let nowMs: number;

function makeDesk(
  waitMs = 60_000,
  notificationToleranceMs = 300_000,
  terminal: { id: string; store: PaymentLinkStore; audit: AuditTrail } = {
    id: 'PT000001',
    store,
    audit,
  },
  paidHooks: Pick<LinkDeskDeps, 'feePaid' | 'stayPaid' | 'stayInDoubt' | 'paymentInDoubt'> = {},
): LinkDesk {
  return new LinkDesk({
    ...paidHooks,
    terminalId: terminal.id,
    store: terminal.store,
    gateway: { paymentLinks: gateway.api },
    audit: terminal.audit,
    logger: silentLogger(),
    now: () => new Date(nowMs),
    waitMs,
    pollMs: 60_000,
    productName: 'Parking',
    partner: { developerId: '12345678', solutionId: 'PARKTERM' },
    notificationsReceived: true,
    notificationToleranceMs,
  });
}

beforeEach(() => {
  nowMs = Date.now();
  journal = openJournal(':memory:', { now: () => new Date(nowMs) });
  store = new PaymentLinkStore(journal);
  audit = new AuditTrail(new AuditStore(journal), silentLogger());
  gateway = new FakeLinks(() => store);
  desk = makeDesk();
});
/** What a test opened beside the journal of `beforeEach` (closed after it). */
const cleanups: (() => void)[] = [];

afterEach(() => {
  desk.stop();
  journal.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const paid = (linkId: string, amountMinor = 450) => ({
  eventDate: new Date(nowMs).toISOString(),
  linkId,
  paymentId: '7000000000000000000001',
  status: 'AUTHORIZED',
  amountMinor,
  currency: 'GBP',
});

describe('LinkDesk', () => {
  it('journals the link before the create is sent, shows its URL and domain, and settles on the notification', async () => {
    const views: LinkView[] = [];
    desk.subscribe((v) => views.push(v));
    const view = await desk.createForFee({ reference: 'T-202611241305', amountMinor: 450, currency: 'GBP' });
    expect(gateway.seenAtCreate).toBe('creating');
    expect(view).toMatchObject({
      linkId: 'PT000001_T-202611241305',
      state: 'active',
      url: 'https://pay.example.test/pay/PT000001_T-202611241305',
      domain: 'pay.example.test',
      closing: false,
    });
    const waiting = desk.watch(view.linkId);
    desk.notify(paid(view.linkId));
    expect(await waiting).toMatchObject({ state: 'paid', paymentId: '7000000000000000000001' });
    await desk.sweep();
    expect(store.get(view.linkId)).toMatchObject({ state: 'paid', gatewayInactive: true });
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(gateway.calls).toContain(`update ${view.linkId} INACTIVE`);
    expect(audit.list().map((r) => `${r.action}:${r.code ?? ''}`)).toEqual([
      'link-paid:PAID',
      'link-deactivate:paid',
    ]);
    expect(views.at(-1)).toMatchObject({ state: 'paid', closing: false, closeReason: 'paid' });
    // The same notification again changes nothing; a second payment is for the operator to refund.
    desk.notify(paid(view.linkId));
    desk.notify({ ...paid(view.linkId), paymentId: '7000000000000000000002' });
    expect(audit.list().map((r) => `${r.action}:${r.code ?? ''}`)).toEqual([
      'link-paid:PAID',
      'link-deactivate:paid',
      'link-paid:PAID_TWICE',
    ]);
  });

  it("pays the stay of a link's tap-and-go hold in the payment's transaction, only when the payment is counted", async () => {
    const staysPaid: Array<{ holdId: string; linkId: string; paidInJournal: boolean }> = [];
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, {
      stayPaid: (link) =>
        staysPaid.push({
          holdId: link.holdId,
          linkId: link.linkId,
          // Inside the transaction that makes the link paid: this connection already reads it paid.
          paidInJournal: store.get(link.linkId)?.state === 'paid',
        }),
    });
    const fee = await desk.createForFee({
      reference: 'GATE-1',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-1',
    });
    expect(store.get(fee.linkId)?.holdId).toBe('H-1');
    const later = await desk.createForFee({
      reference: 'GATE-2',
      amountMinor: 450,
      currency: 'GBP',
      purpose: 'pay-later',
      holdId: 'H-2',
    });
    // A fee link its customer was told was not paid: its payment is the operator's, not the stay's.
    const told = await desk.createForFee({
      reference: 'GATE-3',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-3',
    });
    // Told once the gateway confirmed the link INACTIVE (while unconfirmed, the customer still waits on the link).
    expect(await desk.cancel(told.linkId)).toMatchObject({ state: 'deactivated' });
    const other = await desk.createForFee({ reference: 'T-4', amountMinor: 450, currency: 'GBP' });
    for (const view of [fee, later, told, other]) desk.notify(paid(view.linkId));
    expect(staysPaid).toEqual([
      { holdId: 'H-1', linkId: fee.linkId, paidInJournal: true },
      { holdId: 'H-2', linkId: later.linkId, paidInJournal: true },
    ]);
    expect(audit.list().find((r) => r.subject === told.linkId && r.action === 'link-paid')?.code).toBe(
      'PAID_AFTER_CLOSE',
    );
  });

  it('a deactivation after a payment that cannot be journaled is logged, never an unexpected error', async () => {
    const view = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    const { closing } = store;
    store.closing = () => {
      throw new Error('disk full');
    };
    try {
      desk.notify(paid(view.linkId));
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      store.closing = closing;
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    // Still open in the journal: the sweep deactivates it.
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
    await desk.sweep();
    expect(store.get(view.linkId)).toMatchObject({ state: 'paid', gatewayInactive: true });
  });

  it('a declined attempt leaves the link waiting; a different amount does not settle it', async () => {
    const view = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    desk.notify({ ...paid(view.linkId), status: 'DECLINED' });
    expect(desk.get(view.linkId)).toMatchObject({ state: 'active', lastAttemptDeclined: true });
    desk.notify(paid(view.linkId, 1));
    expect(desk.get(view.linkId)?.state).toBe('active');
    expect(audit.list().map((r) => r.code)).toEqual(['AMOUNT_MISMATCH']);
  });

  it('counts the payments declined on the link, each once: the same notification again is no new decline', async () => {
    const view = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    expect(desk.get(view.linkId)?.declinedPayments).toBeUndefined();
    desk.notify({ ...paid(view.linkId), status: 'DECLINED', paymentId: '7000000000000000000002' });
    expect(desk.get(view.linkId)).toMatchObject({
      state: 'active',
      lastAttemptDeclined: true,
      declinedPayments: 1,
    });
    // Delivered again (a relay, a retry): the same payment, not a second decline.
    desk.notify({ ...paid(view.linkId), status: 'DECLINED', paymentId: '7000000000000000000002' });
    expect(desk.get(view.linkId)?.declinedPayments).toBe(1);
    // Another card on the phone, declined too.
    desk.notify({ ...paid(view.linkId), status: 'DECLINED', paymentId: '7000000000000000000003' });
    expect(desk.get(view.linkId)).toMatchObject({ lastAttemptDeclined: true, declinedPayments: 2 });
    desk.notify(paid(view.linkId));
    expect(desk.get(view.linkId)?.declinedPayments).toBeUndefined();
  });

  it('forgets the declined payments of a link once its wait is over, however it ended', async () => {
    const declinedLinks = () => (desk as unknown as { declined: Map<string, unknown> }).declined.size;
    const decline = (linkId: string, n: number) =>
      desk.notify({ ...paid(linkId), status: 'DECLINED', paymentId: `700000000000000000001${n}` });
    // Cancelled by the customer.
    const cancelled = await desk.createForFee({ reference: 'T-31', amountMinor: 450, currency: 'GBP' });
    decline(cancelled.linkId, 1);
    await desk.cancel(cancelled.linkId);
    expect(desk.get(cancelled.linkId)?.declinedPayments).toBeUndefined();
    // A decline notified after the link was confirmed INACTIVE is no notice for anyone.
    decline(cancelled.linkId, 2);
    expect(desk.get(cancelled.linkId)?.declinedPayments).toBeUndefined();
    // Deactivated beside the terminal (`parking-terminal links deactivate`): the sweep finds it closed.
    const elsewhere = await desk.createForFee({ reference: 'T-32', amountMinor: 450, currency: 'GBP' });
    decline(elsewhere.linkId, 3);
    await setLinkStatus(
      {
        gateway: { paymentLinks: gateway.api },
        store,
        terminalId: 'PT000001',
        audit: undefined,
        now: () => new Date(nowMs),
        waitMs: 60_000,
      },
      elsewhere.linkId,
      'INACTIVE',
    );
    await desk.sweep();
    expect(desk.get(elsewhere.linkId)?.declinedPayments).toBeUndefined();
    // Nothing is kept of links whose wait is over: a terminal that runs for months does not keep every decline.
    expect(declinedLinks()).toBe(0);
    // A link still waiting keeps its count.
    const waiting = await desk.createForFee({ reference: 'T-33', amountMinor: 450, currency: 'GBP' });
    decline(waiting.linkId, 4);
    await desk.sweep();
    expect(desk.get(waiting.linkId)?.declinedPayments).toBe(1);
  });

  it('forgets the customer of a fee link once its payment is counted: nothing is kept per paid link', async () => {
    const awaited = () => (desk as unknown as { awaited: Set<string> }).awaited;
    const view = await desk.createForFee({ reference: 'T-34', amountMinor: 450, currency: 'GBP' });
    expect(awaited().has(view.linkId)).toBe(true);
    desk.notify(paid(view.linkId));
    await desk.settled();
    expect(store.get(view.linkId)).toMatchObject({ state: 'paid', gatewayInactive: true });
    expect(audit.list().map((r) => r.code)).toEqual(['PAID', 'paid']);
    expect(awaited().size).toBe(0);
    // The same payment again, and a second one, are as before: nothing new, and one for the operator.
    desk.notify(paid(view.linkId));
    desk.notify({ ...paid(view.linkId), paymentId: '7000000000000000000002' });
    expect(audit.list().map((r) => r.code)).toEqual(['PAID', 'paid', 'PAID_TWICE']);
  });

  it('records for the operator a payment in a status it does not count (money may be held), not only as a decline', async () => {
    const view = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    desk.notify({ ...paid(view.linkId), status: 'INVALID_REQUEST', paymentId: '7000000000000000000009' });
    for (const [status, amountMinor, n] of [
      ['PARTIAL_AUTHORIZED', 225, 2],
      ['AUTHORIZED_PENDING_REVIEW', 450, 3],
      ['PENDING', 450, 4],
      ['SOMETHING_NEW', 450, 5],
    ] as const)
      desk.notify({ ...paid(view.linkId, amountMinor), status, paymentId: `700000000000000000000${n}` });
    // The link stays open for another try, and the customer is told the attempt did not pay the fee.
    expect(desk.get(view.linkId)).toMatchObject({ state: 'active', lastAttemptDeclined: true });
    expect(audit.list().map((r) => [r.action, r.result, r.code, r.details?.status])).toEqual([
      ['link-paid', 'refused', 'NOT_COUNTED', 'PARTIAL_AUTHORIZED'],
      ['link-paid', 'refused', 'NOT_COUNTED', 'AUTHORIZED_PENDING_REVIEW'],
      ['link-paid', 'refused', 'NOT_COUNTED', 'PENDING'],
      ['link-paid', 'refused', 'NOT_COUNTED', 'SOMETHING_NEW'],
    ]);
    // Once paid, a payment of such a status is recorded too: it may be money taken twice.
    desk.notify(paid(view.linkId));
    desk.notify({
      ...paid(view.linkId),
      status: 'AUTHORIZED_PENDING_REVIEW',
      paymentId: '7000000000000000000006',
    });
    desk.notify({ ...paid(view.linkId), status: 'DECLINED', paymentId: '7000000000000000000007' });
    expect(
      audit
        .list()
        .slice(4)
        .filter((r) => r.action === 'link-paid')
        .map((r) => r.code),
    ).toEqual(['PAID', 'PAID_TWICE']);
  });

  it('records for the operator the payment that paid a link notified again declined, or for another amount', async () => {
    const view = await desk.createForFee({ reference: 'T-1C', amountMinor: 450, currency: 'GBP' });
    desk.notify(paid(view.linkId));
    expect(desk.get(view.linkId)).toMatchObject({ state: 'paid', paymentId: '7000000000000000000001' });
    // The same notification again is nothing new.
    desk.notify(paid(view.linkId));
    // The payment the fee was counted with, now declined (a review, a reversal) or of another amount: the ticket was
    // released on money the gateway no longer says it took — the operator must know, once however often it comes.
    for (let i = 0; i < 2; i++) {
      desk.notify({ ...paid(view.linkId), status: 'DECLINED' });
      desk.notify({ ...paid(view.linkId), status: 'AUTHORIZED_RISK_DECLINED' });
      desk.notify(paid(view.linkId, 45));
    }
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.code ?? ''}:${String(r.details.status)}:${String(r.details.amountMinor)}`),
    ).toEqual([
      'PAID:undefined:450',
      'PAYMENT_CHANGED:DECLINED:450',
      'PAYMENT_CHANGED:AUTHORIZED_RISK_DECLINED:450',
      'PAYMENT_CHANGED:AUTHORIZED:45',
    ]);
    expect(desk.get(view.linkId)).toMatchObject({ state: 'paid', paymentId: '7000000000000000000001' });
  });

  it('records a refused payment once however often it is delivered again, across a restart too', async () => {
    const view = await desk.createForFee({ reference: 'T-9', amountMinor: 450, currency: 'GBP' });
    const review = { ...paid(view.linkId), status: 'PENDING', paymentId: '7000000000000000000003' };
    const otherAmount = { ...paid(view.linkId, 1), paymentId: '7000000000000000000004' };
    const second = { ...paid(view.linkId), paymentId: '7000000000000000000002' };
    // A relay hands over what it holds at every fetch; a gateway sends again an answer it did not get.
    const deliverAll = () => {
      desk.notify(review);
      desk.notify(otherAmount);
      desk.notify(paid(view.linkId));
      desk.notify(second);
    };
    deliverAll();
    deliverAll();
    desk.stop();
    desk = makeDesk();
    deliverAll();
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.code ?? ''}:${String(r.details.paymentId)}`),
    ).toEqual([
      'NOT_COUNTED:7000000000000000000003',
      'AMOUNT_MISMATCH:7000000000000000000004',
      'PAID:7000000000000000000001',
      'PAID_TWICE:7000000000000000000002',
    ]);
    // A payment of the same id in a new status is a new fact: recorded.
    desk.notify({ ...second, status: 'AUTHORIZED_PENDING_REVIEW' });
    expect(audit.list().filter((r) => r.code === 'PAID_TWICE')).toHaveLength(2);
  });

  it('deactivates the link when the customer cancels, and when the wait runs out', async () => {
    const a = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    expect(await desk.cancel(a.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'cancelled' });
    expect(gateway.links.get(a.linkId)?.status).toBe('INACTIVE');

    desk.stop();
    desk = makeDesk(30);
    const b = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    expect(b.linkId).toBe('PT000001_T-1-2');
    // The wait ends once the gateway confirms the link INACTIVE (a payment before that still counts).
    expect(await desk.watch(b.linkId)).toMatchObject({
      state: 'deactivated',
      closing: false,
      closeReason: 'timeout',
    });
    expect(store.get(b.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'timeout' });
  });

  it('keeps a link open while the gateway answers its deactivation with the link still ACTIVE', async () => {
    const view = await desk.createForFee({ reference: 'T-5', amountMinor: 450, currency: 'GBP' });
    gateway.keepStatus = true;
    // The customer is told it was not paid, but the link is still payable: the terminal keeps deactivating it.
    expect(await desk.cancel(view.linkId)).toMatchObject({ state: 'active', closing: true });
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ gatewayInactive: false, closeReason: 'cancelled' });
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
    expect(audit.list().map((r) => `${r.action}:${r.result}`)).toEqual(['link-deactivate:failed']);

    gateway.keepStatus = false;
    await desk.sweep();
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'deactivated', gatewayInactive: true });
  });

  it('records a deactivation that keeps failing in the audit log once per failure, not at every sweep', async () => {
    const view = await desk.createForFee({ reference: 'T-5B', amountMinor: 450, currency: 'GBP' });
    // A gateway that keeps answering the update with the link ACTIVE (or one down for hours): every sweep tries again.
    gateway.keepStatus = true;
    await desk.cancel(view.linkId);
    for (let sweep = 0; sweep < 5; sweep++) await desk.sweep();
    expect(gateway.calls.filter((c) => c.startsWith('update')).length).toBe(6);
    expect(store.get(view.linkId)?.lastError).toContain('GW_UNDOCUMENTED');
    // The audit log keeps every record for good (no update, no delete): one a sweep would grow it without end.
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-deactivate:failed:GW_UNDOCUMENTED',
    ]);
    // Another failure is recorded again; the deactivation, once it takes, too.
    gateway.keepStatus = false;
    gateway.failUpdateAfterChange = new GatewayError('GW_SERVER', 'the gateway answered HTTP 502', {
      outcomeUnknown: true,
      httpStatus: 502,
    });
    await desk.sweep();
    await desk.sweep();
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-deactivate:failed:GW_UNDOCUMENTED',
      'link-deactivate:failed:GW_SERVER',
      'link-deactivate:ok:cancelled',
    ]);
  });

  it('does not record an operator deactivation the gateway answered with the link still ACTIVE', async () => {
    const view = await desk.createForFee({ reference: 'T-6', amountMinor: 450, currency: 'GBP' });
    gateway.keepStatus = true;
    await expect(desk.setStatusByOperator(view.linkId, 'INACTIVE')).rejects.toMatchObject({
      code: 'GW_UNDOCUMENTED',
    });
    expect(store.get(view.linkId)).toMatchObject({
      state: 'active',
      gatewayInactive: false,
      closeReason: 'operator',
    });
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
  });

  it('leaves no link active unwatched when the operator reactivates it and the answer is lost', async () => {
    const view = await desk.createForFee({ reference: 'T-7', amountMinor: 450, currency: 'GBP' });
    await desk.cancel(view.linkId);
    expect(store.open()).toEqual([]);
    // The gateway makes the link ACTIVE again, but its answer never comes.
    gateway.failUpdateAfterChange = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
    await expect(desk.setStatusByOperator(view.linkId, 'ACTIVE')).rejects.toMatchObject({
      code: 'GW_TIMEOUT',
    });
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    // The journal knew of the change before it was sent: the sweep finds the link and deactivates it.
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
    await desk.sweep();
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'deactivated', gatewayInactive: true });
  });

  it('keeps a link closed when the gateway refuses its reactivation, or answers it still INACTIVE', async () => {
    const view = await desk.createForFee({ reference: 'T-8', amountMinor: 450, currency: 'GBP' });
    await desk.cancel(view.linkId);
    gateway.keepStatus = true;
    await expect(desk.setStatusByOperator(view.linkId, 'ACTIVE')).rejects.toMatchObject({
      code: 'GW_UNDOCUMENTED',
    });
    gateway.keepStatus = false;
    gateway.links.delete(view.linkId);
    await expect(desk.setStatusByOperator(view.linkId, 'ACTIVE')).rejects.toMatchObject({
      code: 'GW_NOT_FOUND',
    });
    // The intent to close it, journaled before the request, is finished by the sweep once the gateway confirms it.
    await desk.sweep();
    expect(store.get(view.linkId)).toMatchObject({ state: 'deactivated', gatewayInactive: true });
    expect(store.open()).toEqual([]);
  });

  /**
   * Holds the gateway's answers to the desk's `get`s until the returned function is called: each answers with the link
   * as the gateway had it when the request came (the read was made then; only its answer is late).
   */
  function holdGetsAsRead(): () => void {
    const get = gateway.api.get;
    const answers: (() => void)[] = [];
    gateway.api.get = (id) => {
      const read = get(id);
      return new Promise((resolve, reject) => answers.push(() => void read.then(resolve, reject)));
    };
    return () => {
      gateway.api.get = get;
      for (const answer of answers) answer();
    };
  }

  /**
   * `parking-terminal links reactivate ID`: the CLI, another process, with a connection of its own to the same journal
   * and its own client of the same gateway (none of the desk's requests in flight holds it up).
   */
  function reactivateFromCli(cli: Cli, linkId: string) {
    return setLinkStatus(
      {
        gateway: cli.gateway,
        store: cli.store,
        terminalId: 'PT000001',
        audit: undefined,
        now: () => new Date(nowMs),
        waitMs: 60_000,
      },
      linkId,
      'ACTIVE',
    );
  }

  interface Cli {
    store: PaymentLinkStore;
    gateway: Pick<GatewayClient, 'paymentLinks'>;
  }

  /**
   * The terminal's journal in a file, with a second connection to it as the `links` command opens it, and the
   * command's own gateway client (the gateway's requests as they are now: none of the desk's held answers).
   */
  function journalWithCli(): Cli {
    const dir = mkdtempSync(join(tmpdir(), 'pt-link-desk-'));
    const path = join(dir, 'journal.db');
    desk.stop();
    journal.close();
    journal = openJournal(path, { now: () => new Date(nowMs) });
    store = new PaymentLinkStore(journal);
    audit = new AuditTrail(new AuditStore(journal), silentLogger());
    desk = makeDesk();
    const cli = openJournal(path, { now: () => new Date(nowMs) });
    cleanups.push(() => {
      cli.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { store: new PaymentLinkStore(cli), gateway: { paymentLinks: { ...gateway.api } } };
  }

  it('leaves a link the operator reactivates from the CLI while the sweep deactivates it as the gateway holds it', async () => {
    const cli = journalWithCli();
    const view = await desk.createForFee({ reference: 'T-70', amountMinor: 450, currency: 'GBP' });
    // The customer cancels; the gateway makes the link INACTIVE but its answer is lost: the journal keeps the intent.
    gateway.failUpdateAfterChange = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
    await desk.cancel(view.linkId);
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'active', closeReason: 'cancelled' });
    // The sweep finishes the deactivation: its look at the link reads it INACTIVE, and that answer is on its way …
    const answer = holdGetsAsRead();
    const sweeping = desk.sweep();
    await new Promise((r) => setTimeout(r, 10));
    // … when the operator's `links reactivate` makes it ACTIVE at the gateway and journals it so.
    await reactivateFromCli(cli, view.linkId);
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'active', gatewayInactive: false });
    answer();
    await sweeping;
    await desk.settled();
    // The answer read before the reactivation does not overwrite it: the link is ACTIVE, open, and watched.
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'active', gatewayInactive: false });
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
    await desk.sweep();
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
  });

  it("does not record a link closed from the sweep's look at its status once the CLI has made it ACTIVE again", async () => {
    const cli = journalWithCli();
    const view = await desk.createForFee({ reference: 'T-71', amountMinor: 450, currency: 'GBP' });
    // Made INACTIVE at the gateway by someone else (the merchant's portal): the sweep's look will find it so.
    const made = gateway.links.get(view.linkId)!;
    gateway.links.set(view.linkId, { ...made, status: 'INACTIVE' });
    const answer = holdGetsAsRead();
    const sweeping = desk.sweep();
    await new Promise((r) => setTimeout(r, 10));
    await reactivateFromCli(cli, view.linkId);
    answer();
    await sweeping;
    await desk.settled();
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'active', gatewayInactive: false });
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
  });

  it('deactivates a link whose reactivation from the CLI had no answer while the sweep was finishing its deactivation', async () => {
    const cli = journalWithCli();
    const view = await desk.createForFee({ reference: 'T-72', amountMinor: 450, currency: 'GBP' });
    await desk.cancel(view.linkId);
    expect(store.open()).toEqual([]);
    // The command journals the reactivation (the link open, with the intent to close it), reads the link, and sends
    // its update, which reaches the gateway only later and whose answer is lost.
    let send!: () => void;
    const sending = new Promise<void>((r) => (send = r));
    const update = cli.gateway.paymentLinks.update;
    cli.gateway.paymentLinks.update = async (id, input) => {
      await sending;
      gateway.failUpdateAfterChange = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
      return update(id, input);
    };
    const reactivating = reactivateFromCli(cli, view.linkId);
    await new Promise((r) => setTimeout(r, 10));
    expect(store.get(view.linkId)).toMatchObject({ state: 'active', closeReason: 'operator' });
    // The sweep takes the intent: its look reads the link INACTIVE, before the update arrives.
    const answer = holdGetsAsRead();
    const sweeping = desk.sweep();
    await new Promise((r) => setTimeout(r, 10));
    send();
    await expect(reactivating).rejects.toMatchObject({ code: 'GW_TIMEOUT' });
    expect(gateway.links.get(view.linkId)?.status).toBe('ACTIVE');
    answer();
    await sweeping;
    await desk.settled();
    // ACTIVE at the gateway: the journal holds it open, and the next sweep deactivates it.
    expect(store.open().map((l) => l.linkId)).toEqual([view.linkId]);
    await desk.sweep();
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(store.get(view.linkId)).toMatchObject({ state: 'deactivated', gatewayInactive: true });
  });

  /** Holds the gateway's answers to `get` until the returned function is called. */
  function holdGets(): () => void {
    const get = gateway.api.get;
    let answer!: () => void;
    gateway.api.get = (id) =>
      new Promise((resolve, reject) => {
        answer = () => void get(id).then(resolve, reject);
      });
    return () => {
      gateway.api.get = get;
      answer();
    };
  }

  it('counts a payment notified while the cancel is deactivating the link, on the screen and in the audit alike', async () => {
    const view = await desk.createForFee({ reference: 'T-77', amountMinor: 450, currency: 'GBP' });
    // The cancel's look at the link is in flight when the payment's notification arrives (the customer paid first).
    const answer = holdGets();
    const cancelling = desk.cancel(view.linkId, 'cancelled');
    await new Promise((r) => setTimeout(r, 10));
    desk.notify(paid(view.linkId));
    answer();
    // What flow-effects' closeLink turns into the machine's outcome: paid, so the ticket is released.
    expect(await cancelling).toMatchObject({ state: 'paid', paymentId: '7000000000000000000001' });
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-paid:ok:PAID',
      'link-deactivate:ok:paid',
    ]);
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
  });

  it('counts a payment notified while the end of the wait is deactivating the link: the wait ends paid', async () => {
    desk.stop();
    desk = makeDesk(30);
    const view = await desk.createForFee({ reference: 'T-78', amountMinor: 450, currency: 'GBP' });
    const answer = holdGets();
    const waiting = desk.watch(view.linkId);
    await new Promise((r) => setTimeout(r, 60));
    expect(desk.get(view.linkId)).toMatchObject({ state: 'active', closing: true });
    desk.notify(paid(view.linkId));
    expect(await waiting).toMatchObject({ state: 'paid' });
    answer();
    await desk.settled();
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-paid:ok:PAID',
      'link-deactivate:ok:paid',
    ]);
  });

  it('records a payment after the gateway confirmed the cancel for the operator; the customer was told not paid', async () => {
    const view = await desk.createForFee({ reference: 'T-79', amountMinor: 450, currency: 'GBP' });
    expect(await desk.cancel(view.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'cancelled' });
    desk.notify(paid(view.linkId));
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-deactivate:ok:cancelled',
      'link-paid:refused:PAID_AFTER_CLOSE',
    ]);
  });

  it('counts a payment notified after a cancel whose deactivation is unconfirmed: its customer still waits on it', async () => {
    const view = await desk.createForFee({ reference: 'T-80', amountMinor: 450, currency: 'GBP' });
    gateway.api.update = () =>
      Promise.reject(new GatewayError('GW_SERVER', 'HTTP 502', { httpStatus: 502, outcomeUnknown: true }));
    expect(await desk.cancel(view.linkId)).toMatchObject({ state: 'active', closing: true });
    const waited = desk.watch(view.linkId);
    desk.notify(paid(view.linkId));
    expect(await waited).toMatchObject({ state: 'paid' });
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-deactivate:failed:GW_SERVER',
      'link-paid:ok:PAID',
    ]);
  });

  it('deactivates a link whose wait ends while the sweep is asking for its status, as soon as the answer is in', async () => {
    desk.stop();
    desk = makeDesk(40);
    const link = await desk.createForFee({ reference: 'T-9', amountMinor: 450, currency: 'GBP' });
    const ended = desk.watch(link.linkId);
    // The sweep's look at the status is in flight when the wait runs out.
    const get = gateway.api.get;
    let answer!: () => void;
    gateway.api.get = (id) =>
      new Promise((resolve, reject) => {
        answer = () => void get(id).then(resolve, reject);
      });
    const sweeping = desk.sweep();
    await new Promise((r) => setTimeout(r, 60));
    expect(desk.get(link.linkId)).toMatchObject({ state: 'active', closing: true });
    expect(gateway.links.get(link.linkId)?.status).toBe('ACTIVE');
    gateway.api.get = get;
    answer();
    await sweeping;
    await desk.settled();
    expect(await ended).toMatchObject({ state: 'deactivated', closeReason: 'timeout' });
    expect(gateway.links.get(link.linkId)?.status).toBe('INACTIVE');
    expect(store.get(link.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'timeout' });
  });

  it('deactivates the earlier link of a ticket whose cancel was not confirmed before it makes another', async () => {
    const first = await desk.createForFee({ reference: 'T-99', amountMinor: 450, currency: 'GBP' });
    // The customer cancels; the deactivation has no answer (gateway 502: outcome unknown).
    const update = gateway.api.update;
    gateway.api.update = () =>
      Promise.reject(new GatewayError('GW_SERVER', 'HTTP 502', { httpStatus: 502, outcomeUnknown: true }));
    expect(await desk.cancel(first.linkId)).toMatchObject({ state: 'active', closing: true });
    gateway.api.update = update;
    // Pay by phone again for the same ticket: the first link is made INACTIVE before the second exists.
    const second = await desk.createForFee({ reference: 'T-99', amountMinor: 450, currency: 'GBP' });
    expect(second.linkId).toBe('PT000001_T-99-2');
    const active = [...gateway.links.values()].filter((l) => l.status === 'ACTIVE').map((l) => l.id);
    expect(active).toEqual(['PT000001_T-99-2']);
    expect(store.get(first.linkId)).toMatchObject({
      state: 'deactivated',
      gatewayInactive: true,
      closeReason: 'cancelled',
    });
  });

  it('refuses a second link for a ticket while the first one is not confirmed inactive (LINK_BUSY)', async () => {
    const first = await desk.createForFee({ reference: 'T-98', amountMinor: 450, currency: 'GBP' });
    gateway.api.update = () =>
      Promise.reject(new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true }));
    await desk.cancel(first.linkId);
    await expect(
      desk.createForFee({ reference: 'T-98', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({ code: 'LINK_BUSY' });
    // Nothing else journaled or sent: the customer is offered the card instead.
    expect(store.recent().map((l) => l.linkId)).toEqual([first.linkId]);
    expect(gateway.calls.filter((c) => c.startsWith('create'))).toEqual([`create ${first.linkId}`]);
    // Another ticket is not held up by it.
    expect(await desk.createForFee({ reference: 'T-97', amountMinor: 450, currency: 'GBP' })).toMatchObject({
      state: 'active',
    });
  });

  it('refuses a notification signed before its link existed (an old one replayed), and records it for the operator', async () => {
    const view = await desk.createForFee({ reference: 'T-60', amountMinor: 450, currency: 'GBP' });
    desk.notify({ ...paid(view.linkId), signedAtMs: nowMs - 3_600_000 });
    expect(desk.get(view.linkId)?.state).toBe('active');
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-paid:refused:SIGNED_BEFORE_LINK',
    ]);
    // A relayed one signed after the link was made counts however late it is fetched.
    desk.notify({ ...paid(view.linkId), signedAtMs: nowMs + 1_000 });
    expect(desk.get(view.linkId)?.state).toBe('paid');
  });

  it('counts a payment signed by a gateway clock as far behind as the configured tolerance allows', async () => {
    desk.stop();
    // links.notifications.toleranceSeconds: 900 — the gateway's clock is known to run up to 15 minutes apart.
    desk = makeDesk(60_000, 900_000);
    const view = await desk.createForFee({ reference: 'T-62', amountMinor: 450, currency: 'GBP' });
    // Paid a minute after the link was made, signed by a gateway clock ten minutes behind the terminal's.
    desk.notify({ ...paid(view.linkId), signedAtMs: nowMs + 60_000 - 600_000 });
    expect(desk.get(view.linkId)?.state).toBe('paid');
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)[0]).toBe('link-paid:ok:PAID');
    // Signed earlier than that, it is an old notification replayed, not a payment of this link.
    const other = await desk.createForFee({ reference: 'T-63', amountMinor: 450, currency: 'GBP' });
    desk.notify({ ...paid(other.linkId), signedAtMs: nowMs - 900_000 - 1_000 });
    expect(desk.get(other.linkId)?.state).toBe('active');
  });

  it('records a correctly signed notification that was refused for the operator, not only in the log', async () => {
    const view = await desk.createForFee({ reference: 'T-61', amountMinor: 450, currency: 'GBP' });
    desk.notificationRefused({
      problem: 'stale',
      message: 'signed at 1, more than 300 s from now',
      signedAtMs: nowMs + 3_600_000,
      linkId: view.linkId,
      paymentId: '7000000000000000000001',
    });
    expect(audit.list()).toMatchObject([
      {
        action: 'link-paid',
        subject: view.linkId,
        result: 'refused',
        code: 'NOTIFICATION_STALE',
        details: { mine: true, signedAt: new Date(nowMs + 3_600_000).toISOString() },
      },
    ]);
  });

  it('records a signed refused notification once however often the gateway sends it again', async () => {
    const view = await desk.createForFee({ reference: 'T-65', amountMinor: 450, currency: 'GBP' });
    const stale = {
      problem: 'stale' as const,
      message: 'signed at 1, more than 300 s from now',
      signedAtMs: nowMs + 3_600_000,
      linkId: view.linkId,
      paymentId: '7000000000000000000001',
    };
    // Its link id unreadable: a record with no subject.
    const body = { problem: 'body' as const, message: 'the body is not JSON', signedAtMs: nowMs };
    for (let delivery = 0; delivery < 3; delivery++) {
      desk.notificationRefused(stale);
      desk.notificationRefused(body);
    }
    // Signed again, later: another notification of the gateway's, told again.
    desk.notificationRefused({ ...stale, signedAtMs: stale.signedAtMs + 1_000 });
    expect(
      audit.list().map((r) => `${r.subject ?? '-'}:${r.code ?? ''}:${String(r.details?.signedAt)}`),
    ).toEqual([
      `${view.linkId}:NOTIFICATION_STALE:${new Date(nowMs + 3_600_000).toISOString()}`,
      `-:NOTIFICATION_BODY:${new Date(nowMs).toISOString()}`,
      `${view.linkId}:NOTIFICATION_STALE:${new Date(nowMs + 3_601_000).toISOString()}`,
    ]);
  });

  it('records a signed refused notification with its gateway texts shown visibly and bounded, never dropped', async () => {
    const view = await desk.createForFee({ reference: 'T-64', amountMinor: 450, currency: 'GBP' });
    // What the signed body said, read as far as it could be: a link id turned around by a bidi override, a control,
    // and a reason quoting an event type of thousands of characters.
    const turned = `${view.linkId}\u202E46-T\u001b[2J`;
    desk.notificationRefused({
      problem: 'body',
      message: `event ${'payByLink.'.repeat(400)} is not a payment-link payment`,
      signedAtMs: nowMs,
      linkId: turned,
      paymentId: '70000000000000\u202E00001',
    });
    const [record] = audit.list();
    expect(record).toMatchObject({ action: 'link-paid', result: 'refused', code: 'NOTIFICATION_BODY' });
    // Not a link id: not the subject of the record, but shown in its details as the operator sees link texts.
    expect(record?.subject).toBeUndefined();
    expect(record?.details).toMatchObject({
      linkId: `${view.linkId}\\u{202E}46-T\\u{001B}[2J`,
      paymentId: '70000000000000\\u{202E}00001',
      mine: false,
    });
    expect(String(record?.details.reason).length).toBeLessThanOrEqual(160);
  });

  it('refuses personal data before anything is journaled or sent', async () => {
    await expect(
      desk.createForFee({ reference: 'card 4111 1111 1111 1111', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({ code: 'LINK_PERSONAL_DATA', field: 'purchaseInformation.purchaseNumber' });
    expect(store.recent()).toEqual([]);
    expect(gateway.calls).toEqual([]);
  });

  it('marks a refused create failed, and deactivates a link whose create had no answer once it is found', async () => {
    gateway.failCreate = new GatewayError('GW_INVALID_REQUEST', 'refused', { httpStatus: 400 });
    await expect(
      desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({
      code: 'LINK_REFUSED',
    });
    expect(store.get('PT000001_T-1')?.state).toBe('failed');

    gateway.failCreate = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
    gateway.makeDespiteFailure = true;
    await expect(
      desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({
      code: 'LINK_UNAVAILABLE',
    });
    expect(store.get('PT000001_T-1-2')).toMatchObject({ state: 'creating', closeReason: 'cancelled' });
    await desk.sweep();
    expect(store.get('PT000001_T-1-2')).toMatchObject({ state: 'deactivated', gatewayInactive: true });
    expect(gateway.links.get('PT000001_T-1-2')?.status).toBe('INACTIVE');
    expect(store.open()).toEqual([]);
  });

  it('deactivates a link whose create had no answer when the gateway reads it in a status other than INACTIVE', async () => {
    gateway.failCreate = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
    gateway.makeDespiteFailure = true;
    await expect(
      desk.createForFee({ reference: 'T-5', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({ code: 'LINK_UNAVAILABLE' });
    // The gateway's answer names no status the terminal knows (none at all reads as UNKNOWN): the link may be payable.
    const made = gateway.links.get('PT000001_T-5')!;
    gateway.links.set(made.id, { ...made, status: 'UNKNOWN' });
    desk.stop();
    desk = makeDesk();
    await desk.recover();
    expect(gateway.calls).toContain('update PT000001_T-5 INACTIVE');
    expect(gateway.links.get('PT000001_T-5')?.status).toBe('INACTIVE');
    expect(store.get('PT000001_T-5')).toMatchObject({ state: 'deactivated', gatewayInactive: true });
  });

  it('after a restart watches a pay-later link within its wait and deactivates the others; a link never made is failed', async () => {
    const within = await desk.createForFee({
      reference: 'A',
      amountMinor: 450,
      currency: 'GBP',
      purpose: 'pay-later',
    });
    const late = await desk.createForFee({
      reference: 'B',
      amountMinor: 450,
      currency: 'GBP',
      purpose: 'pay-later',
    });
    desk.stop();
    // B was created long ago; C was journaled (by this version: its id carries the terminal's) but the process died before sending; D was sent but not answered.
    journal.db.prepare(`UPDATE payment_links SET watch_until = 1 WHERE link_id = ?`).run(late.linkId);
    store.begin({
      linkId: 'PT000001_C',
      reference: 'C',
      purpose: 'pay-later',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    store.begin({
      linkId: 'PT000001_D',
      reference: 'D',
      purpose: 'pay-later',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    gateway.links.set('PT000001_D', {
      ...gateway.links.get(within.linkId)!,
      id: 'PT000001_D',
      purchaseNumber: 'PT000001_D',
    });

    desk = makeDesk();
    const taken = await desk.recover();
    expect(taken.map((v) => `${v.linkId}:${v.state}`).sort()).toEqual([
      'PT000001_A:active',
      'PT000001_B:deactivated',
      'PT000001_C:failed',
      'PT000001_D:active',
    ]);
    expect(
      store
        .open()
        .map((l) => l.linkId)
        .sort(),
    ).toEqual(['PT000001_A', 'PT000001_D']);
    expect(
      audit
        .list()
        .filter((r) => r.code === 'link-watched')
        .map((r) => r.subject)
        .sort(),
    ).toEqual(['PT000001_A', 'PT000001_D']);
    // Still watched: a payment of the amount owed after the restart settles it.
    desk.notify(paid('PT000001_A'));
    expect(desk.get('PT000001_A')?.state).toBe('paid');
    expect(audit.list().find((r) => r.action === 'link-paid')).toMatchObject({ result: 'ok', code: 'PAID' });
  });

  it('after a restart deactivates every fee link at once: its session is gone, so a payment of it goes to the operator', async () => {
    const view = await desk.createForFee({ reference: 'T-88', amountMinor: 450, currency: 'GBP' });
    store.begin({
      linkId: 'PT000001_E',
      reference: 'E',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    gateway.links.set('PT000001_E', {
      ...gateway.links.get(view.linkId)!,
      id: 'PT000001_E',
      purchaseNumber: 'PT000001_E',
    });
    // Restart: the kiosk machine starts again at idle; the desk recovers the journal's open links.
    desk.stop();
    desk = makeDesk();
    const taken = await desk.recover();
    expect(taken.map((v) => `${v.linkId}:${v.state}:${v.closeReason ?? ''}`).sort()).toEqual([
      'PT000001_E:deactivated:recovery',
      'PT000001_T-88:deactivated:recovery',
    ]);
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
    expect(gateway.links.get('PT000001_E')?.status).toBe('INACTIVE');
    expect(store.open()).toEqual([]);
    // Paid in the moment before it was INACTIVE: no ticket is released, no receipt; the operator is told.
    desk.notify(paid(view.linkId));
    expect(audit.list().find((r) => r.action === 'link-paid')).toMatchObject({
      subject: view.linkId,
      result: 'refused',
      code: 'PAID_AFTER_CLOSE',
    });
  });

  it("after a restart puts a gate's stay in doubt with its shown fee link's closing, and counts a late payment of it", async () => {
    const inDoubt = new Map<string, string>();
    const staysPaid: string[] = [];
    const hooks: Pick<LinkDeskDeps, 'stayPaid' | 'stayInDoubt' | 'paymentInDoubt'> = {
      stayInDoubt: (link) => {
        // In the transaction that journals the link's closing: this connection already reads the intent.
        expect(store.get(link.linkId)?.closeReason).toBe('recovery');
        inDoubt.set(link.holdId, link.linkId);
      },
      paymentInDoubt: (link) => inDoubt.get(link.holdId) === link.linkId,
      stayPaid: (link) => void staysPaid.push(`${link.holdId}:${link.linkId}`),
    };
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    // Shown to its customer (active), the stay's fee: its payment may be on its way.
    const shown = await desk.createForFee({
      reference: 'GATE-1',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-1',
    });
    // Never shown (its create had no answer before the restart), though the gateway made it: it cannot have been paid.
    store.begin({
      linkId: 'PT000001_GATE-2',
      reference: 'GATE-2',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-2',
      watchUntilMs: nowMs + 60_000,
    });
    gateway.links.set('PT000001_GATE-2', {
      ...gateway.links.get(shown.linkId)!,
      id: 'PT000001_GATE-2',
      purchaseNumber: 'PT000001_GATE-2',
    });
    // A kiosk's fee link: no stay.
    const ticket = await desk.createForFee({ reference: 'T-88', amountMinor: 450, currency: 'GBP' });
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    await desk.recover();
    expect(store.open()).toEqual([]);
    expect([...inDoubt]).toEqual([['H-1', shown.linkId]]);
    // Its payment, made before the link was INACTIVE, notified late (a relay's redelivery): it pays the stay.
    desk.notify(paid(shown.linkId));
    desk.notify(paid('PT000001_GATE-2'));
    desk.notify(paid(ticket.linkId));
    expect(staysPaid).toEqual([`H-1:${shown.linkId}`]);
    expect(store.get(shown.linkId)).toMatchObject({ state: 'paid', gatewayInactive: true });
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.subject ?? ''}:${r.code ?? ''}`),
    ).toEqual([
      `${shown.linkId}:PAID`,
      'PT000001_GATE-2:PAID_AFTER_CLOSE',
      `${ticket.linkId}:PAID_AFTER_CLOSE`,
    ]);
  });

  it("after a restart puts a gate's stay in doubt when its shown fee link's closing was journaled but not confirmed", async () => {
    const inDoubt = new Map<string, string>();
    const staysPaid: string[] = [];
    const hooks: Pick<LinkDeskDeps, 'stayPaid' | 'stayInDoubt' | 'paymentInDoubt'> = {
      stayInDoubt: (link) => void inDoubt.set(link.holdId, link.linkId),
      paymentInDoubt: (link) => inDoubt.get(link.holdId) === link.linkId,
      stayPaid: (link) => void staysPaid.push(`${link.holdId}:${link.linkId}`),
    };
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    const timedOut = await desk.createForFee({
      reference: 'GATE-3',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-3',
    });
    const cancelled = await desk.createForFee({
      reference: 'GATE-4',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-4',
    });
    // The terminal decided to close them (the wait ran out; the customer chose the card), journaled that, and died
    // before the gateway confirmed them INACTIVE: a payment made in between was notified to the process that died.
    store.closing(timedOut.linkId, 'timeout');
    store.closing(cancelled.linkId, 'cancelled');
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    await desk.recover();
    expect(store.open()).toEqual([]);
    expect([...inDoubt].sort()).toEqual([
      ['H-3', timedOut.linkId],
      ['H-4', cancelled.linkId],
    ]);
    expect(store.get(timedOut.linkId)).toMatchObject({ closeReason: 'timeout', gatewayInactive: true });
    // Its payment, made before the link was INACTIVE and notified late, pays the stay.
    desk.notify(paid(timedOut.linkId));
    expect(staysPaid).toEqual([`H-3:${timedOut.linkId}`]);
  });

  it("after a restart counts for the stay a payment of a gate's shown fee link notified before recovery took the link", async () => {
    const inDoubt = new Map<string, string>();
    const staysPaid: string[] = [];
    const hooks: Pick<LinkDeskDeps, 'stayPaid' | 'stayInDoubt' | 'paymentInDoubt'> = {
      stayInDoubt: (link) => void inDoubt.set(link.holdId, link.linkId),
      paymentInDoubt: (link) => inDoubt.get(link.holdId) === link.linkId,
      stayPaid: (link) => void staysPaid.push(`${link.holdId}:${link.linkId}`),
    };
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    const shown = await desk.createForFee({
      reference: 'GATE-5',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-5',
    });
    // A kiosk's fee link: no stay, its payment after a restart is the operator's as ever.
    const ticket = await desk.createForFee({ reference: 'T-89', amountMinor: 450, currency: 'GBP' });
    desk.stop();
    // The process died before it answered the notification of the payment; the next start hands the gateway's resend to
    // the desk while the journal's own recovery still runs — before the desk's recovery has taken its links.
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    desk.notify(paid(shown.linkId));
    desk.notify(paid(ticket.linkId));
    expect([...inDoubt]).toEqual([['H-5', shown.linkId]]);
    expect(staysPaid).toEqual([`H-5:${shown.linkId}`]);
    await desk.recover();
    await settle();
    expect(store.open()).toEqual([]);
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.subject ?? ''}:${r.code ?? ''}`),
    ).toEqual([`${shown.linkId}:PAID`, `${ticket.linkId}:PAID_AFTER_CLOSE`]);
  });

  it("after a restart counts a late payment of a pay station's shown fee link for its ticket, while nothing paid the ticket since", async () => {
    const ticketsPaid: string[] = [];
    const owed = new Set(['T-90', 'T-91', 'T-92', 'T-93']);
    const hooks: Pick<LinkDeskDeps, 'feePaid' | 'feeOwedAfterRestart'> = {
      feeOwedAfterRestart: (link) => owed.has(link.reference),
      feePaid: (link) => {
        // In the transaction that makes the link paid: this connection already reads it paid.
        expect(store.get(link.linkId)?.state).toBe('paid');
        ticketsPaid.push(link.reference);
      },
    };
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    // Shown to their customers when the terminal died; T-91's customer had chosen the card, its closing unconfirmed.
    const shown = await desk.createForFee({ reference: 'T-90', amountMinor: 450, currency: 'GBP' });
    const cancelled = await desk.createForFee({ reference: 'T-91', amountMinor: 450, currency: 'GBP' });
    store.closing(cancelled.linkId, 'cancelled');
    // Its ticket is paid by card after the restart, before the phone payment is notified: that one is the operator's.
    const paidSince = await desk.createForFee({ reference: 'T-92', amountMinor: 450, currency: 'GBP' });
    // Notified before the recovery took it (the gateway's resend reaches the listener first).
    const early = await desk.createForFee({ reference: 'T-93', amountMinor: 450, currency: 'GBP' });
    // Never shown: its create had no answer before the restart.
    store.begin({
      linkId: 'PT000001_T-94',
      reference: 'T-94',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    gateway.links.set('PT000001_T-94', {
      ...gateway.links.get(shown.linkId)!,
      id: 'PT000001_T-94',
      purchaseNumber: 'PT000001_T-94',
    });
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, hooks);
    desk.notify(paid(early.linkId));
    await desk.recover();
    expect(store.open()).toEqual([]);
    expect(store.get(shown.linkId)).toMatchObject({ paymentInDoubt: true, gatewayInactive: true });
    expect(store.get('PT000001_T-94')?.paymentInDoubt).toBeUndefined();
    owed.delete('T-92');
    for (const linkId of [shown.linkId, cancelled.linkId, paidSince.linkId, 'PT000001_T-94'])
      desk.notify(paid(linkId));
    expect(ticketsPaid).toEqual(['T-93', 'T-90', 'T-91']);
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.subject ?? ''}:${r.code ?? ''}`),
    ).toEqual([
      `${early.linkId}:PAID`,
      `${shown.linkId}:PAID`,
      `${cancelled.linkId}:PAID`,
      `${paidSince.linkId}:PAID_AFTER_CLOSE`,
      'PT000001_T-94:PAID_AFTER_CLOSE',
    ]);
  });

  it('after a restart a fee link paid while its deactivation is in flight goes to the operator, not counted', async () => {
    const view = await desk.createForFee({ reference: 'T-87', amountMinor: 450, currency: 'GBP' });
    desk.stop();
    desk = makeDesk();
    const answer = holdGets();
    const recovering = desk.recover();
    await new Promise((r) => setTimeout(r, 10));
    expect(desk.get(view.linkId)).toMatchObject({ state: 'active', closing: true });
    desk.notify(paid(view.linkId));
    answer();
    await recovering;
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-paid:refused:PAID_AFTER_CLOSE',
      'link-deactivate:ok:paid',
    ]);
    expect(gateway.links.get(view.linkId)?.status).toBe('INACTIVE');
  });

  it('ends every wait when the terminal stops, and is no longer available', async () => {
    expect(desk.available).toBe(true);
    const view = await desk.createForFee({ reference: 'T-1', amountMinor: 450, currency: 'GBP' });
    const waiting = desk.watch(view.linkId);
    desk.stop();
    expect(await waiting).toMatchObject({ state: 'active' });
    expect(desk.available).toBe(false);
  });

  it('counts a payment notified while the terminal closes: the ticket or stay is paid, never charged again after', async () => {
    const staysPaid: string[] = [];
    const feesPaid: string[] = [];
    desk.stop();
    desk = makeDesk(60_000, 300_000, undefined, {
      stayPaid: (link) => void staysPaid.push(`${link.holdId}:${link.linkId}`),
      feePaid: (link) => void feesPaid.push(link.linkId),
    });
    const gate = await desk.createForFee({
      reference: 'GATE-6',
      amountMinor: 450,
      currency: 'GBP',
      holdId: 'H-6',
    });
    const ticket = await desk.createForFee({ reference: 'T-90', amountMinor: 450, currency: 'GBP' });
    // The terminal closes (a SIGTERM, the daily restart): the desk stops first, while the listener still takes what
    // the gateway sends until the journal is released. The customers paid on their phones in that moment.
    desk.stop();
    desk.notify(paid(gate.linkId));
    desk.notify({ ...paid(ticket.linkId), paymentId: '7000000000000000000002' });
    // Paid in the payment's transaction: the next start finds the stay paid (never captured by card) and the ticket
    // paid (never charged again), not only a payment for the operator to refund.
    expect(staysPaid).toEqual([`H-6:${gate.linkId}`]);
    expect(feesPaid).toEqual([gate.linkId, ticket.linkId]);
    expect(
      audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => `${r.subject ?? ''}:${r.code ?? ''}`),
    ).toEqual([`${gate.linkId}:PAID`, `${ticket.linkId}:PAID`]);
  });

  it('starts no timer once stopped: a create answered while the terminal closes leaves the wait to the next start', async () => {
    const deadlines = () => (desk as unknown as { deadlines: Map<string, unknown> }).deadlines;
    const create = gateway.api.create;
    let answer: () => void = () => undefined;
    gateway.api.create = (input) =>
      new Promise((resolve, reject) => (answer = () => void create(input).then(resolve, reject)));
    const creating = desk.createForFee({ reference: 'T-88', amountMinor: 450, currency: 'GBP' });
    await new Promise((r) => setTimeout(r, 10));
    // The terminal closes while the create is out; its answer is journaled before the journal closes (settled).
    desk.stop();
    answer();
    const view = await creating;
    await desk.settled();
    expect(store.get(view.linkId)).toMatchObject({ state: 'active' });
    // Nothing of the stopped desk is left to fire later, on a journal closed by then.
    expect(deadlines().size).toBe(0);
    // The next start takes the link: a fee link whose session is gone is deactivated.
    desk = makeDesk();
    await desk.recover();
    expect(store.get(view.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'recovery' });
  });

  it('makes purchase numbers of kiosk tickets that can never read as a card number', async () => {
    // Luhn-valid 16-digit ticket (YYYYMMDDhhmm + serial): as it is, the gateway would suspend the merchant for it.
    const ticket = '2026112413050005';
    expect(personalDataIn(ticket)).toBe('card-number');
    const view = await desk.createForFee({ reference: ticket, amountMinor: 450, currency: 'GBP' });
    // The terminal id's digits and the ticket's, joined by `_`, are one run: it is broken after 12 digits.
    expect(view).toMatchObject({ linkId: 'PT000001_202611N2413050005', reference: ticket, state: 'active' });
    expect(withoutLongDigitRuns(ticket)).toBe('202611241305N0005');
    fc.assert(
      fc.property(
        // Terminal ids as a fleet numbers them (an id that is itself personal data, "SW1A1AA", refuses every link).
        fc.oneof(fc.stringMatching(/^[A-Z]{2}\d{6}$/), fc.stringMatching(/^\d{1,8}$/)),
        fc.stringMatching(/^20\d{10,18}$/),
        fc.integer({ min: 1, max: 30 }),
        (terminalId, t, n) => {
          expect(personalDataIn(purchaseNumber(terminalId, t, n))).toBeUndefined();
        },
      ),
    );
    // A reference that is itself a card number of a known network is refused, not disguised.
    await expect(
      desk.createForFee({ reference: '4111111111111111', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({
      code: 'LINK_PERSONAL_DATA',
    });
  });

  it('makes purchase numbers from references that fit a link id', () => {
    expect(purchaseNumberBase('T 2026/11/24 #5')).toBe('T-2026-11-24-5');
    expect(purchaseNumberBase('***')).toBe('PARKING');
    expect(purchaseNumber('PT000001', 'T 2026/11/24 #5')).toBe('PT000001_T-2026-11-24-5');
    expect(purchaseNumber('PT000001', 'T 2026/11/24 #5', 3)).toBe('PT000001_T-2026-11-24-5-3');
    const long = purchaseNumber('PT000001', 'x'.repeat(80), 12);
    expect(long).toHaveLength(64);
    expect(long.endsWith('x-12')).toBe(true);
    expect(() => purchaseNumber('PT-1', 'T-1')).toThrow(RangeError);
  });

  it('never makes the link id of another terminal: each id begins with its terminal id, and fits the gateway', () => {
    const terminalId = fc.stringMatching(/^[A-Za-z0-9]{1,8}$/);
    // References as the models make them (tickets, meter, lost-ticket and gate references) and any other text.
    const reference = fc.oneof(
      fc.stringMatching(/^(?:T-|M|LOST|GATE|S-)?\d{0,30}(?:T\d{6})?$/),
      fc.string({ maxLength: 90 }),
    );
    fc.assert(
      fc.property(
        terminalId,
        terminalId,
        reference,
        reference,
        fc.integer({ min: 1, max: 999 }),
        fc.integer({ min: 1, max: 999 }),
        (a, b, ra, rb, na, nb) => {
          const idA = purchaseNumber(a, ra, na);
          const idB = purchaseNumber(b, rb, nb);
          if (a !== b) expect(idA).not.toBe(idB);
          expect(carriesTerminalId(idA, a)).toBe(true);
          expect(carriesTerminalId(idA, b)).toBe(a === b);
          expect(idA).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
          expect(idA).not.toMatch(/\d(?:[._-]*\d){12}/);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('LinkDesk, with another terminal of the same merchant', () => {
  /** A second terminal of the fleet: its own journal, the same merchant at the same gateway, the same clock. */
  let other: {
    id: string;
    journal: SqliteJournal;
    store: PaymentLinkStore;
    audit: AuditTrail;
    desk: LinkDesk;
  };
  beforeEach(() => {
    const otherJournal = openJournal(':memory:', { now: () => new Date(nowMs) });
    const otherStore = new PaymentLinkStore(otherJournal);
    const otherAudit = new AuditTrail(new AuditStore(otherJournal), silentLogger());
    other = {
      id: 'PT000002',
      journal: otherJournal,
      store: otherStore,
      audit: otherAudit,
      desk: makeDesk(60_000, 300_000, { id: 'PT000002', store: otherStore, audit: otherAudit }),
    };
  });
  afterEach(() => {
    other.desk.stop();
    other.journal.close();
  });

  it('makes a link id of its own for the reference another terminal links in the same second', async () => {
    // Meter, lost-ticket and gate references are unique only to the second on one terminal.
    const reference = 'GATE20261124T130500';
    const mine = await desk.createForFee({ reference, amountMinor: 450, currency: 'GBP' });
    const theirs = await other.desk.createForFee({ reference, amountMinor: 450, currency: 'GBP' });
    expect(mine).toMatchObject({ state: 'active', reference });
    expect(theirs).toMatchObject({ state: 'active', reference });
    expect(theirs.linkId).not.toBe(mine.linkId);
    expect(mine.linkId.startsWith('PT000001_')).toBe(true);
    expect(theirs.linkId.startsWith('PT000002_')).toBe(true);
    // Each terminal counts the payment of its own link, and only that.
    const waitingMine = desk.watch(mine.linkId);
    const waitingTheirs = other.desk.watch(theirs.linkId);
    desk.notify(paid(mine.linkId));
    other.desk.notify(paid(mine.linkId));
    expect(await waitingMine).toMatchObject({ state: 'paid' });
    expect(other.desk.get(theirs.linkId)?.state).toBe('active');
    expect(other.audit.list()).toEqual([]);
    other.desk.notify(paid(theirs.linkId));
    expect(await waitingTheirs).toMatchObject({ state: 'paid' });
  });

  it('never adopts nor deactivates the link of the other terminal when its own create had no answer', async () => {
    const reference = 'LOST20261124T130500';
    const theirs = await other.desk.createForFee({ reference, amountMinor: 450, currency: 'GBP' });
    // This terminal's create for the same reference in the same second: no answer, and the gateway made nothing.
    gateway.failCreate = new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
    await expect(desk.createForFee({ reference, amountMinor: 450, currency: 'GBP' })).rejects.toMatchObject({
      code: 'LINK_UNAVAILABLE',
    });
    gateway.failCreate = undefined;
    const [mine] = store.recent();
    await desk.sweep();
    desk.stop();
    desk = makeDesk();
    await desk.recover();
    // The other terminal's customer can still pay, and is counted by the other terminal.
    expect(gateway.links.get(theirs.linkId)?.status).toBe('ACTIVE');
    expect(gateway.calls.filter((c) => c.startsWith('update'))).toEqual([]);
    expect(store.get(mine!.linkId)?.state).toBe('failed');
    expect(store.open()).toEqual([]);
    const waiting = other.desk.watch(theirs.linkId);
    other.desk.notify(paid(theirs.linkId));
    expect(await waiting).toMatchObject({ state: 'paid' });
    desk.notify(paid(theirs.linkId));
    expect(audit.list().filter((r) => r.action === 'link-paid')).toEqual([]);
  });

  it("after the upgrade does not adopt a link of the earlier id format left being created: it may be the other terminal's", async () => {
    // The other terminal made "T-500" (the format before terminal ids); this terminal's create of the same id was
    // sent by the version before the upgrade and had no answer.
    gateway.links.set('T-500', {
      id: 'T-500',
      status: 'ACTIVE',
      linkType: 'PURCHASE',
      purchaseNumber: 'T-500',
      paymentLink: 'https://pay.example.test/pay/T-500',
      currency: 'GBP',
      totalAmountMinor: 450,
      lineItems: [{ productName: 'Parking', unitPriceMinor: 450, quantity: 1 }],
    });
    store.begin({
      linkId: 'T-500',
      reference: 'T-500',
      purpose: 'pay-later',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    const taken = await desk.recover();
    expect(taken.map((v) => `${v.linkId}:${v.state}`)).toEqual(['T-500:failed']);
    expect(gateway.links.get('T-500')?.status).toBe('ACTIVE');
    expect(gateway.calls.filter((c) => c.startsWith('update'))).toEqual([]);
    await desk.sweep();
    expect(gateway.calls.filter((c) => c.startsWith('update'))).toEqual([]);
    // Its payment is not this terminal's to count.
    desk.notify(paid('T-500'));
    expect(store.get('T-500')?.state).toBe('failed');
    expect(audit.list().filter((r) => r.action === 'link-paid')).toEqual([]);
    // The operator is told which link was not taken, and why.
    expect(audit.list()).toMatchObject([
      { action: 'recovery', subject: 'T-500', result: 'refused', code: 'link-not-adopted' },
    ]);
  });

  it("ignores a payment notified for an id whose create the gateway refused: the link is the other terminal's", async () => {
    // Before the upgrade: both terminals made "T-600" in the same second; the gateway refused this terminal's create.
    const theirs = await other.desk.createForFee({ reference: 'T-600', amountMinor: 450, currency: 'GBP' });
    gateway.links.set('T-600', {
      ...gateway.links.get(theirs.linkId)!,
      id: 'T-600',
      purchaseNumber: 'T-600',
    });
    store.begin({
      linkId: 'T-600',
      reference: 'T-600',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    store.failed('T-600', 'GW_INVALID_REQUEST: DUPLICATE_RECORD');
    desk.notify(paid('T-600'));
    expect(store.get('T-600')).toMatchObject({ state: 'failed', gatewayInactive: false });
    expect(audit.list()).toEqual([]);
    await desk.settled();
    expect(gateway.links.get('T-600')?.status).toBe('ACTIVE');
    expect(gateway.calls.filter((c) => c.startsWith('update'))).toEqual([]);
    desk.notificationRefused({
      problem: 'stale',
      message: 'signed at 1, more than 300 s from now',
      signedAtMs: nowMs + 3_600_000,
      linkId: 'T-600',
      paymentId: '7000000000000000000001',
    });
    expect(audit.list()).toMatchObject([{ code: 'NOTIFICATION_STALE', details: { mine: false } }]);
  });

  it('keeps handling its links of the earlier id format that the gateway created for it', async () => {
    // Written by the version before the upgrade: created (the gateway answered the create), a pay-later link.
    gateway.links.set('S-700', {
      id: 'S-700',
      status: 'ACTIVE',
      linkType: 'PURCHASE',
      purchaseNumber: 'S-700',
      paymentLink: 'https://pay.example.test/pay/S-700',
      currency: 'GBP',
      totalAmountMinor: 450,
      lineItems: [{ productName: 'Parking', unitPriceMinor: 450, quantity: 1 }],
    });
    store.begin({
      linkId: 'S-700',
      reference: 'S-700',
      purpose: 'pay-later',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: nowMs + 60_000,
    });
    store.activated('S-700', 'https://pay.example.test/pay/S-700');
    const taken = await desk.recover();
    expect(taken.map((v) => `${v.linkId}:${v.state}`)).toEqual(['S-700:active']);
    desk.notify(paid('S-700'));
    expect(desk.get('S-700')?.state).toBe('paid');
    await desk.settled();
    expect(gateway.links.get('S-700')?.status).toBe('INACTIVE');
    expect(audit.list().map((r) => `${r.action}:${r.result}:${r.code ?? ''}`)).toEqual([
      'recovery:ok:link-watched',
      'link-paid:ok:PAID',
      'link-deactivate:ok:paid',
    ]);
  });
});

describe("LinkDesk, on the pay station's screen", () => {
  /** The pay station's machine at the fee of ticket T-1, with the host's link effects on the desk (the rest faked). */
  async function payStation(): Promise<{
    fake: FakeTerminal;
    actor: Actor<ReturnType<typeof provideFlowEffects.kiosk>>;
  }> {
    const fake = new FakeTerminal();
    const effects = createFlowEffects({ links: desk, waitFactor: () => 1 } as unknown as Parameters<
      typeof createFlowEffects
    >[0]);
    fake.createLink = effects.createLink;
    fake.awaitLink = effects.awaitLink;
    fake.closeLink = effects.closeLink;
    fake.tickets.set('T-1', fake.clock.now() - 100 * 60_000);
    const actor = createActor(provideFlowEffects.kiosk(fake), {
      input: { settings: testSettings({ payByPhone: { waitMs: 300_000 } }), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'ENTER_TICKET', ticket: 'T-1' });
    await settle();
    return { fake, actor };
  }

  /** The customer pays on the hosted page, and its notification arrives before the create's answer (or instead of it). */
  function paidBeforeTheAnswer(answer: 'arrives' | 'lost'): void {
    const create = gateway.api.create;
    gateway.api.create = async (input) => {
      const made = await create(input);
      desk.notify({ ...paid(made.id, input.totalAmountMinor), currency: input.currency });
      if (answer === 'lost') throw new GatewayError('GW_TIMEOUT', 'no answer', { outcomeUnknown: true });
      return made;
    };
  }

  for (const answer of ['arrives', 'lost'] as const)
    it(`tells a customer whose payment was notified before the create's answer (${answer}) that the ticket is paid`, async () => {
      paidBeforeTheAnswer(answer);
      const { fake, actor } = await payStation();
      actor.send({ type: 'PAY_BY_LINK' });
      await settle();
      const linkId = 'PT000001_T-1';
      // The journal: paid, counted for the ticket (the customer was waiting on it).
      expect(store.get(linkId)).toMatchObject({ state: 'paid', paymentId: '7000000000000000000001' });
      expect(audit.list().find((r) => r.action === 'link-paid')).toMatchObject({
        result: 'ok',
        code: 'PAID',
      });
      // The screen says the same: paid, with the receipt of the link payment — not that paying is unavailable.
      expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
      expect(fake.receipts).toHaveLength(1);
      expect(fake.receipts[0]).toMatchObject({ transactionId: linkId, gatewayId: '7000000000000000000001' });
      // One use: the paid link is deactivated.
      await desk.settled();
      await desk.sweep();
      expect(gateway.links.get(linkId)?.status).toBe('INACTIVE');
      expect(store.get(linkId)).toMatchObject({ state: 'paid', gatewayInactive: true });
    });
});
