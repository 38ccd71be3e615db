import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJournal, type SqliteJournal } from './journal.js';
import { PaymentLinkStore } from './payment-links.js';

let journal: SqliteJournal;
let store: PaymentLinkStore;
let nowMs = 1_000;

beforeEach(() => {
  journal = openJournal(':memory:', { now: () => new Date(nowMs) });
  store = new PaymentLinkStore(journal);
});
afterEach(() => journal.close());

const link = {
  linkId: 'T-1',
  reference: 'T-1',
  purpose: 'fee' as const,
  amountMinor: 450,
  currency: 'GBP',
  watchUntilMs: 60_000,
};

describe('PaymentLinkStore', () => {
  it('writes a link as creating before its request, then follows it to paid and closed', () => {
    expect(store.begin(link)).toMatchObject({
      state: 'creating',
      gatewayInactive: false,
      createdAtMs: 1_000,
    });
    expect(store.open().map((l) => l.linkId)).toEqual(['T-1']);
    nowMs = 2_000;
    expect(store.activated('T-1', 'https://pay.test/pay/T-1')).toMatchObject({
      state: 'active',
      url: 'https://pay.test/pay/T-1',
      updatedAtMs: 2_000,
    });
    expect(store.paid('T-1', '7000000000000000000001')).toMatchObject({ state: 'paid', closeReason: 'paid' });
    // Paid but still ACTIVE at the gateway: open until deactivated (one use).
    expect(store.open()).toHaveLength(1);
    expect(store.deactivated('T-1', store.get('T-1')!)).toMatchObject({
      state: 'paid',
      gatewayInactive: true,
    });
    expect(store.open()).toEqual([]);
  });

  it('keeps the tap-and-go hold a link charges for, written with the link before its create', () => {
    expect(store.begin({ ...link, holdId: 'H-1' })).toMatchObject({ holdId: 'H-1', state: 'creating' });
    expect(store.paid('T-1', '7000000000000000000001').holdId).toBe('H-1');
    expect(store.begin({ ...link, linkId: 'T-2' }).holdId).toBeUndefined();
    expect(() => store.begin({ ...link, linkId: 'T-3', holdId: '' })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('puts a fee link in doubt with its closing, kept once it is deactivated and paid; never a pay-later link', () => {
    store.begin(link);
    store.activated('T-1', 'https://pay.test/pay/T-1');
    expect(store.get('T-1')?.paymentInDoubt).toBeUndefined();
    const closing = store.closing('T-1', 'recovery', (l) => store.paymentInDoubt(l.linkId));
    expect(closing.paymentInDoubt).toBeUndefined();
    expect(store.get('T-1')).toMatchObject({ paymentInDoubt: true, closeReason: 'recovery' });
    expect(store.deactivated('T-1', closing)).toMatchObject({ state: 'deactivated', paymentInDoubt: true });
    expect(store.paid('T-1', '7000000000000000000001')).toMatchObject({
      state: 'paid',
      paymentInDoubt: true,
    });
    store.begin({ ...link, linkId: 'T-2', reference: 'T-2', purpose: 'pay-later' });
    expect(() => store.paymentInDoubt('T-2')).toThrow(expect.objectContaining({ code: 'JOURNAL_INVALID' }));
    expect(store.get('T-2')?.paymentInDoubt).toBeUndefined();
  });

  it('keeps the first reason to close, and a cancelled link ends deactivated', () => {
    store.begin(link);
    store.activated('T-1', undefined);
    store.closing('T-1', 'cancelled');
    expect(store.closing('T-1', 'timeout').closeReason).toBe('cancelled');
    expect(store.open()).toHaveLength(1);
    expect(store.deactivated('T-1', store.get('T-1')!)).toMatchObject({
      state: 'deactivated',
      closeReason: 'cancelled',
    });
    expect(store.open()).toEqual([]);
    expect(store.reactivated('T-1', 90_000)).toMatchObject({ state: 'active', gatewayInactive: false });
    expect(store.get('T-1')?.closeReason).toBeUndefined();
  });

  it('does not record closed a link made ACTIVE again after the request whose answer it is was sent', () => {
    store.begin(link);
    store.activated('T-1', undefined);
    // The terminal's look at the link goes out with the link as it stands …
    const asSent = store.get('T-1')!;
    // … and the operator makes it ACTIVE again (a wait that ends at the same moment: it moves all the same).
    expect(store.reactivated('T-1', link.watchUntilMs)).toMatchObject({
      watchUntilMs: link.watchUntilMs + 1,
    });
    const reactivated = store.get('T-1')!;
    expect(store.deactivated('T-1', asSent, 'gone')).toEqual(reactivated);
    expect(store.open().map((l) => l.linkId)).toEqual(['T-1']);
    // An answer to a request sent after the reactivation is recorded, with its reason.
    expect(store.deactivated('T-1', reactivated, 'gone')).toMatchObject({
      state: 'deactivated',
      gatewayInactive: true,
      closeReason: 'gone',
    });
  });

  it('keeps a link paid when its reactivation is journaled after the payment: open until deactivated, paid once', () => {
    store.begin(link);
    store.activated('T-1', undefined);
    store.closing('T-1', 'cancelled');
    store.deactivated('T-1', store.get('T-1')!);
    // The operator's reactivation, journaled before its update is sent …
    store.closing(store.reactivated('T-1', 90_000).linkId, 'operator');
    // … which takes: the customer pays the link, and the notification is journaled before the update's answer.
    store.paid('T-1', '7000000000000000000001');
    expect(store.reactivated('T-1', 90_000)).toMatchObject({
      state: 'paid',
      paymentId: '7000000000000000000001',
      closeReason: 'paid',
      gatewayInactive: false,
    });
    // ACTIVE at the gateway: open, to be deactivated (one use).
    expect(store.open().map((l) => l.linkId)).toEqual(['T-1']);
    expect(store.deactivated('T-1', store.get('T-1')!)).toMatchObject({
      state: 'paid',
      gatewayInactive: true,
    });
  });

  it('keeps a link paid when the answer of its create arrives after the payment notification', () => {
    store.begin(link);
    store.paid('T-1', '7000000000000000000001');
    expect(store.activated('T-1', 'https://pay.test/pay/T-1')).toMatchObject({
      state: 'paid',
      url: 'https://pay.test/pay/T-1',
    });
  });

  it('refuses a second link with the same id and bad fields', () => {
    store.begin(link);
    expect(() => store.begin(link)).toThrow(expect.objectContaining({ code: 'JOURNAL_DUPLICATE' }));
    expect(() => store.begin({ ...link, linkId: 'T-2', amountMinor: 0 })).toThrow(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }),
    );
    expect(() => store.begin({ ...link, linkId: 'T 3' })).toThrow(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }),
    );
    expect(() => store.activated('nope', undefined)).toThrow(
      expect.objectContaining({ code: 'JOURNAL_NOT_FOUND' }),
    );
  });

  it('marks a refused create failed, which leaves nothing open', () => {
    store.begin(link);
    expect(store.failed('T-1', 'GW_INVALID_REQUEST')).toMatchObject({
      state: 'failed',
      lastError: 'GW_INVALID_REQUEST',
    });
    expect(store.open()).toEqual([]);
    expect(store.recent().map((l) => l.linkId)).toEqual(['T-1']);
  });
});

describe('PaymentLinkStore: what a payment makes durable besides', () => {
  it('is written in the transaction that makes the link paid, and rolled back with it', () => {
    store.begin(link);
    store.activated('T-1', 'https://pay.test/pay/T-1');
    expect(() =>
      store.paid('T-1', '7000000000000000000001', () => {
        throw new Error('the ticket could not be written');
      }),
    ).toThrow();
    expect(store.get('T-1')).toMatchObject({ state: 'active' });
    const seen: string[] = [];
    expect(store.paid('T-1', '7000000000000000000001', (l) => seen.push(l.state))).toMatchObject({
      state: 'paid',
    });
    expect(seen).toEqual(['paid']);
  });
});
