import { describe, expect, it } from 'vitest';
import { answeredAmountOf, refundedTotalOf } from './journal.js';
import { TimeoutRecovery } from './recovery.js';
import { ABANDONED, JournaledSender, type OutgoingRequest, type TransmitOutcome } from './sender.js';
import { memoryJournals } from './testing/entries.js';

const journal = memoryJournals();

function sale(transactionId: string): OutgoingRequest {
  return {
    service: 'sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from(`{"t":"${transactionId}"}`),
    comments: 'Parking Sale',
    transactionId,
    amountMinor: 600,
    currency: 'GBP',
    moneyMoving: true,
  };
}

/** A transmitter whose answers the test releases by hand. */
function heldTransmitter() {
  const waiting: Array<{ request: OutgoingRequest; answer: (o: TransmitOutcome) => void }> = [];
  return {
    waiting,
    transmitter: {
      transmit: (request: OutgoingRequest) =>
        new Promise<TransmitOutcome>((answer) => waiting.push({ request, answer })),
    },
  };
}

describe('the journaled sender', () => {
  it('journals the request durably before a byte goes out, then its outcome', async () => {
    const j = journal();
    const states: string[] = [];
    const sender = new JournaledSender(j, {
      transmit: () => {
        states.push(j.findByTransactionId('T1')?.state ?? 'absent');
        return Promise.resolve({ kind: 'approved', gatewayId: 'G1', status: 'AUTHORIZED', httpStatus: 201 });
      },
    });
    const { entry, outcome } = await sender.send(sale('T1'));
    // Pending while it is sent (recovery treats it as possibly sent); the time it was sent comes with the outcome.
    expect(states).toEqual(['pending']);
    expect(outcome.kind).toBe('approved');
    expect(entry).toMatchObject({ state: 'approved', gatewayId: 'G1' });
    expect(entry.sentAt).toBeDefined();
    expect(Date.parse(entry.sentAt!)).toBeLessThanOrEqual(Date.parse(entry.outcomeAt!));
  });

  it("commits what must stand before the send in the begin's own durable write, and sends nothing when it fails", async () => {
    const j = journal();
    const sent: string[] = [];
    const sender = new JournaledSender(j, {
      transmit: (r) => {
        sent.push(r.transactionId ?? '');
        return Promise.resolve({ kind: 'approved', gatewayId: 'G1', status: 'AUTHORIZED', httpStatus: 201 });
      },
    });
    const before = j.durableCommits;
    const seen: string[] = [];
    await sender.send(sale('T1'), {
      onBegin: (entry) => {
        seen.push(`${entry.transactionId ?? ''} ${entry.state}`);
        j.db.prepare(`INSERT INTO meta (key, value) VALUES ('with-the-begin', 'T1')`).run();
      },
    });
    expect(seen).toEqual(['T1 pending']);
    expect(j.db.prepare(`SELECT value FROM meta WHERE key = 'with-the-begin'`).get()).toEqual({
      value: 'T1',
    });
    // One durable write before the send, one after: no third for what the caller wrote with the begin.
    expect(j.durableCommits - before).toBe(2);
    await expect(
      sender.send(sale('T2'), {
        onBegin: () => {
          throw new Error('cannot record the ticket');
        },
      }),
    ).rejects.toMatchObject({ cause: { message: 'cannot record the ticket' } });
    expect(j.findByTransactionId('T2')).toBeUndefined();
    expect(sent).toEqual(['T1']);
  });

  it("journals the answer's approval code and the receipt's view of the card in the outcome's write", async () => {
    const j = journal();
    const card = { entryMode: 'contactless', aid: 'A0000000041010', applicationLabel: 'MASTERCARD' } as const;
    const sender = new JournaledSender(j, {
      transmit: () =>
        Promise.resolve({
          kind: 'approved',
          gatewayId: 'G1',
          status: 'AUTHORIZED',
          httpStatus: 201,
          approvalCode: '831000',
        }),
    });
    const commits: number[] = [];
    const commit = j.commitDurably.bind(j);
    j.commitDurably = (write, options) => {
      commits.push(1);
      return commit(write, options);
    };
    const { entry } = await sender.send(sale('T1'), { card });
    expect(entry).toMatchObject({ state: 'approved', approvalCode: '831000', card });
    // The begin and the outcome: no write of their own.
    expect(commits).toHaveLength(2);
  });

  it('leaves out of the journal a code or label that could carry a card number, and still journals the approval', async () => {
    const j = journal();
    const sender = new JournaledSender(j, {
      transmit: () =>
        Promise.resolve({
          kind: 'approved',
          gatewayId: 'G1',
          status: 'AUTHORIZED',
          approvalCode: '4111111111111111',
        }),
    });
    const { entry } = await sender.send(sale('T1'), {
      card: { entryMode: 'contact', aid: 'A0000000031010', applicationLabel: '4111 1111 1111 1111' },
    });
    expect(entry).toMatchObject({
      state: 'approved',
      approvalCode: undefined,
      card: { entryMode: 'contact', aid: 'A0000000031010' },
    });
    expect(entry.card?.applicationLabel).toBeUndefined();
  });

  it('journals the amount a capture answered for less than asked took, and what a refund of it may still take', async () => {
    const j = journal();
    const sender = new JournaledSender(j, {
      transmit: () =>
        Promise.resolve({
          kind: 'approved',
          gatewayId: 'G3',
          status: 'PENDING',
          httpStatus: 201,
          amountMinor: 400,
        }),
    });
    const { entry } = await sender.send({
      ...sale('C1'),
      service: 'capture',
      path: '/pts/v2/payments/A1/captures',
      comments: 'Parking Capture Less Than Auth',
      referencedTransactionId: 'A1',
    });
    expect(entry).toMatchObject({ state: 'approved', amountMinor: 600, authorizedMinor: 400 });
    expect(answeredAmountOf(entry)).toBe(400);
    // A refund not answered yet counts what it asked for; one answered, what the answer says it refunded.
    const refund = j.begin({
      ...sale('R1'),
      service: 'refund-capture',
      referencedTransactionId: 'C1',
      amountMinor: 300,
    });
    expect(refundedTotalOf(j, 'C1')).toBe(300);
    j.recordOutcome(refund.id, {
      state: 'approved',
      gatewayId: 'G4',
      status: 'PENDING',
      authorizedMinor: 250,
    });
    expect(refundedTotalOf(j, 'C1')).toBe(250);
  });

  it('sends for the outcome alone: the same two durable writes, the entry not read back', async () => {
    const j = journal();
    const states: string[] = [];
    const sender = new JournaledSender(j, {
      transmit: () => {
        states.push(j.findByTransactionId('T1B')?.state ?? 'absent');
        return Promise.resolve({ kind: 'declined', gatewayId: 'G2', status: 'DECLINED', httpStatus: 201 });
      },
    });
    const reads: number[] = [];
    const get = j.get.bind(j);
    j.get = (id: number) => (reads.push(id), get(id));
    const { entryId, outcome } = await sender.sendForOutcome(sale('T1B'));
    expect(states).toEqual(['pending']);
    expect(outcome.kind).toBe('declined');
    expect(reads).toEqual([]);
    expect(j.durableCommits).toBe(2);
    expect(j.get(entryId)).toMatchObject({
      transactionId: 'T1B',
      state: 'declined',
      gatewayId: 'G2',
    });
    expect(sender.inFlight).toBe(0);
  });

  it('resolves a request that provably never left as not sent, freeing its transactionId', async () => {
    const j = journal();
    const sender = new JournaledSender(j, {
      transmit: () => Promise.resolve({ kind: 'not-sent', reason: 'GW_CONNECTION' }),
    });
    const { entry } = await sender.send(sale('T2'));
    expect(entry).toMatchObject({ state: 'resolved', resolution: 'not-sent' });
  });

  it('takes a transmitter that throws as an unknown outcome (the bytes may have left)', async () => {
    const j = journal();
    const sender = new JournaledSender(j, { transmit: () => Promise.reject(new Error('socket hang up')) });
    const { entry } = await sender.send(sale('T3'));
    expect(entry).toMatchObject({ state: 'unknown', reason: 'SEND_FAILED' });
  });

  it('commits the caller’s writes in the transaction of the outcome: a failing write leaves the entry in flight', async () => {
    const j = journal();
    const sender = new JournaledSender(j, {
      transmit: () => Promise.resolve({ kind: 'approved', gatewayId: 'G4', status: 'AUTHORIZED' }),
    });
    await expect(
      sender.send(sale('T4'), {
        onOutcome: () => {
          throw new Error('disk full');
        },
      }),
    ).rejects.toThrow();
    // Neither the outcome nor the caller's write stands: recovery will resolve the entry.
    expect(j.findByTransactionId('T4')?.state).toBe('pending');
    expect(sender.owns(j.findByTransactionId('T4')!.id)).toBe(false);
  });

  it('fires the failpoints of each step in order', async () => {
    const j = journal();
    const seen: string[] = [];
    const sender = new JournaledSender(
      j,
      { transmit: () => Promise.resolve({ kind: 'declined', status: 'DECLINED', reason: 'EXPIRED_CARD' }) },
      { failpoint: (name) => seen.push(name) },
    );
    await sender.send(sale('T5'), {
      failpoints: { begun: 'b', sent: 's', answered: 'a', recorded: 'r' },
    });
    expect(seen).toEqual(['b', 's', 'a', 'r']);
  });

  it('owns an entry while its request is out: recovery waits for the answer instead of voiding it (a late approval stands)', async () => {
    const j = journal();
    const held = heldTransmitter();
    const sender = new JournaledSender(j, held.transmitter);
    const voids: string[] = [];
    const recovery = new TimeoutRecovery(
      j,
      {
        timeoutReversal: () => {
          throw new Error('no reversal expected');
        },
        timeoutVoid: (t) => {
          voids.push(t.transactionId);
          return {
            service: 'timeout-void',
            method: 'POST',
            path: '/pts/v2/voids',
            body: Buffer.from('{}'),
            comments: 'VOID Timeout',
            referencedTransactionId: t.transactionId,
            moneyMoving: true,
          };
        },
      },
      sender,
      { timeoutReversalDelayMs: 0, retryMs: 1 },
    );
    const sending = sender.send(sale('T6'));
    await new Promise((r) => setImmediate(r));
    const entryId = j.findByTransactionId('T6')!.id;
    expect(sender.owns(entryId)).toBe(true);
    // A sweep asks recovery to resolve the entry while the sale is still waiting for its answer.
    const recovering = recovery.recover(entryId);
    await new Promise((r) => setTimeout(r, 20));
    expect(voids).toEqual([]);
    held.waiting[0]!.answer({ kind: 'approved', gatewayId: 'G6', status: 'AUTHORIZED', httpStatus: 201 });
    const { entry } = await sending;
    expect(entry.state).toBe('approved');
    const item = await recovering;
    expect(item.resolution).toBe('approved');
    expect(voids).toEqual([]);
    expect(j.get(entryId)?.state).toBe('approved');
  });

  it('drains: resolves once every request out has its outcome journaled', async () => {
    const j = journal();
    const held = heldTransmitter();
    const sender = new JournaledSender(j, held.transmitter);
    const sending = sender.send(sale('T7'));
    await new Promise((r) => setImmediate(r));
    let drained = false;
    const draining = sender.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(drained).toBe(false);
    held.waiting[0]!.answer({ kind: 'unknown', error: { code: 'GW_TIMEOUT' } });
    await Promise.all([sending, draining]);
    expect(j.findByTransactionId('T7')?.state).toBe('unknown');
  });
});

describe('a send whose caller stopped waiting (its abandoned signal aborted)', () => {
  it('journals an approval that came after the abort as unknown, the answer kept, for recovery to undo', async () => {
    const j = journal();
    const held = heldTransmitter();
    const sender = new JournaledSender(j, held.transmitter);
    const wait = new AbortController();
    const sending = sender.send(sale('A1'), { abandoned: wait.signal });
    while (held.waiting.length === 0) await new Promise((r) => setImmediate(r));
    wait.abort();
    held.waiting[0]!.answer({ kind: 'approved', gatewayId: 'GA1', status: 'AUTHORIZED', httpStatus: 201 });
    const { entry, outcome } = await sending;
    expect(outcome).toMatchObject({ kind: 'unknown', gatewayId: 'GA1', reason: ABANDONED });
    expect(entry).toMatchObject({
      state: 'unknown',
      gatewayId: 'GA1',
      status: 'AUTHORIZED',
      reason: ABANDONED,
    });
    expect(j.inFlight().map((e) => e.id)).toEqual([entry.id]);
  });

  it('journals an answer that moved no money as it is', async () => {
    const j = journal();
    const held = heldTransmitter();
    const sender = new JournaledSender(j, held.transmitter);
    const wait = new AbortController();
    const declined = sender.send(sale('A2'), { abandoned: wait.signal });
    const verification = sender.send({ ...sale('A3'), moneyMoving: false }, { abandoned: wait.signal });
    while (held.waiting.length < 2) await new Promise((r) => setImmediate(r));
    wait.abort();
    held.waiting[0]!.answer({ kind: 'declined', gatewayId: 'GA2', status: 'DECLINED', httpStatus: 201 });
    held.waiting[1]!.answer({ kind: 'approved', gatewayId: 'GA3', status: 'AUTHORIZED', httpStatus: 201 });
    expect((await declined).entry).toMatchObject({ state: 'declined' });
    expect((await verification).entry).toMatchObject({ state: 'approved' });
  });

  it('does not send a request whose caller stopped waiting before its first byte', async () => {
    const j = journal();
    const held = heldTransmitter();
    const sender = new JournaledSender(j, held.transmitter);
    const { entry, outcome } = await sender.send(sale('A4'), { abandoned: AbortSignal.abort() });
    expect(held.waiting).toEqual([]);
    expect(outcome).toEqual({ kind: 'not-sent', reason: ABANDONED });
    expect(entry).toMatchObject({ state: 'resolved', resolution: 'not-sent' });
  });
});
