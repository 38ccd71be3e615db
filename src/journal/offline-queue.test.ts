import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.js';
import { staticKeyProvider } from './encryption.js';
import { NOT_SENT, openJournal, type OpenJournalOptions, type SqliteJournal } from './journal.js';
import { TimeoutRecovery } from './recovery.js';
import { saleEntry } from './testing/entries.js';
import {
  acknowledgeOfflineDecline,
  OfflineQueue,
  offlineDeclinesToAcknowledge,
  offlineQueueStatus,
  type ForwardOutcome,
  type OfflineLimits,
  type OfflinePaymentInput,
} from './offline-queue.js';
import { JournaledSender, type OutgoingRequest, type Transmitter } from './sender.js';

const KEY = staticKeyProvider(Buffer.alloc(32, 3));
const LIMITS: OfflineLimits = {
  maxTransactionMinor: 5_000,
  maxTotalMinorPerCurrency: 10_000,
  maxCount: 5,
  maxAgeHours: 24,
  maxCountPerCard: 2,
};
const open: SqliteJournal[] = [];
afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

let t = Date.parse('2030-01-01T08:00:00Z');
const now = (): Date => new Date(t);

/** The journal of the test running (the forwarder's sender journals in it). */
let current: SqliteJournal | undefined;

function setup(path = ':memory:', limits: OfflineLimits = LIMITS, options: OpenJournalOptions = {}) {
  const journal = openJournal(path, { now, ...options });
  open.push(journal);
  current = journal;
  const queue = new OfflineQueue(journal, { policy: 'prefer-online', limits, keyProvider: KEY, now });
  return { journal, queue };
}

let seq = 0;
function payment(overrides: Partial<OfflinePaymentInput> = {}): OfflinePaymentInput {
  seq += 1;
  return {
    transactionId: `off-${seq}`,
    service: 'sale',
    comments: 'Parking Sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from(
      JSON.stringify({ pointOfSaleInformation: { trackData: ';5555555555554444=29121010000012300000?' } }),
    ),
    amountMinor: 1_000,
    currency: 'GBP',
    entryMode: 'contact',
    maskedPan: '555555******4444',
    // A card of its own unless the test says otherwise.
    fingerprint: `fp-${seq}`,
    ...overrides,
  };
}

/** A gateway stand-in: answers per transactionId, counts sends per transactionId. */
function fakeForwarder(
  answer: (r: OutgoingRequest & { transactionId: string }) => ForwardOutcome = () => ({
    kind: 'approved',
    status: 'AUTHORIZED',
    gatewayId: 'g',
  }),
) {
  const sends = new Map<string, number>();
  const order: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const transmitter: Transmitter = {
    async transmit(r) {
      const transactionId = r.transactionId ?? '';
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      order.push(transactionId);
      sends.set(transactionId, (sends.get(transactionId) ?? 0) + 1);
      await new Promise((res) => setImmediate(res));
      inFlight -= 1;
      return answer({ ...r, transactionId });
    },
  };
  if (!current) throw new Error('setup() first');
  const forwarder = new JournaledSender(current, transmitter);
  return { forwarder, transmitter, sends, order, maxInFlight: () => maxInFlight };
}

describe('offline queue', () => {
  it('stores a chip payment and reports depth, total per currency and oldest age', () => {
    const { queue } = setup();
    queue.store(payment({ amountMinor: 1_250, serviceCode: '201' }));
    t += 90_000;
    queue.store(payment({ amountMinor: 500, currency: 'EUR' }));
    queue.store(payment({ amountMinor: 250 }));
    expect(queue.status()).toEqual({
      policy: 'prefer-online',
      depth: 3,
      totalsPerCurrency: [
        { currency: 'EUR', minor: 500, amount: '5.00' },
        { currency: 'GBP', minor: 1_500, amount: '15.00' },
      ],
      oldestAgeSeconds: 90,
      ageUnknown: 0,
      limits: LIMITS,
      declinedAfterForward: 0,
    });
  });

  it.each([
    ['a swipe', { entryMode: 'swiped' }, 'OFFLINE_ENTRY_MODE'],
    ['a contactless magnetic-stripe read', { entryMode: 'msd' }, 'OFFLINE_ENTRY_MODE'],
    ['a keyed entry', { entryMode: 'keyed' }, 'OFFLINE_ENTRY_MODE'],
    // Service code digit 2: 2 online authorization only, 4 online unless a bilateral agreement says otherwise.
    ['a card whose issuer asks for online authorization', { serviceCode: '221' }, 'OFFLINE_CARD_ONLINE_ONLY'],
    [
      'a card asking for online authorization but by agreement',
      { serviceCode: '241' },
      'OFFLINE_CARD_ONLINE_ONLY',
    ],
    ['a card whose authorization digit is unassigned', { serviceCode: '211' }, 'OFFLINE_CARD_ONLINE_ONLY'],
    ['a refund', { service: 'refund-payment' }, 'OFFLINE_SERVICE'],
    ['a credit', { service: 'credit' }, 'OFFLINE_SERVICE'],
    // Its session captures, reverses or increments it by the gateway's id, which a stored payment does not have.
    ['a pre-authorization', { service: 'preauth' }, 'OFFLINE_SERVICE'],
    ['an amount above the per-transaction limit', { amountMinor: 5_001 }, 'OFFLINE_AMOUNT_LIMIT'],
  ])('refuses %s', (_name, overrides, code) => {
    const { queue } = setup();
    expect(() => queue.store(payment(overrides))).toThrowError(expect.objectContaining({ code }) as Error);
    expect(queue.status().depth).toBe(0);
  });

  it('refuses once the total per currency would pass the limit, but not for another currency', () => {
    const { queue } = setup();
    queue.store(payment({ amountMinor: 5_000 }));
    queue.store(payment({ amountMinor: 4_000 }));
    expect(() => queue.store(payment({ amountMinor: 1_001 }))).toThrowError(
      expect.objectContaining({ code: 'OFFLINE_TOTAL_LIMIT' }) as Error,
    );
    expect(queue.store(payment({ amountMinor: 1_000 })).state).toBe('stored');
    expect(queue.store(payment({ amountMinor: 1_001, currency: 'EUR' })).state).toBe('stored');
  });

  it('refuses once the queue holds the maximum number of payments', () => {
    const { queue } = setup();
    for (let i = 0; i < 5; i++) queue.store(payment({ amountMinor: 10 }));
    expect(
      queue.refusal({
        service: 'sale',
        entryMode: 'contact',
        amountMinor: 10,
        currency: 'GBP',
        fingerprint: 'another-card',
      })?.code,
    ).toBe('OFFLINE_COUNT_LIMIT');
  });

  it('refuses a card already stored the per-card number of times, but not another card, and takes it again once forwarded', async () => {
    const { queue, journal } = setup();
    const card = 'hmac-of-card-A';
    const stored = [
      queue.store(payment({ fingerprint: card, amountMinor: 10 })),
      queue.store(payment({ fingerprint: card, amountMinor: 10 })),
    ];
    expect(() => queue.store(payment({ fingerprint: card, amountMinor: 10 }))).toThrowError(
      expect.objectContaining({ code: 'OFFLINE_CARD_LIMIT' }) as Error,
    );
    expect(queue.status().depth).toBe(2);
    // Its keyed fingerprint is stored with it, never the card number.
    expect(
      stored.map(
        (p) =>
          journal.db
            .prepare<[number], { card_fingerprint: string }>(
              'SELECT card_fingerprint FROM offline_payments WHERE id = ?',
            )
            .get(p.id)?.card_fingerprint,
      ),
    ).toEqual([card, card]);
    expect(queue.store(payment({ fingerprint: 'hmac-of-card-B', amountMinor: 10 })).state).toBe('stored');
    // Forwarded, they are no longer in the queue: the card may be stored again.
    await queue.forwardPending(fakeForwarder().forwarder);
    expect(queue.store(payment({ fingerprint: card, amountMinor: 10 })).state).toBe('stored');
    // A card number passed as a fingerprint by mistake is refused, not stored in clear.
    expect(() => queue.store(payment({ fingerprint: '5555555555554444' }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('refuses new payments once the oldest stored one is older than the age limit', () => {
    const { queue } = setup();
    queue.store(payment());
    t += 24 * 3_600_000 + 1;
    expect(() => queue.store(payment())).toThrowError(
      expect.objectContaining({ code: 'OFFLINE_AGE_LIMIT' }) as Error,
    );
  });

  it('takes nothing offline under the online-only policy', () => {
    const journal = openJournal(':memory:', { now });
    open.push(journal);
    const queue = new OfflineQueue(journal, { policy: 'online-only', limits: LIMITS, keyProvider: KEY, now });
    expect(() => queue.store(payment())).toThrowError(
      expect.objectContaining({ code: 'OFFLINE_POLICY' }) as Error,
    );
  });

  it('refuses a transactionId already stored or journaled', () => {
    const { queue, journal } = setup();
    const p = payment();
    queue.store(p);
    expect(() => queue.store(p)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_DUPLICATE' }) as Error,
    );
    journal.begin({
      transactionId: 'online-1',
      service: 'sale',
      comments: '',
      method: 'POST',
      path: '/p',
      body: Buffer.from('{}'),
      moneyMoving: true,
    });
    expect(() => queue.store(payment({ transactionId: 'online-1' }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_DUPLICATE' }) as Error,
    );
  });

  it('stores the request of an online attempt that provably never left (resolved not-sent) under its transactionId', () => {
    const { queue, journal } = setup();
    const entry = journal.begin({
      transactionId: 'refused-1',
      service: 'sale',
      comments: '',
      method: 'POST',
      path: '/p',
      body: Buffer.from('{}'),
      moneyMoving: true,
    });
    journal.markSent(entry.id);
    journal.resolve(entry.id, NOT_SENT);
    expect(queue.store(payment({ transactionId: 'refused-1' })).transactionId).toBe('refused-1');
  });

  it('forwards in order of storage, exactly once each, with bounded concurrency, and wipes the card data', async () => {
    const { queue, journal } = setup(':memory:', {
      ...LIMITS,
      maxCount: 100,
      maxTotalMinorPerCurrency: 1_000_000,
    });
    const ids = Array.from({ length: 12 }, () => queue.store(payment({ amountMinor: 100 })).transactionId);
    const f = fakeForwarder();
    const report = await queue.forwardPending(f.forwarder, { concurrency: 3 });
    expect(report).toMatchObject({
      forwarded: 12,
      approved: 12,
      declined: [],
      unknown: [],
      remaining: 0,
      gatewayUnreachable: false,
    });
    expect(f.order).toEqual(ids);
    expect([...f.sends.values()].every((n) => n === 1)).toBe(true);
    expect(f.maxInFlight()).toBe(3);
    for (const id of ids) {
      expect(queue.findByTransactionId(id)).toMatchObject({ state: 'approved', hasBody: false });
      expect(journal.findByTransactionId(id)).toMatchObject({ state: 'approved' });
    }
    const again = await queue.forwardPending(f.forwarder);
    expect(again.forwarded).toBe(0);
  });

  it('forwards with background writes: a commit of a forward waits for a write someone waits for', async () => {
    // A wait no test would sit out: only the sale's writes below can start these commits.
    const { journal, queue } = setup(':memory:', LIMITS, { groupCommit: { backgroundWaitMs: 60_000 } });
    const { transactionId } = queue.store(payment());
    const f = fakeForwarder();
    const turns = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const run = queue.forwardPending(f.forwarder);
    await turns(20);
    // The claim waits for company: not committed, nothing sent.
    expect(f.order).toEqual([]);
    expect(queue.findByTransactionId(transactionId)?.state).toBe('stored');
    // A sale's entry commits at once, and the claim with it: the forward goes out and is answered.
    await journal.beginDurably(saleEntry('live-1'));
    await turns(20);
    expect(f.order).toEqual([transactionId]);
    // Its outcome waits in turn.
    expect(queue.findByTransactionId(transactionId)?.state).toBe('forwarding');
    // Sales go on: their writes take the outcome along, and then the run's last claim, which finds nothing left.
    let done = false;
    void run.then(() => (done = true));
    for (let i = 2; i < 10 && !done; i++) {
      await journal.beginDurably(saleEntry(`live-${i}`));
      await turns(20);
    }
    const report = await run;
    expect(report.approved).toBe(1);
    expect(queue.findByTransactionId(transactionId)).toMatchObject({ state: 'approved', hasBody: false });
  });

  it('keeps one encrypted copy of a payment in flight: the stored one, not a second in its journal entry', async () => {
    const { queue, journal } = setup();
    const { transactionId } = queue.store(payment());
    const seen: unknown[] = [];
    const transmitter: Transmitter = {
      transmit(r) {
        // On the wire the bytes are whole; in the database only the stored payment holds them (encrypted).
        seen.push(r.body.toString().includes('trackData'));
        const entry = journal.findByTransactionId(transactionId);
        seen.push(entry?.bodyLength);
        seen.push(queue.findByTransactionId(transactionId)?.hasBody);
        return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g-one-copy' });
      },
    };
    const report = await queue.forwardPending(new JournaledSender(journal, transmitter));
    expect(report.approved).toBe(1);
    expect(seen).toEqual([true, payment().body.length, true]);
    expect(queue.findByTransactionId(transactionId)).toMatchObject({ state: 'approved', hasBody: false });
  });

  it('never forwards a payment twice when two flushes run at once', async () => {
    const { queue } = setup();
    for (let i = 0; i < 5; i++) queue.store(payment({ amountMinor: 100 }));
    const f = fakeForwarder();
    const [a, b] = await Promise.all([
      queue.forwardPending(f.forwarder, { concurrency: 2 }),
      queue.forwardPending(f.forwarder, { concurrency: 2 }),
    ]);
    expect(a.forwarded + b.forwarded).toBe(5);
    expect([...f.sends.values()]).toEqual([1, 1, 1, 1, 1]);
  });

  it('reports declines after forwarding until the operator acknowledges them', async () => {
    const { queue } = setup();
    const declined = queue.store(payment({ amountMinor: 100 }));
    queue.store(payment({ amountMinor: 100 }));
    const f = fakeForwarder((r) =>
      r.transactionId === declined.transactionId
        ? { kind: 'declined', status: 'DECLINED', reason: 'INSUFFICIENT_FUND' }
        : { kind: 'approved', status: 'AUTHORIZED' },
    );
    const report = await queue.forwardPending(f.forwarder);
    expect(report.declined).toEqual([
      expect.objectContaining({
        transactionId: declined.transactionId,
        reason: 'INSUFFICIENT_FUND',
        hasBody: false,
      }),
    ]);
    expect(queue.status().declinedAfterForward).toBe(1);
    expect(queue.acknowledgeDecline(declined.id)).toBe(true);
    expect(queue.status().declinedAfterForward).toBe(0);
  });

  it('takes no acknowledgement of a forward whose outcome recovery has not resolved yet', async () => {
    const { queue, journal } = setup();
    const p = queue.store(payment({ amountMinor: 100 }));
    const f = fakeForwarder(() => ({ kind: 'unknown', error: { code: 'GW_TIMEOUT' } }));
    const report = await queue.forwardPending(f.forwarder);
    expect(report.unknown).toHaveLength(1);
    // Listed, but whether it was collected is not known: acknowledged now, it would not come back once recovery found
    // it voided (not collected).
    expect(queue.status().declinedAfterForward).toBe(1);
    expect(queue.acknowledgeDecline(p.id)).toBe(false);
    expect(acknowledgeOfflineDecline(journal, p.transactionId)).toBe(false);
    journal.resolve(report.unknown[0]!, 'timeout-void');
    expect(queue.acknowledgeDecline(p.id)).toBe(true);
    expect(queue.status().declinedAfterForward).toBe(0);
  });

  it('reports a payment approved for less than its amount after forwarding, as a decline is, until acknowledged', async () => {
    const { queue } = setup();
    const short = queue.store(payment({ amountMinor: 1_221 }));
    const whole = queue.store(payment({ amountMinor: 100 }));
    const f = fakeForwarder((r) =>
      r.transactionId === short.transactionId
        ? {
            kind: 'approved',
            status: 'PARTIAL_AUTHORIZED',
            gatewayId: 'g-short',
            authorizedMinor: 610,
            partial: true,
          }
        : {
            kind: 'approved',
            status: 'AUTHORIZED',
            gatewayId: 'g-whole',
            authorizedMinor: 100,
            partial: false,
          },
    );
    const report = await queue.forwardPending(f.forwarder);
    // The customer was told it was paid in full: the operator is told what was not collected.
    expect(report).toMatchObject({ forwarded: 2, approved: 2 });
    expect(report.declined).toEqual([
      expect.objectContaining({
        transactionId: short.transactionId,
        amountMinor: 1_221,
        state: 'approved',
        reason: 'PARTIAL_APPROVAL',
        hasBody: false,
      }),
    ]);
    expect(queue.get(whole.id)).toMatchObject({ state: 'approved' });
    expect(queue.get(whole.id)?.reason).toBeUndefined();
    expect(queue.status().declinedAfterForward).toBe(1);
    expect(queue.declinedAfterForward().map((p) => p.id)).toEqual([short.id]);
    expect(queue.acknowledgeDecline(whole.id)).toBe(false);
    expect(queue.acknowledgeDecline(short.id)).toBe(true);
    expect(queue.status().declinedAfterForward).toBe(0);
  });

  it('hands an unknown forward to timeout recovery and never forwards it again', async () => {
    const { queue, journal } = setup();
    const p = queue.store(payment());
    const f = fakeForwarder(() => ({ kind: 'unknown', error: { code: 'GW_TIMEOUT' } }));
    const report = await queue.forwardPending(f.forwarder);
    expect(report.unknown).toEqual([journal.findByTransactionId(p.transactionId)!.id]);
    expect(queue.get(p.id)).toMatchObject({ state: 'unknown', hasBody: false });
    expect((await queue.forwardPending(f.forwarder)).forwarded).toBe(0);
    expect(f.sends.get(p.transactionId)).toBe(1);
  });

  it("lists a forward of unknown outcome with recovery's resolution once it has one: voided, or standing (paid)", async () => {
    const { queue, journal } = setup();
    const voided = queue.store(payment());
    const stands = queue.store(payment());
    const f = fakeForwarder(() => ({ kind: 'unknown', error: { code: 'GW_SERVER_ERROR' } }));
    await queue.forwardPending(f.forwarder);
    const listed = () =>
      Object.fromEntries(offlineDeclinesToAcknowledge(journal).map((p) => [p.transactionId, p]));
    expect(listed()[voided.transactionId]?.resolution).toBeUndefined();
    // Timeout recovery's outcomes (src/journal/recovery.ts): its timeout void took, or was refused NOT_VOIDABLE.
    journal.resolve(journal.findByTransactionId(voided.transactionId)!.id, 'timeout-void');
    journal.resolve(journal.findByTransactionId(stands.transactionId)!.id, 'not-voidable');
    expect(listed()).toMatchObject({
      [voided.transactionId]: { state: 'unknown', reason: 'GW_SERVER_ERROR', resolution: 'timeout-void' },
      [stands.transactionId]: { state: 'unknown', reason: 'GW_SERVER_ERROR', resolution: 'not-voidable' },
    });
    expect(queue.declinedAfterForward().map((p) => p.resolution)).toEqual(['timeout-void', 'not-voidable']);
  });

  it('writes what a stored payment pays for in the transaction of the store, and stores nothing when that fails', () => {
    const { queue, journal } = setup();
    const seen: Array<{ transactionId: string; inTransaction: boolean; stored: boolean }> = [];
    const p = payment();
    queue.store(p, {
      onStored: (transactionId) =>
        seen.push({
          transactionId,
          inTransaction: journal.db.inTransaction,
          stored: queue.findByTransactionId(transactionId) !== undefined,
        }),
    });
    expect(seen).toEqual([{ transactionId: p.transactionId, inTransaction: true, stored: true }]);
    const failing = payment();
    expect(() =>
      queue.store(failing, {
        onStored: () => {
          throw new Error('disk full');
        },
      }),
    ).toThrow();
    expect(queue.findByTransactionId(failing.transactionId)).toBeUndefined();
    expect(queue.status().depth).toBe(1);
  });

  it('awaits the outcome of a stored payment until its forward is answered or resolved', async () => {
    const { queue, journal } = setup();
    const approved = queue.store(payment());
    const declined = queue.store(payment());
    const lost = queue.store(payment());
    for (const p of [approved, declined, lost])
      expect(queue.awaitingOutcome(p.transactionId)).toMatchObject({ state: 'stored' });
    expect(queue.awaitingOutcome('never-stored')).toBeUndefined();
    const f = fakeForwarder((r) =>
      r.transactionId === approved.transactionId
        ? { kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' }
        : r.transactionId === declined.transactionId
          ? { kind: 'declined', status: 'DECLINED', reason: 'INSUFFICIENT_FUND' }
          : { kind: 'unknown', error: { code: 'GW_TIMEOUT' } },
    );
    await queue.forwardPending(f.forwarder);
    // Answered: the journal says what it took.
    expect(queue.awaitingOutcome(approved.transactionId)).toBeUndefined();
    expect(queue.awaitingOutcome(declined.transactionId)).toBeUndefined();
    // Its answer lost: it may have been collected until recovery resolves its entry.
    expect(queue.awaitingOutcome(lost.transactionId)).toMatchObject({ state: 'unknown' });
    journal.resolve(journal.findByTransactionId(lost.transactionId)!.id, 'timeout-void');
    expect(queue.awaitingOutcome(lost.transactionId)).toBeUndefined();
  });

  it('puts a payment back and stops when the gateway cannot be reached (nothing sent)', async () => {
    const { queue, journal } = setup();
    const first = queue.store(payment());
    queue.store(payment());
    const down = fakeForwarder(() => ({ kind: 'not-sent', reason: 'ECONNREFUSED' }));
    const report = await queue.forwardPending(down.forwarder, { concurrency: 1 });
    expect(report).toMatchObject({
      forwarded: 0,
      gatewayUnreachable: true,
      unreachableReason: 'ECONNREFUSED',
      remaining: 2,
    });
    expect(queue.get(first.id)).toMatchObject({ state: 'stored', hasBody: true });
    expect(journal.findByTransactionId(first.transactionId)).toMatchObject({
      state: 'resolved',
      resolution: 'not-sent',
    });
    const up = fakeForwarder();
    expect((await queue.forwardPending(up.forwarder)).approved).toBe(2);
    expect(journal.findByTransactionId(first.transactionId)?.state).toBe('approved');
  });

  it('keeps a payment the gateway refused for now (PROCESSOR_UNAVAILABLE) stored, and forwards it once it passes', async () => {
    const { queue, journal } = setup();
    const first = queue.store(payment());
    const second = queue.store(payment());
    // gateway.md §4: a 400 the processor's outage explains; nothing was processed, the same request can pass later.
    const busy = fakeForwarder(() => ({
      kind: 'rejected',
      httpStatus: 400,
      reason: 'PROCESSOR_UNAVAILABLE',
    }));
    const report = await queue.forwardPending(busy.forwarder, { concurrency: 1 });
    expect(report).toMatchObject({ forwarded: 0, declined: [], remaining: 2 });
    expect(busy.sends.get(second.transactionId)).toBeUndefined();
    expect(queue.get(first.id)).toMatchObject({ state: 'stored', hasBody: true });
    expect(queue.status().declinedAfterForward).toBe(0);
    expect(journal.findByTransactionId(first.transactionId)).toMatchObject({
      state: 'resolved',
      resolution: 'not-sent',
    });
    const up = fakeForwarder();
    expect((await queue.forwardPending(up.forwarder)).approved).toBe(2);
    expect(journal.findByTransactionId(first.transactionId)?.state).toBe('approved');
  });

  it('closes a payment refused for good (INVALID_DATA) for the operator, never forwarded again', async () => {
    const { queue } = setup();
    const refused = queue.store(payment());
    const f = fakeForwarder(() => ({ kind: 'rejected', httpStatus: 400, reason: 'INVALID_DATA' }));
    const report = await queue.forwardPending(f.forwarder);
    expect(report.declined).toEqual([
      expect.objectContaining({ transactionId: refused.transactionId, state: 'rejected', hasBody: false }),
    ]);
    await queue.forwardPending(fakeForwarder().forwarder);
    expect(f.sends.get(refused.transactionId)).toBe(1);
    expect(queue.get(refused.id)?.state).toBe('rejected');
  });

  it('claims nothing while no connection to the gateway can be opened: no forward is left in doubt', async () => {
    const { queue, journal } = setup();
    const first = queue.store(payment());
    queue.store(payment());
    let probes = 0;
    let reachable = false;
    const sends: string[] = [];
    const sender = new JournaledSender(journal, {
      transmit: (r) => {
        sends.push(r.transactionId ?? '');
        return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' });
      },
      reachable: () => {
        probes += 1;
        return Promise.resolve(
          reachable ? { reachable: true } : { reachable: false, host: 'OAuth token host auth.test:443' },
        );
      },
    });
    const report = await queue.forwardPending(sender, { concurrency: 2 });
    expect(report).toMatchObject({
      forwarded: 0,
      gatewayUnreachable: true,
      unreachableReason: 'GW_CONNECTION',
      // Which connection did not open: here the token host the access token must be fetched from.
      unreachableHost: 'OAuth token host auth.test:443',
      remaining: 2,
    });
    expect(probes).toBe(1);
    expect(sends).toEqual([]);
    // Not claimed: no journal entry that a crash could leave "sent", the payment still stored with its card data.
    expect(journal.findByTransactionId(first.transactionId)).toBeUndefined();
    expect(queue.get(first.id)).toMatchObject({ state: 'stored', hasBody: true });
    reachable = true;
    expect(await queue.forwardPending(sender, { concurrency: 2 })).toMatchObject({
      approved: 2,
      remaining: 0,
    });
    expect(probes).toBe(2);
    // An empty queue asks nothing of the gateway.
    expect(await queue.forwardPending(sender)).toMatchObject({ forwarded: 0, gatewayUnreachable: false });
    expect(probes).toBe(2);
  });

  it('after a crash mid-forward, copies a journaled outcome and leaves an unanswered forward to recovery', () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-'));
    const path = join(dir, 'q.db');
    const { queue, journal } = setup(path);
    const answered = queue.store(payment());
    const unanswered = queue.store(payment());
    // Simulate the process dying: claims and outcomes written by hand as forwardPending would have.
    for (const p of [answered, unanswered]) {
      const e = journal.begin({
        transactionId: p.transactionId,
        service: 'sale',
        comments: '',
        method: 'POST',
        path: '/p',
        body: Buffer.from('{}'),
        amountMinor: p.amountMinor,
        currency: 'GBP',
        moneyMoving: true,
      });
      journal.markSent(e.id);
      journal.db
        .prepare(`UPDATE offline_payments SET state = 'forwarding', journal_entry_id = ? WHERE id = ?`)
        .run(e.id, p.id);
      if (p === answered)
        journal.recordOutcome(e.id, { state: 'approved', gatewayId: 'gA', status: 'AUTHORIZED' });
    }
    journal.close();
    open.splice(open.indexOf(journal), 1);
    const after = setup(path);
    expect(after.queue.get(answered.id)).toMatchObject({
      state: 'approved',
      gatewayId: 'gA',
      hasBody: false,
    });
    expect(after.queue.get(unanswered.id)?.state).toBe('forwarding');
    const entry = after.journal.findByTransactionId(unanswered.transactionId)!;
    after.journal.resolve(entry.id, 'timeout-void');
    after.queue.reconcile();
    expect(after.queue.get(unanswered.id)?.state).toBe('unknown');
    expect(after.queue.status().declinedAfterForward).toBe(1);
  });

  it('refuses to open with a key other than the one stored payments were encrypted with', () => {
    const { queue, journal } = setup();
    queue.store(payment());
    expect(
      () =>
        new OfflineQueue(journal, {
          policy: 'prefer-online',
          limits: LIMITS,
          keyProvider: staticKeyProvider(Buffer.alloc(32, 4)),
          now,
        }),
    ).toThrowError(expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error);
  });

  it('computes the same status through the exported function without a key', () => {
    const { queue, journal } = setup();
    queue.store(payment());
    expect(offlineQueueStatus(journal, { policy: 'prefer-online', limits: LIMITS }, now())).toEqual(
      queue.status(),
    );
  });

  it('writes no card number or track data in clear to the database files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-'));
    const { queue, journal } = setup(join(dir, 'q.db'));
    for (let i = 0; i < 4; i++) queue.store(payment({ amountMinor: 10 }));
    await queue.forwardPending(fakeForwarder().forwarder, { concurrency: 1 });
    queue.store(payment({ amountMinor: 10 }));
    journal.close();
    open.splice(open.indexOf(journal), 1);
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes).not.toContain('5555555555554444');
      expect(bytes).not.toContain('=2912101');
    }
  });

  it('rejects malformed input with typed errors', () => {
    const { queue } = setup();
    expect(() => queue.store(payment({ amountMinor: 1.5 }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => queue.store(payment({ currency: 'ZZZ' }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => queue.store(payment({ maskedPan: '5555555555554444' }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => queue.store(payment({ serviceCode: '2x1' }))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => queue.store(null as unknown as OfflinePaymentInput)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => setup(':memory:', { ...LIMITS, maxCount: -1 })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('puts back a forward an earlier release claimed but never marked sent, and forwards it once', async () => {
    const { queue, journal } = setup();
    const p = queue.store(payment());
    // A claim as releases that marked sent in a later commit wrote it; the process died before that mark.
    const e = journal.begin({
      transactionId: p.transactionId,
      service: 'sale',
      comments: '',
      method: 'POST',
      path: '/p',
      body: Buffer.from('{}'),
      amountMinor: p.amountMinor,
      currency: 'GBP',
      moneyMoving: true,
    });
    journal.db
      .prepare(`UPDATE offline_payments SET state = 'forwarding', journal_entry_id = ? WHERE id = ?`)
      .run(e.id, p.id);
    const sent: string[] = [];
    const recovery = new TimeoutRecovery(
      journal,
      {
        timeoutReversal: () => {
          throw new Error('must not reverse');
        },
        timeoutVoid: () => {
          throw new Error('must not void');
        },
      },
      new JournaledSender(journal, { transmit: () => Promise.reject(new Error('must not send')) }),
      { timeoutReversalDelayMs: 0, retryMs: 1, now },
    );
    const report = await recovery.recoverAll();
    expect(report.resolved).toEqual([expect.objectContaining({ entryId: e.id, resolution: 'not-sent' })]);
    expect(queue.get(p.id)?.state).toBe('stored');
    const f = fakeForwarder((r) => {
      sent.push(r.transactionId);
      return { kind: 'approved', status: 'AUTHORIZED' };
    });
    expect((await queue.forwardPending(f.forwarder)).approved).toBe(1);
    expect(sent).toEqual([p.transactionId]);
  });

  it('claims a payment already marked sent, in the one durable commit made before its send', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-'));
    const path = join(dir, 'q.db');
    const { queue, journal } = setup(path);
    const p = queue.store(payment());
    const onDisk = openJournal(path, { now });
    open.push(onDisk);
    const seen: unknown[] = [];
    const commitsBefore = journal.durableCommits;
    const transmitter: Transmitter = {
      transmit() {
        // Another connection sees only what was committed: the claim, its entry marked sent.
        const entry = onDisk.findByTransactionId(p.transactionId);
        seen.push(entry?.state, entry?.sentAt, journal.durableCommits - commitsBefore);
        seen.push(onDisk.db.prepare('SELECT state FROM offline_payments WHERE id = ?').pluck().get(p.id));
        return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g-claimed' });
      },
    };
    const report = await queue.forwardPending(new JournaledSender(journal, transmitter), { concurrency: 1 });
    expect(report.approved).toBe(1);
    expect(seen).toEqual(['sent', now().toISOString(), 1, 'forwarding']);
    expect(onDisk.findByTransactionId(p.transactionId)).toMatchObject({
      state: 'approved',
      sentAt: now().toISOString(),
      gatewayId: 'g-claimed',
    });
  });
  it("owns each forward's entry from the claim's write, before its commit lets anything else see it", async () => {
    const { queue, journal } = setup();
    const p = queue.store(payment());
    const f = fakeForwarder();
    const forwarding = queue.forwardPending(f.forwarder, { concurrency: 1 });
    // A write queued behind the claim, in the same group commit: the first that can read the claim's entry.
    const seen = await journal.commitDurably(() => {
      const entry = journal.findByTransactionId(p.transactionId);
      return { state: entry?.state, owned: entry !== undefined && f.forwarder.owns(entry.id) };
    });
    expect(seen).toEqual({ state: 'sent', owned: true });
    expect((await forwarding).approved).toBe(1);
    expect(f.forwarder.inFlight).toBe(0);
  });

  it('releases the forwards of a claim that fails: nothing sent, nothing owned, every payment still stored', async () => {
    const { queue, journal } = setup();
    const first = queue.store(payment());
    const second = queue.store(payment());
    // The second payment's transactionId is journaled already (a damaged file, say): the claim of both throws after
    // beginning the first's forward.
    journal.begin(saleEntry(second.transactionId));
    const f = fakeForwarder();
    await expect(queue.forwardPending(f.forwarder, { concurrency: 2 })).rejects.toMatchObject({
      code: 'JOURNAL_DUPLICATE',
    });
    expect(f.sends.size).toBe(0);
    expect(f.forwarder.inFlight).toBe(0);
    expect(journal.inFlight().map((e) => e.transactionId)).toEqual([second.transactionId]);
    expect([queue.get(first.id)?.state, queue.get(second.id)?.state]).toEqual(['stored', 'stored']);
  });

  it.each([
    ['comments longer than a journal entry keeps', { comments: 'x'.repeat(257) }],
    ['an empty flowId', { flowId: '' }],
    ['a flowId longer than a journal entry keeps', { flowId: 'f'.repeat(129) }],
  ])(
    'refuses a payment with %s: its forward could never be journaled, and would hold up every payment after it',
    async (_name, bad) => {
      const { queue } = setup();
      expect(() => queue.store(payment(bad))).toThrowError(
        expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
      );
      const good = queue.store(payment());
      const f = fakeForwarder();
      expect(await queue.forwardPending(f.forwarder)).toMatchObject({ approved: 1, remaining: 0 });
      expect(f.order).toEqual([good.transactionId]);
    },
  );

  it('never forwards a payment stored more than seven days ago: it is closed for the operator, its card data wiped', async () => {
    const { queue, journal } = setup();
    const old = queue.store(payment());
    t += 3_600_000;
    const recent = queue.store(payment());
    // Seven days and a moment after the first was stored (a gateway down for a week, credentials not mended).
    t += 167 * 3_600_000 + 1;
    const f = fakeForwarder();
    const report = await queue.forwardPending(f.forwarder);
    expect(f.order).toEqual([recent.transactionId]);
    expect(report).toMatchObject({
      forwarded: 1,
      approved: 1,
      declined: [
        { transactionId: old.transactionId, state: 'rejected', reason: 'OFFLINE_EXPIRED', hasBody: false },
      ],
      remaining: 0,
    });
    expect(journal.findByTransactionId(old.transactionId)).toBeUndefined();
    expect(queue.status()).toMatchObject({ depth: 0, declinedAfterForward: 1 });
    expect(queue.declinedAfterForward().map((p) => p.transactionId)).toEqual([old.transactionId]);
  });

  it('closes a payment stored more than seven days ago while the gateway stays unreachable: its card data kept no longer', async () => {
    const { queue, journal } = setup(':memory:', { ...LIMITS, maxAgeHours: 168 });
    const old = queue.store(payment());
    t += 3_600_000;
    const recent = queue.store(payment());
    // The gateway down for a week and a moment since the first was stored: every forwarding run finds no connection.
    t += 167 * 3_600_000 + 1;
    const sends: string[] = [];
    const sender = new JournaledSender(journal, {
      transmit: (r) => {
        sends.push(r.transactionId ?? '');
        return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' });
      },
      reachable: () => Promise.resolve({ reachable: false, host: 'gateway api.test:443' }),
    });
    const report = await queue.forwardPending(sender);
    expect(sends).toEqual([]);
    expect(report).toMatchObject({
      forwarded: 0,
      gatewayUnreachable: true,
      declined: [
        { transactionId: old.transactionId, state: 'rejected', reason: 'OFFLINE_EXPIRED', hasBody: false },
      ],
      remaining: 1,
    });
    // The one still within its seven days waits, with its card data, for the gateway.
    expect(queue.get(recent.id)).toMatchObject({ state: 'stored', hasBody: true });
    expect(queue.status()).toMatchObject({ depth: 1, declinedAfterForward: 1 });
    // Closed, it no longer holds up the age limit: the oldest stored payment is the recent one, 167 h old.
    expect(queue.refusal(payment())).toBeUndefined();
  });

  it('forwards a payment stored while the clock was not yet set (flat clock battery) once NTP has stepped it on by years: its age is not known, the gateway decides', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString('utf8'));
          cb();
        },
      }),
    });
    const real = t;
    // The kiosk started offline with its clock at 2000-01-01 and took two payments, their customers told they paid.
    t = Date.parse('2000-01-01T00:10:00Z');
    const journal = openJournal(':memory:', { now });
    open.push(journal);
    current = journal;
    const queue = new OfflineQueue(journal, {
      policy: 'prefer-online',
      limits: LIMITS,
      keyProvider: KEY,
      now,
      logger,
    });
    const first = queue.store(payment());
    t += 3_600_000;
    const second = queue.store(payment());
    // The network came back, and NTP stepped the clock on to the real time: the card reads are hours old, not decades.
    t = real;
    const f = fakeForwarder();
    const report = await queue.forwardPending(f.forwarder);
    expect(f.order).toEqual([first.transactionId, second.transactionId]);
    expect(report).toMatchObject({ forwarded: 2, approved: 2, declined: [], remaining: 0 });
    // The operator reads why a payment stored "decades ago" was sent, and no card data.
    const told = lines.filter((l) => l.includes('age not known'));
    expect(told).toHaveLength(2);
    expect(told[0]).toContain(first.transactionId);
    expect(told[0]).toContain('2000-01-01T00:10:00.000Z');
    expect(lines.join('')).not.toContain('5555555555554444');
  });

  it('never forwards a payment stored while the clock was ahead once a payment stored after it is known to be past seven days', async () => {
    const { queue } = setup();
    const real = t;
    // The clock a year ahead (set by hand), a payment stored; then the clock set back to the real time.
    t = real + 365 * 24 * 3_600_000;
    const ahead = queue.store(payment());
    t = real;
    const after = queue.store(payment());
    // Seven days and a moment after the second: the first, stored before it, is older still.
    t += 168 * 3_600_000 + 1;
    const f = fakeForwarder();
    const report = await queue.forwardPending(f.forwarder);
    expect(f.order).toEqual([]);
    expect(report).toMatchObject({
      forwarded: 0,
      declined: [
        { transactionId: ahead.transactionId, state: 'rejected', reason: 'OFFLINE_EXPIRED', hasBody: false },
        { transactionId: after.transactionId, state: 'rejected', reason: 'OFFLINE_EXPIRED', hasBody: false },
      ],
      remaining: 0,
    });
  });

  it('keeps taking payments offline once NTP has stepped on the clock a stored payment was read under before it was set: the age limit reads the oldest payment whose age is known', () => {
    const { queue } = setup();
    const real = t;
    // The kiosk started offline with its clock at 2000-01-01 and took a payment.
    t = Date.parse('2000-01-01T00:10:00Z');
    const unset = queue.store(payment());
    // NTP stepped the clock on to the real time, the network gone again: the next customer is not turned away.
    t = real;
    const known = queue.store(payment());
    expect(queue.status()).toMatchObject({ depth: 2, oldestAgeSeconds: 0, ageUnknown: 1 });
    // The limit still holds, by the payment whose age is known (and the one stored before it is older still).
    t += 24 * 3_600_000 + 1;
    expect(queue.refusal(payment())).toMatchObject({ code: 'OFFLINE_AGE_LIMIT' });
    expect(queue.status()).toMatchObject({ oldestAgeSeconds: 24 * 3_600, ageUnknown: 1 });
    expect([unset.state, known.state]).toEqual(['stored', 'stored']);
  });

  it('reports no age for a payment whose time of storage is no real time, and counts it apart: not decades, not zero', () => {
    const { queue } = setup();
    const real = t;
    t = Date.parse('2000-01-01T00:10:00Z');
    queue.store(payment());
    t = real;
    expect(queue.status()).toMatchObject({ depth: 1, oldestAgeSeconds: null, ageUnknown: 1 });
    // Stored while the clock was a year ahead, set back since: not "stored just now" either.
    const { queue: other } = setup();
    t = real + 365 * 24 * 3_600_000;
    other.store(payment());
    t = real;
    expect(other.status()).toMatchObject({ depth: 1, oldestAgeSeconds: null, ageUnknown: 1 });
    // The exported function, as `queue status` reads it, says the same.
    expect(offlineQueueStatus(current!, { policy: 'prefer-online', limits: LIMITS })).toEqual(other.status());
  });

  describe('with the time since boot (a clock no step moves)', () => {
    let bootId = 'boot-1';
    let up = 0;
    const bootClock = () => ({ bootId, sinceBootMs: up });
    /** Real time passing: both clocks move. */
    const pass = (ms: number): void => {
      t += ms;
      up += ms;
    };
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString('utf8'));
          cb();
        },
      }),
    });
    function setupBooted(path = ':memory:') {
      const journal = openJournal(path, { now });
      open.push(journal);
      current = journal;
      const options = {
        policy: 'prefer-online',
        limits: LIMITS,
        keyProvider: KEY,
        now,
        bootClock,
        logger,
      } as const;
      return { journal, queue: new OfflineQueue(journal, options) };
    }

    it('forwards a payment stored before NTP stepped the clock on by a month in the same boot: its age is the hour it waited', async () => {
      bootId = 'boot-1';
      up = 60_000;
      const { queue } = setupBooted();
      // The kiosk started at the time its system last saved (a month behind), offline: a payment is stored.
      const stored = queue.store(payment());
      pass(3_600_000);
      // NTP steps the clock on by thirty days; an hour has passed since the payment was stored.
      t += 30 * 24 * 3_600_000;
      const f = fakeForwarder();
      const report = await queue.forwardPending(f.forwarder);
      expect(f.order).toEqual([stored.transactionId]);
      expect(report).toMatchObject({ approved: 1, declined: [] });
      // Its time of storage moved with the clock: an hour before now; the operator reads the step.
      expect(Date.parse(queue.get(stored.id)?.storedAt ?? '')).toBe(t - 3_600_000);
      const told = lines.filter((l) => l.includes('terminal clock stepped'));
      expect(told).toHaveLength(1);
      expect(JSON.parse(told[0] ?? '{}')).toMatchObject({ stepSeconds: 30 * 24 * 3_600, moved: 1 });
    });

    it('follows the step across a restart of the terminal in the same boot', async () => {
      bootId = 'boot-2';
      up = 60_000;
      const dir = mkdtempSync(join(tmpdir(), 'offline-boot-'));
      const path = join(dir, 'journal.db');
      const first = setupBooted(path);
      const stored = first.queue.store(payment());
      first.journal.close();
      pass(3_600_000);
      t += 30 * 24 * 3_600_000;
      const { queue } = setupBooted(path);
      const f = fakeForwarder();
      expect(await queue.forwardPending(f.forwarder)).toMatchObject({ approved: 1, declined: [] });
      expect(f.order).toEqual([stored.transactionId]);
    });

    it('takes the next payment offline when one stored in this boot before NTP stepped the clock on from 2000 has waited an hour by the time since boot', () => {
      bootId = 'boot-7';
      up = 60_000;
      const real = t;
      t = Date.parse('2000-01-01T00:10:00Z');
      const { queue } = setupBooted();
      queue.store(payment());
      pass(3_600_000);
      t = real;
      // An hour waited: the next customer is taken offline, asked before the store as the terminal asks.
      expect(queue.refusal(payment())).toBeUndefined();
      expect(queue.status()).toMatchObject({ oldestAgeSeconds: 3_600, ageUnknown: 0 });
    });

    it('refuses by the time since boot once a payment stored under a clock not yet set has waited past the limit', () => {
      bootId = 'boot-8';
      up = 60_000;
      const real = t;
      t = Date.parse('2000-01-01T00:10:00Z');
      const { queue } = setupBooted();
      queue.store(payment());
      pass(24 * 3_600_000 + 1);
      t = real;
      // The question asked before the store and the store's own check give one answer.
      expect(queue.refusal(payment())).toMatchObject({ code: 'OFFLINE_AGE_LIMIT' });
      expect(() => queue.store(payment())).toThrowError(
        expect.objectContaining({ code: 'OFFLINE_AGE_LIMIT' }) as Error,
      );
    });

    it('still closes a payment that waited more than seven days by the time since boot (a terminal suspended meanwhile too)', async () => {
      bootId = 'boot-3';
      up = 60_000;
      const { queue } = setupBooted();
      const old = queue.store(payment());
      pass(168 * 3_600_000 + 1);
      const f = fakeForwarder();
      const report = await queue.forwardPending(f.forwarder);
      expect(f.order).toEqual([]);
      expect(report.declined).toMatchObject([
        { transactionId: old.transactionId, reason: 'OFFLINE_EXPIRED' },
      ]);
    });

    it('records the footing anew over a damaged one: a store is never refused for it', async () => {
      bootId = 'boot-6';
      up = 60_000;
      const { queue, journal } = setupBooted();
      journal.db
        .prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('offline_clock', '{not json')")
        .run();
      const stored = queue.store(payment());
      pass(3_600_000);
      t += 30 * 24 * 3_600_000;
      const f = fakeForwarder();
      expect(await queue.forwardPending(f.forwarder)).toMatchObject({ approved: 1, declined: [] });
      expect(f.order).toEqual([stored.transactionId]);
    });

    it('cannot follow a step made before a reboot: a payment stored in an earlier boot keeps its time of storage', async () => {
      bootId = 'boot-4';
      up = 60_000;
      const { queue } = setupBooted();
      const old = queue.store(payment());
      // Rebooted, the clock stepped on by eight days at once: what happened in between is not known.
      bootId = 'boot-5';
      up = 30_000;
      t += 8 * 24 * 3_600_000;
      const f = fakeForwarder();
      const report = await queue.forwardPending(f.forwarder);
      expect(f.order).toEqual([]);
      expect(report.declined).toMatchObject([
        { transactionId: old.transactionId, reason: 'OFFLINE_EXPIRED' },
      ]);
    });
  });

  it('forwards a payment stored while the clock was ahead, set back since, when nothing shows it past seven days', async () => {
    const { queue } = setup();
    const real = t;
    t = real + 365 * 24 * 3_600_000;
    const ahead = queue.store(payment());
    t = real + 3_600_000;
    const f = fakeForwarder();
    expect(await queue.forwardPending(f.forwarder)).toMatchObject({ approved: 1, declined: [] });
    expect(f.order).toEqual([ahead.transactionId]);
  });

  it('when a claim fails mid-run, ends only once the forwards already on the wire have their outcomes journaled', async () => {
    const { queue, journal } = setup();
    const [first, second, third] = [queue.store(payment()), queue.store(payment()), queue.store(payment())];
    // The third cannot be claimed (its transactionId journaled already: a damaged file, say).
    journal.begin(saleEntry(third.transactionId));
    let releaseSecond!: () => void;
    const secondAnswered = new Promise<void>((r) => (releaseSecond = r));
    const transmitter: Transmitter = {
      async transmit(r) {
        if (r.transactionId === second.transactionId) await secondAnswered;
        return { kind: 'approved', status: 'AUTHORIZED', gatewayId: `g-${r.transactionId}` };
      },
    };
    let secondAtEnd: string | undefined;
    const run = queue
      .forwardPending(new JournaledSender(journal, transmitter), { concurrency: 2 })
      .then(
        () => 'resolved',
        (e: unknown) => (e as { code?: string }).code,
      )
      .then((how) => {
        secondAtEnd = queue.get(second.id)?.state;
        return how;
      });
    // The first's answer frees a slot; the claim of the third then fails while the second waits for its answer. The
    // second is answered once the run has ended, or after turns enough for a run that does not wait to end.
    for (let turn = 0; turn < 200 && secondAtEnd === undefined; turn++)
      await new Promise((r) => setImmediate(r));
    releaseSecond();
    expect(await run).toBe('JOURNAL_DUPLICATE');
    expect(secondAtEnd).toBe('approved');
    expect([queue.get(first.id)?.state, queue.get(third.id)?.state]).toEqual(['approved', 'stored']);
  });

  it('closes a stored payment it cannot read for the operator, out of the queue and its limits, and forwards the ones after it', async () => {
    const { queue, journal } = setup();
    const unreadable = [queue.store(payment()), queue.store(payment())];
    const readable = [queue.store(payment()), queue.store(payment())];
    // One's sealed request is gone, the other's damaged (sealed under another key, say).
    journal.db.prepare('UPDATE offline_payments SET body_enc = NULL WHERE id = ?').run(unreadable[0]!.id);
    journal.db
      .prepare('UPDATE offline_payments SET body_enc = ? WHERE id = ?')
      .run(Buffer.alloc(64, 7), unreadable[1]!.id);
    const f = fakeForwarder();
    const report = await queue.forwardPending(f.forwarder, { concurrency: 1 });
    expect(f.order).toEqual(readable.map((p) => p.transactionId));
    expect(report).toMatchObject({
      forwarded: 2,
      approved: 2,
      declined: unreadable.map((p) => ({
        transactionId: p.transactionId,
        state: 'rejected',
        reason: 'OFFLINE_UNREADABLE',
        hasBody: false,
      })),
      remaining: 0,
    });
    expect(readable.map((p) => queue.get(p.id)?.state)).toEqual(['approved', 'approved']);
    expect(journal.inFlight()).toEqual([]);
    // Never sent: no journal entry.
    expect(unreadable.map((p) => journal.findByTransactionId(p.transactionId))).toEqual([
      undefined,
      undefined,
    ]);
    // Out of the depth and the oldest age (which would stop all storing once past maxAgeHours), counted for the
    // operator until acknowledged, as a decline after forwarding is.
    t += (LIMITS.maxAgeHours + 1) * 3_600_000;
    expect(queue.status()).toMatchObject({ depth: 0, oldestAgeSeconds: null, declinedAfterForward: 2 });
    expect(queue.refusal(payment())).toBeUndefined();
    expect(offlineDeclinesToAcknowledge(journal).map((p) => p.transactionId)).toEqual(
      unreadable.map((p) => p.transactionId),
    );
    expect(acknowledgeOfflineDecline(journal, unreadable[0]!.transactionId)).toBe(true);
    expect(queue.status().declinedAfterForward).toBe(1);
  });

  it("claims the next payment when an answer is in, in the same commit as that answer's outcome", async () => {
    const { queue, journal } = setup(':memory:', {
      ...LIMITS,
      maxCount: 100,
      maxTotalMinorPerCurrency: 1_000_000,
    });
    for (let i = 0; i < 6; i++) queue.store(payment({ amountMinor: 100 }));
    const f = fakeForwarder();
    const commitsBefore = journal.durableCommits;
    const report = await queue.forwardPending(f.forwarder, { concurrency: 1 });
    expect(report.approved).toBe(6);
    expect(f.maxInFlight()).toBe(1);
    // The first claim, then one commit per answer (its outcome and the next claim), then the claim that finds none.
    // A claim made only once the outcome was durable would take a commit of its own: 13.
    expect(journal.durableCommits - commitsBefore).toBe(8);
  });
});
