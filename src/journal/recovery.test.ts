import { afterEach, describe, expect, it } from 'vitest';
import { openJournal, type BeginEntry, type SqliteJournal } from './journal.js';
import {
  TimeoutRecovery,
  type ResolutionBuilder,
  type ResolutionRequest,
  type ResolutionTarget,
} from './recovery.js';
import { JournaledSender, type SendOutcome, type TransmitOutcome, type Transmitter } from './sender.js';

const open: SqliteJournal[] = [];
afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

/** A clock the test moves; `sleep` advances it instead of waiting. */
function clock(start = Date.parse('2030-01-01T12:00:00Z')) {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
    sleep: (ms: number, signal?: AbortSignal): Promise<void> => {
      if (signal?.aborted) return Promise.reject(new Error('aborted'));
      t += ms;
      return Promise.resolve();
    },
  };
}

interface Sent {
  kind: 'reversal' | 'void';
  target: ResolutionTarget;
  at: number;
}

/** Resolver whose answers are scripted per call; records what it built and when it was sent. */
function scriptedResolver(c: ReturnType<typeof clock>, answers: TransmitOutcome[] = []) {
  const sent: Sent[] = [];
  const built = new Map<ResolutionRequest, Sent>();
  const builder: ResolutionBuilder = {
    timeoutReversal(target) {
      const req = {
        service: 'timeout-reversal',
        method: 'POST',
        path: '/pts/v2/reversals',
        body: Buffer.from(`{"r":"${target.transactionId}"}`),
        comments: 'REVERSAL Timeout',
        referencedTransactionId: target.transactionId,
        amountMinor: target.amountMinor!,
        currency: target.currency!,
        moneyMoving: true,
      };
      built.set(req, { kind: 'reversal', target, at: 0 });
      return req;
    },
    timeoutVoid(target) {
      const req = {
        service: 'timeout-void',
        method: 'POST',
        path: '/pts/v2/voids',
        body: Buffer.from('{}'),
        comments: 'VOID Timeout',
        referencedTransactionId: target.transactionId,
        moneyMoving: true,
      };
      built.set(req, { kind: 'void', target, at: 0 });
      return req;
    },
  };
  const transmitter: Transmitter = {
    transmit(request) {
      const s = built.get(request)!;
      sent.push({ ...s, at: c.now().getTime() });
      return Promise.resolve(
        answers.shift() ?? {
          kind: 'approved',
          status: s.kind === 'reversal' ? 'REVERSED' : 'VOIDED',
          gatewayId: `r${sent.length}`,
        },
      );
    },
  };
  return { builder, transmitter, sent };
}

function setup(answers: SendOutcome[] = [], delayMs = 60_000) {
  const c = clock();
  const j = openJournal(':memory:', { now: c.now });
  open.push(j);
  const r = scriptedResolver(c, answers);
  const recovery = new TimeoutRecovery(j, r.builder, new JournaledSender(j, r.transmitter), {
    timeoutReversalDelayMs: delayMs,
    retryMs: 5_000,
    now: c.now,
    sleep: c.sleep,
  });
  return { c, j, recovery, ...r };
}

function entry(
  j: SqliteJournal,
  e: Partial<BeginEntry> & { service: string },
  state: 'pending' | 'sent' | 'unknown' | 'approved',
  outcome: { gatewayId?: string; authorizedMinor?: number } = {},
) {
  const created = j.begin({
    comments: '',
    method: 'POST',
    path: '/p',
    body: Buffer.from('{}'),
    moneyMoving: true,
    ...e,
  });
  if (state !== 'pending') j.markSent(created.id);
  if (state === 'unknown') j.recordOutcome(created.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
  if (state === 'approved') j.recordOutcome(created.id, { state: 'approved', ...outcome });
  return created;
}

describe('timeout recovery', () => {
  it('reverses an unknown pre-authorization for the amount requested, no earlier than 60 s after it was sent', async () => {
    const { c, j, recovery, sent } = setup();
    const auth = entry(
      j,
      { service: 'preauth', transactionId: 'A1', amountMinor: 1500, currency: 'GBP' },
      'unknown',
    );
    c.advance(10_000);
    const report = await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.kind).toBe('reversal');
    expect(sent[0]!.target).toMatchObject({ transactionId: 'A1', amountMinor: 1500, currency: 'GBP' });
    expect(sent[0]!.at - Date.parse(j.get(auth.id)!.sentAt!)).toBeGreaterThanOrEqual(60_000);
    expect(report.resolved).toEqual([
      expect.objectContaining({ entryId: auth.id, resolution: 'timeout-reversal', needsOperator: false }),
    ]);
    expect(j.get(auth.id)).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
    const attempt = j.get(j.get(auth.id)!.resolvedByEntryId!)!;
    expect(attempt).toMatchObject({
      service: 'timeout-reversal',
      state: 'approved',
      referencedTransactionId: 'A1',
      resolvesEntryId: auth.id,
    });
    expect(j.inFlight()).toEqual([]);
  });

  it.each(['sale', 'capture', 'refund-capture', 'refund-payment', 'credit'])(
    'voids an unknown %s at once with its own transactionId',
    async (service) => {
      const { j, recovery, sent } = setup();
      entry(
        j,
        { service, transactionId: 'T9', amountMinor: 700, currency: 'GBP', parentGatewayId: 'g' },
        'unknown',
      );
      await recovery.recoverAll();
      expect(sent).toEqual([
        expect.objectContaining({ kind: 'void', at: Date.parse('2030-01-01T12:00:00Z') }),
      ]);
      expect(sent[0]!.target.transactionId).toBe('T9');
    },
  );

  it('treats a pending entry (journaled, never marked sent) like an unknown one, counting 60 s from its creation', async () => {
    const { j, recovery, sent } = setup();
    const auth = entry(
      j,
      { service: 'preauth', transactionId: 'P1', amountMinor: 900, currency: 'GBP' },
      'pending',
    );
    await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.at - Date.parse(auth.createdAt)).toBe(60_000);
    expect(j.get(auth.id)?.state).toBe('resolved');
  });

  it('retries a resolution whose own outcome is unknown until it succeeds, journaling every attempt', async () => {
    const { j, recovery, sent } = setup([
      { kind: 'unknown', error: { code: 'GW_TIMEOUT' } },
      { kind: 'unknown', error: { code: 'GW_CONNECTION' } },
    ]);
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S1', amountMinor: 300, currency: 'GBP' },
      'unknown',
    );
    const report = await recovery.recoverAll();
    expect(sent).toHaveLength(3);
    expect(sent[1]!.at - sent[0]!.at).toBe(5_000);
    expect(report.resolved[0]).toMatchObject({ attempts: 3, resolution: 'timeout-void' });
    const attempts = j.resolutionAttempts(sale.id);
    expect(attempts.map((a) => [a.state, a.resolution])).toEqual([
      ['resolved', 'superseded'],
      ['resolved', 'superseded'],
      ['approved', undefined],
    ]);
    expect(j.inFlight()).toEqual([]);
  });

  it('waits what retryWaitMs gives after each run of attempts that did not succeed', async () => {
    const c = clock();
    const j = openJournal(':memory:', { now: c.now });
    open.push(j);
    const r = scriptedResolver(c, [
      { kind: 'not-sent', reason: 'GW_CONNECTION' },
      { kind: 'not-sent', reason: 'GW_CONNECTION' },
      { kind: 'unknown', error: { code: 'GW_TIMEOUT' } },
    ]);
    const failedCounts: number[] = [];
    const recovery = new TimeoutRecovery(j, r.builder, new JournaledSender(j, r.transmitter), {
      timeoutReversalDelayMs: 0,
      retryMs: 5_000,
      retryWaitMs: (failed) => {
        failedCounts.push(failed);
        return 1_000 * 2 ** failed;
      },
      now: c.now,
      sleep: c.sleep,
    });
    entry(j, { service: 'sale', transactionId: 'S9', amountMinor: 300, currency: 'GBP' }, 'unknown');
    await recovery.recoverAll();
    expect(failedCounts).toEqual([1, 2, 3]);
    expect(r.sent.slice(1).map((s, i) => s.at - r.sent[i]!.at)).toEqual([2_000, 4_000, 8_000]);
    expect(j.inFlight()).toEqual([]);
  });

  it('retries when the resolver throws or the request cannot be built', async () => {
    const { c, j } = setup();
    let calls = 0;
    const builder: ResolutionBuilder = {
      timeoutReversal: () => {
        throw new Error('no');
      },
      timeoutVoid: (t) => ({
        service: 'timeout-void',
        method: 'POST',
        path: '/pts/v2/voids',
        body: Buffer.from('{}'),
        comments: 'VOID Timeout',
        referencedTransactionId: t.transactionId,
        moneyMoving: true,
      }),
    };
    const transmitter: Transmitter = {
      transmit: () => {
        calls += 1;
        return calls < 2
          ? Promise.reject(new Error('socket hang up'))
          : Promise.resolve({ kind: 'approved', status: 'VOIDED' });
      },
    };
    const recovery = new TimeoutRecovery(j, builder, new JournaledSender(j, transmitter), {
      timeoutReversalDelayMs: 0,
      retryMs: 10,
      now: c.now,
      sleep: c.sleep,
    });
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S2', amountMinor: 300, currency: 'GBP' },
      'sent',
    );
    await recovery.recoverAll();
    expect(calls).toBe(2);
    expect(j.get(sale.id)?.resolution).toBe('timeout-void');
  });

  it.each([
    ['AUTH_ALREADY_REVERSED', 'already-reversed'],
    ['MISSING_AUTH', 'not-at-gateway'],
  ])('accepts a reversal rejected as %s as resolved', async (reason, how) => {
    const { j, recovery } = setup([{ kind: 'rejected', reason, httpStatus: 400 }], 0);
    const auth = entry(
      j,
      { service: 'preauth', transactionId: 'A2', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    await recovery.recoverAll();
    expect(j.get(auth.id)?.resolution).toBe(how);
  });

  it('resolves a void refused as NOT_VOIDABLE and flags it for the operator', async () => {
    const { j, recovery } = setup([{ kind: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 }]);
    entry(
      j,
      { service: 'capture', transactionId: 'C1', amountMinor: 100, currency: 'GBP', parentGatewayId: 'g' },
      'unknown',
    );
    const report = await recovery.recoverAll();
    expect(report.resolved[0]).toMatchObject({ resolution: 'not-voidable', needsOperator: true });
  });

  describe('a sale whose timeout void is refused NOT_VOIDABLE', () => {
    /** A sale of 12.22 GBP sent at the clock's start whose answer was lost. */
    const lostSale = (j: SqliteJournal) =>
      entry(j, { service: 'sale', transactionId: 'S1', amountMinor: 1_222, currency: 'GBP' }, 'unknown');

    it('then sends a timeout reversal, 60 s after the sale, which releases a hold that captured nothing', async () => {
      const { c, j, recovery, sent } = setup([
        { kind: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 },
        { kind: 'approved', status: 'REVERSED', httpStatus: 201 },
      ]);
      const start = c.now().getTime();
      const sale = lostSale(j);
      const report = await recovery.recoverAll();
      expect(sent.map((x) => [x.kind, x.target.transactionId, x.target.amountMinor])).toEqual([
        ['void', 'S1', undefined],
        ['reversal', 'S1', 1_222],
      ]);
      expect(sent[1]!.at - start).toBeGreaterThanOrEqual(60_000);
      expect(report.resolved[0]).toMatchObject({ resolution: 'timeout-reversal', needsOperator: false });
      expect(j.get(sale.id)).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
    });

    it('stands for the operator when the timeout reversal is refused too (captured, past the cut-off)', async () => {
      const { j, recovery, sent } = setup([
        { kind: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 },
        { kind: 'rejected', reason: 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED', httpStatus: 400 },
      ]);
      const sale = lostSale(j);
      const report = await recovery.recoverAll();
      expect(sent.map((x) => x.kind)).toEqual(['void', 'reversal']);
      expect(report.resolved[0]).toMatchObject({ resolution: 'not-voidable', needsOperator: true });
      expect(j.get(sale.id)).toMatchObject({ state: 'resolved', resolution: 'not-voidable' });
    });

    it('after a restart, sends the timeout reversal without voiding again', async () => {
      const { j, recovery, sent } = setup([{ kind: 'approved', status: 'REVERSED', httpStatus: 201 }]);
      const sale = lostSale(j);
      // The run before the restart had its timeout void refused, and stopped there.
      const attempt = j.begin({
        service: 'timeout-void',
        comments: 'VOID Timeout',
        method: 'POST',
        path: '/pts/v2/voids',
        body: Buffer.from('{}'),
        moneyMoving: true,
        referencedTransactionId: 'S1',
        resolvesEntryId: sale.id,
      });
      j.markSent(attempt.id);
      j.recordOutcome(attempt.id, { state: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 });
      await recovery.recoverAll();
      expect(sent.map((x) => x.kind)).toEqual(['reversal']);
      expect(j.get(sale.id)).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
    });

    it('is still for the operator when it is a capture (nothing left to reverse under its transactionId)', async () => {
      const { j, recovery, sent } = setup([{ kind: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 }]);
      entry(
        j,
        { service: 'capture', transactionId: 'C1', amountMinor: 100, currency: 'GBP', parentGatewayId: 'g' },
        'unknown',
      );
      await recovery.recoverAll();
      expect(sent.map((x) => x.kind)).toEqual(['void']);
    });
  });

  it('keeps retrying a rejection that does not settle the matter', async () => {
    const { j, recovery, sent } = setup([
      { kind: 'rejected', reason: 'SYSTEM_ERROR' },
      { kind: 'declined', status: 'FAILED' },
    ]);
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S3', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    await recovery.recoverAll();
    expect(sent).toHaveLength(3);
    expect(j.get(sale.id)?.resolution).toBe('timeout-void');
  });

  it('reverses only the increment, by its own transactionId and for the amount it requested, when an incremental authorization is unknown', async () => {
    const { j, recovery, sent } = setup();
    entry(j, { service: 'preauth', transactionId: 'A3', amountMinor: 1000, currency: 'GBP' }, 'approved', {
      gatewayId: 'G3',
      authorizedMinor: 1000,
    });
    entry(
      j,
      {
        service: 'incremental',
        transactionId: 'I1',
        parentGatewayId: 'G3',
        amountMinor: 500,
        currency: 'GBP',
      },
      'approved',
      { gatewayId: 'I1G', authorizedMinor: 1500 },
    );
    const inc = entry(
      j,
      {
        service: 'incremental',
        transactionId: 'I2',
        parentGatewayId: 'G3',
        amountMinor: 250,
        currency: 'GBP',
      },
      'unknown',
    );
    await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    // gateway.md §2: an incremental authorization is an authorization: its timeout reversal is keyed by its own
    // transactionId and carries the amount it requested; the authorization and the first increment stand.
    expect(sent[0]!.target).toMatchObject({ transactionId: 'I2', amountMinor: 250, currency: 'GBP' });
    expect(j.get(inc.id)?.resolution).toBe('timeout-reversal');
  });

  it('ends the recovery of an unknown increment whose timeout reversal finds its authorization captured (nothing of it is held any more)', async () => {
    // The meter went on without the increment (its resolution had not got through) and captured the fee below the
    // authorization: the gateway released the rest, the increment with it, and refuses the increment's timeout reversal
    // TRANSACTION_ALREADY_SETTLED from then on. Retried, it would stay in flight for ever (and block the next start).
    const { j, recovery, sent } = setup([
      { kind: 'rejected', reason: 'TRANSACTION_ALREADY_SETTLED', httpStatus: 400 },
    ]);
    entry(j, { service: 'preauth', transactionId: 'A4', amountMinor: 300, currency: 'GBP' }, 'approved', {
      gatewayId: 'G4',
      authorizedMinor: 300,
    });
    const inc = entry(
      j,
      {
        service: 'incremental',
        transactionId: 'I4',
        parentGatewayId: 'G4',
        amountMinor: 150,
        currency: 'GBP',
      },
      'unknown',
    );
    const report = await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(j.get(inc.id)).toMatchObject({ state: 'resolved', resolution: 'already-settled' });
    // The capture was sized from the authorized total without the increment: nothing for the operator.
    expect(report.resolved[0]).toMatchObject({ resolution: 'already-settled', needsOperator: false });
  });

  it('leaves an unknown pre-authorization found captured by its timeout reversal to the operator', async () => {
    const { j, recovery, sent } = setup([
      { kind: 'rejected', reason: 'TRANSACTION_ALREADY_SETTLED', httpStatus: 400 },
    ]);
    const auth = entry(
      j,
      { service: 'preauth', transactionId: 'A5', amountMinor: 300, currency: 'GBP' },
      'unknown',
    );
    const report = await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(j.get(auth.id)).toMatchObject({ state: 'resolved', resolution: 'already-settled' });
    expect(report.resolved[0]).toMatchObject({ resolution: 'already-settled', needsOperator: true });
  });

  it('refuses to journal an incremental authorization without its own transactionId (its recovery is keyed by it)', () => {
    const { j } = setup();
    expect(() =>
      entry(
        j,
        { service: 'incremental', parentGatewayId: 'G3', amountMinor: 250, currency: 'GBP' },
        'unknown',
      ),
    ).toThrowError(expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error);
  });

  it('voids what an unknown void was voiding, found by the gateway id of its original', async () => {
    const { j, recovery, sent } = setup();
    entry(
      j,
      { service: 'capture', transactionId: 'C2', amountMinor: 800, currency: 'GBP', parentGatewayId: 'G' },
      'approved',
      { gatewayId: 'CAP2' },
    );
    entry(j, { service: 'void-capture', parentGatewayId: 'CAP2' }, 'unknown');
    await recovery.recoverAll();
    expect(sent[0]).toMatchObject({
      kind: 'void',
      target: expect.objectContaining({ transactionId: 'C2' }) as unknown,
    });
  });

  it('flags a follow-on whose original is not in the journal instead of blocking forever', async () => {
    const { j, recovery, sent } = setup();
    entry(j, { service: 'void-payment', parentGatewayId: 'nowhere' }, 'unknown');
    const report = await recovery.recoverAll();
    expect(sent).toEqual([]);
    expect(report.resolved[0]).toMatchObject({ resolution: 'original-not-found', needsOperator: true });
  });

  it('resolves requests that move no money without sending anything', async () => {
    const { j, recovery, sent } = setup();
    const dcc = j.begin({
      service: 'dcc-offer',
      comments: '',
      method: 'POST',
      path: '/vas',
      body: Buffer.from('{}'),
      moneyMoving: false,
    });
    const report = await recovery.recoverAll();
    expect(sent).toEqual([]);
    expect(report.resolved.map((r) => r.resolution)).toEqual(['not-money-moving']);
    expect(j.get(dcc.id)?.state).toBe('resolved');
  });

  it('reverses an unknown zero-amount account verification like any authorization: 0.00, by its transactionId, after 60 s', async () => {
    const { j, recovery, sent } = setup();
    const avr = entry(j, { service: 'avr', transactionId: 'V1', amountMinor: 0, currency: 'GBP' }, 'unknown');
    const report = await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.kind).toBe('reversal');
    expect(sent[0]!.target).toMatchObject({ transactionId: 'V1', amountMinor: 0, currency: 'GBP' });
    expect(sent[0]!.at - Date.parse(j.get(avr.id)!.sentAt!)).toBeGreaterThanOrEqual(60_000);
    expect(report.resolved).toEqual([
      expect.objectContaining({ entryId: avr.id, resolution: 'timeout-reversal', needsOperator: false }),
    ]);
  });

  it('refuses to journal an account verification without its amount (its timeout reversal carries it)', () => {
    const { j } = setup();
    expect(() =>
      j.begin({
        service: 'avr',
        transactionId: 'V2',
        comments: 'Parking AVR',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from('{}'),
        moneyMoving: true,
      }),
    ).toThrowError(expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error);
  });

  it('after a crash mid-resolution, supersedes the stale attempt and resolves the original once', async () => {
    const { j, recovery, sent } = setup([], 0);
    const auth = entry(
      j,
      { service: 'preauth', transactionId: 'A4', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    // The previous run journaled and sent a timeout reversal, then died before its answer was journaled.
    const stale = entry(
      j,
      {
        service: 'timeout-reversal',
        referencedTransactionId: 'A4',
        amountMinor: 100,
        currency: 'GBP',
        resolvesEntryId: auth.id,
      },
      'sent',
    );
    await recovery.recoverAll();
    expect(sent).toHaveLength(1);
    expect(j.get(stale.id)).toMatchObject({ state: 'resolved', resolution: 'superseded' });
    expect(j.get(auth.id)?.state).toBe('resolved');
    expect(j.inFlight()).toEqual([]);
  });

  it("names as roots of runs the entries in flight that are not attempts: an attempt left unknown is its target's run's", () => {
    const { j, recovery } = setup([], 0);
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S7', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    const attempt = (resolves: number, ref: string) =>
      entry(
        j,
        { service: 'timeout-void', referencedTransactionId: ref, resolvesEntryId: resolves },
        'unknown',
      );
    const open = attempt(sale.id, 'S7');
    const done = entry(
      j,
      { service: 'sale', transactionId: 'S8', amountMinor: 100, currency: 'GBP' },
      'approved',
    );
    const stale = attempt(done.id, 'S8');
    // A timeout void found in flight on its own (not an attempt of a run) is a root: it is sent again.
    const lone = entry(j, { service: 'timeout-void', referencedTransactionId: 'X2' }, 'unknown');
    expect(recovery.rootsInFlight()).toEqual([sale.id, lone.id]);
    expect(j.get(open.id)?.state).toBe('unknown');
    expect(j.get(stale.id)).toMatchObject({ state: 'resolved', resolution: 'superseded' });
  });

  it('repeats a timeout request found in flight on its own (idempotent at the gateway)', async () => {
    const { j, recovery, sent } = setup([], 0);
    const tv = entry(j, { service: 'timeout-void', referencedTransactionId: 'X1' }, 'unknown');
    await recovery.recoverAll();
    expect(sent[0]).toMatchObject({
      kind: 'void',
      target: expect.objectContaining({ transactionId: 'X1' }) as unknown,
    });
    expect(j.get(tv.id)?.state).toBe('resolved');
  });

  it('shares one run when the same entry is recovered twice at once', async () => {
    const { j, recovery, sent } = setup();
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S5', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    const [a, b] = await Promise.all([recovery.recover(sale.id), recovery.recover(sale.id)]);
    expect(a).toBe(b);
    expect(sent).toHaveLength(1);
  });

  it('sends the next attempt at once when someone waits for it (recoverWithin), not after the growing wait', async () => {
    const c = clock();
    const j = openJournal(':memory:', { now: c.now });
    open.push(j);
    const r = scriptedResolver(c, [{ kind: 'not-sent', reason: 'GW_CONNECTION' }]);
    const waits: number[] = [];
    const recovery = new TimeoutRecovery(j, r.builder, new JournaledSender(j, r.transmitter), {
      timeoutReversalDelayMs: 0,
      retryMs: 5_000,
      retryWaitMs: () => 3_600_000,
      now: c.now,
      // A wait that ends only when aborted: without the wake, the run would wait the hour.
      sleep: (ms, signal) => {
        waits.push(ms);
        return new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      },
    });
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S10', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    // The machine's first ask: one attempt, not taken (the gateway is down); the run then waits.
    expect(await recovery.recoverWithin(sale.id, 1)).toBeUndefined();
    expect(r.sent).toHaveLength(1);
    expect(waits).toEqual([3_600_000]);
    // Its second ask: the attempt goes now and resolves the entry.
    expect(await recovery.recoverWithin(sale.id, 1)).toMatchObject({
      resolution: 'timeout-void',
      attempts: 2,
    });
    expect(r.sent).toHaveLength(2);
    expect(j.get(sale.id)?.resolution).toBe('timeout-void');
  });

  it('still stops with RECOVERY_ABORTED when the signal aborts during the wait before a retry', async () => {
    const c = clock();
    const j = openJournal(':memory:', { now: c.now });
    open.push(j);
    const r = scriptedResolver(c, [{ kind: 'not-sent', reason: 'GW_CONNECTION' }]);
    const recovery = new TimeoutRecovery(j, r.builder, new JournaledSender(j, r.transmitter), {
      timeoutReversalDelayMs: 0,
      retryMs: 5_000,
      now: c.now,
      sleep: (_ms, signal) =>
        new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        ),
    });
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S11', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    const stop = new AbortController();
    const run = recovery.recover(sale.id, { signal: stop.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.sent).toHaveLength(1);
    stop.abort();
    await expect(run).rejects.toMatchObject({ code: 'RECOVERY_ABORTED' });
    expect(j.inFlight().map((e) => e.id)).toContain(sale.id);
  });

  it('stops with RECOVERY_ABORTED when the signal aborts, leaving the entry in flight', async () => {
    const { j, recovery } = setup([{ kind: 'unknown' }]);
    const sale = entry(
      j,
      { service: 'sale', transactionId: 'S6', amountMinor: 100, currency: 'GBP' },
      'unknown',
    );
    const controller = new AbortController();
    const run = recovery.recoverAll({ signal: controller.signal });
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'RECOVERY_ABORTED' });
    expect(j.get(sale.id)?.state).toBe('unknown');
  });

  it('tells the operator about every resolved entry as it happens', async () => {
    const c = clock();
    const j = openJournal(':memory:', { now: c.now });
    open.push(j);
    const seen: string[] = [];
    const r = scriptedResolver(c);
    const recovery = new TimeoutRecovery(j, r.builder, new JournaledSender(j, r.transmitter), {
      timeoutReversalDelayMs: 0,
      retryMs: 1,
      now: c.now,
      sleep: c.sleep,
      onResolved: (item) => seen.push(item.transactionId ?? ''),
    });
    entry(j, { service: 'sale', transactionId: 'S7', amountMinor: 100, currency: 'GBP' }, 'unknown');
    await recovery.recoverAll();
    expect(seen).toEqual(['S7']);
  });

  it('refuses nonsensical timing options', () => {
    const j = openJournal(':memory:');
    open.push(j);
    const { builder, transmitter } = scriptedResolver(clock());
    const sender = new JournaledSender(j, transmitter);
    expect(
      () => new TimeoutRecovery(j, builder, sender, { timeoutReversalDelayMs: -1, retryMs: 1 }),
    ).toThrowError(expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error);
  });
});
