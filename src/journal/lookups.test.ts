import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { staticKeyProvider } from './encryption.js';
import {
  authorizedTotalOf,
  NOT_SENT,
  openJournal,
  refundedTotalOf,
  undecidedEntriesOf,
  type SqliteJournal,
} from './journal.js';
import { OfflineQueue, type OfflinePaymentInput } from './offline-queue.js';
import { memoryJournals, saleEntry } from './testing/entries.js';
import { JournaledSender, type Transmitter } from './sender.js';

const journal = memoryJournals();

function offlinePayment(transactionId: string): OfflinePaymentInput {
  const { comments, method, path, body } = saleEntry(transactionId);
  return {
    transactionId,
    service: 'sale',
    comments,
    method,
    path,
    body,
    amountMinor: 100,
    currency: 'GBP',
    entryMode: 'contact',
    fingerprint: `card-${transactionId}`,
  };
}

/** The journal's offline queue, with room for every payment a test stores. */
function offlineQueue(j: SqliteJournal): OfflineQueue {
  return new OfflineQueue(j, {
    policy: 'prefer-online',
    limits: {
      maxTransactionMinor: 5_000,
      maxTotalMinorPerCurrency: 1e6,
      maxCount: 100,
      maxAgeHours: 24,
      maxCountPerCard: 2,
    },
    keyProvider: staticKeyProvider(Buffer.alloc(32, 7)),
  });
}

/** An approved sale with its outcome, as most of a journal's entries are. */
function sale(j: SqliteJournal, transactionId: string): number {
  const e = j.begin(saleEntry(transactionId));
  j.recordOutcome(e.id, { state: 'approved', gatewayId: `G-${transactionId}`, status: 'AUTHORIZED' });
  return e.id;
}

type Ran = { sql: string; params: unknown[] }[];

/** The statements (SQL and parameters) that better-sqlite3 runs while `fn` runs, to the end of the promise it returns. */
async function statementsOf(db: Database.Database, fn: () => unknown): Promise<Ran> {
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, unknown>;
  const seen: Ran = [];
  const originals = new Map<string, unknown>();
  for (const method of ['get', 'all', 'run', 'iterate']) {
    const original = proto[method] as (this: Database.Statement, ...a: unknown[]) => unknown;
    originals.set(method, original);
    proto[method] = function (this: Database.Statement, ...params: unknown[]) {
      seen.push({ sql: this.source, params });
      return original.apply(this, params);
    };
  }
  try {
    await fn();
  } finally {
    for (const [method, original] of originals) proto[method] = original;
  }
  return seen;
}

/** The tables a statement reads from end to end (SQLite's plan says `SCAN t`, with no index to limit it). */
function fullScans(db: Database.Database, sql: string, params: unknown[]): string[] {
  return db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...params)
    .map((r) => /^SCAN (journal_entries|offline_payments)$/.exec(r.detail)?.[1])
    .filter((t): t is string => t !== undefined);
}

describe('journal lookups', () => {
  it('finds the newest entry of a transactionId, among entries resolved as never sent too', () => {
    const j = journal();
    const first = j.begin(saleEntry('T1'));
    j.resolve(first.id, NOT_SENT);
    expect(j.findByTransactionId('T1')?.id).toBe(first.id);
    const second = j.begin(saleEntry('T1'));
    j.resolve(second.id, NOT_SENT);
    expect(j.findByTransactionId('T1')?.id).toBe(second.id);
    const live = j.begin(saleEntry('T1'));
    expect(j.findByTransactionId('T1')?.id).toBe(live.id);
    j.recordOutcome(live.id, { state: 'approved', gatewayId: 'G1' });
    expect(j.findByTransactionId('T1')).toMatchObject({ id: live.id, state: 'approved' });
    expect(j.findByTransactionId('T2')).toBeUndefined();
  });

  it('finds the increments of an authorization by its gateway id and by its transactionId, each once', () => {
    const j = journal();
    const auth = j.begin(saleEntry('A1', { service: 'preauth', comments: 'Parking Authorization' }));
    j.recordOutcome(auth.id, { state: 'approved', gatewayId: 'GA1', authorizedMinor: 600 });
    const byGatewayId = j.begin(
      saleEntry('I1', { service: 'incremental', parentGatewayId: 'GA1', amountMinor: 200 }),
    );
    j.recordOutcome(byGatewayId.id, { state: 'approved', gatewayId: 'GI1', authorizedMinor: 800 });
    const byBoth = j.begin(
      saleEntry('I2', {
        service: 'incremental',
        parentGatewayId: 'GA1',
        referencedTransactionId: 'A1',
        amountMinor: 200,
      }),
    );
    j.recordOutcome(byBoth.id, { state: 'approved', gatewayId: 'GI2', authorizedMinor: 1_000 });
    const byTransactionId = j.begin(
      saleEntry('I3', { service: 'incremental', referencedTransactionId: 'A1', parentGatewayId: 'OTHER' }),
    );
    j.recordOutcome(byTransactionId.id, { state: 'declined', gatewayId: 'GI3' });
    // Not increments: a capture of the same authorization, and an increment of another one.
    j.begin(saleEntry('C1', { service: 'capture', parentGatewayId: 'GA1', referencedTransactionId: 'A1' }));
    j.begin(
      saleEntry('I4', { service: 'incremental', parentGatewayId: 'GB1', referencedTransactionId: 'B1' }),
    );
    expect(j.incrementsOf(j.get(auth.id)!).map((e) => e.transactionId)).toEqual(['I1', 'I2', 'I3']);
    expect(authorizedTotalOf(j, 'A1')).toEqual({ minor: 1_000, currency: 'GBP' });
  });

  it('counts an approved increment whose answer stated no total as the total before it plus its amount', () => {
    const j = journal();
    const auth = j.begin(saleEntry('A1', { service: 'preauth', comments: 'Parking Authorization' }));
    j.recordOutcome(auth.id, { state: 'approved', gatewayId: 'GA1', authorizedMinor: 300 });
    const increment = (
      tx: string,
      amountMinor: number,
      outcome: Parameters<SqliteJournal['recordOutcome']>[1],
    ) =>
      j.recordOutcome(
        j.begin(saleEntry(tx, { service: 'incremental', parentGatewayId: 'GA1', amountMinor })).id,
        outcome,
      );
    increment('I1', 150, { state: 'approved', gatewayId: 'GI1' });
    expect(authorizedTotalOf(j, 'A1')).toEqual({ minor: 450, currency: 'GBP' });
    increment('I2', 150, { state: 'declined', gatewayId: 'GI2' });
    increment('I3', 150, { state: 'approved', gatewayId: 'GI3', authorizedMinor: 500 });
    increment('I4', 100, { state: 'approved', gatewayId: 'GI4' });
    expect(authorizedTotalOf(j, 'A1')).toEqual({ minor: 600, currency: 'GBP' });
  });

  it('counts the refunds of a payment that stand or may stand, and not those voided or refused', () => {
    const j = journal();
    sale(j, 'S1');
    sale(j, 'S2');
    const refund = (
      tx: string,
      amountMinor: number,
      state?: 'approved' | 'declined' | 'rejected' | 'unknown',
    ) => {
      const e = j.begin(
        saleEntry(tx, { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor }),
      );
      if (state) j.recordOutcome(e.id, { state, ...(state === 'approved' ? { gatewayId: `G-${tx}` } : {}) });
      return e;
    };
    const voidOf = (tx: string, refundTx: string, state: 'approved' | 'declined' | 'unknown') => {
      const e = j.begin(saleEntry(tx, { service: 'void-refund', referencedTransactionId: refundTx }));
      j.recordOutcome(e.id, { state, ...(state === 'approved' ? { gatewayId: `G-${tx}` } : {}) });
      return e;
    };
    expect(refundedTotalOf(j, 'S1')).toBe(0);
    refund('R1', 1, 'approved');
    refund('R2', 2); // pending: it may be on its way
    j.markSent(refund('R3', 4).id);
    refund('R4', 8, 'unknown');
    j.resolve(refund('R5', 16, 'unknown').id, 'not-voidable'); // its timeout void found it standing
    expect(refundedTotalOf(j, 'S1')).toBe(31);
    // Moved nothing: declined, rejected, never sent, voided by recovery's timeout void.
    refund('R6', 32, 'declined');
    refund('R7', 64, 'rejected');
    j.resolve(refund('R8', 128).id, NOT_SENT);
    j.resolve(refund('R9', 256, 'unknown').id, 'timeout-void');
    // Voided by the operator: approved, or finished by recovery; a void still out or declined leaves it standing.
    refund('R10', 512, 'approved');
    voidOf('V10', 'R10', 'approved');
    refund('R11', 1_024, 'approved');
    j.resolve(voidOf('V11', 'R11', 'unknown').id, 'timeout-void');
    refund('R12', 2_048, 'approved');
    voidOf('V12', 'R12', 'unknown');
    refund('R13', 4_096, 'approved');
    voidOf('V13', 'R13', 'declined');
    expect(refundedTotalOf(j, 'S1')).toBe(31 + 2_048 + 4_096);
    expect(refundedTotalOf(j, 'S2')).toBe(0);
  });

  it('names what is in flight of a payment: itself, a refund or void of it, a void of its refund — not recovery attempts', () => {
    const j = journal();
    const entry = (tx: string, e: Parameters<typeof saleEntry>[1], state?: 'approved' | 'unknown') => {
      const { id } = j.begin(saleEntry(tx, e));
      if (state) j.recordOutcome(id, { state, ...(state === 'approved' ? { gatewayId: `G-${tx}` } : {}) });
      return id;
    };
    const unknownSale = entry('S1', {}, 'unknown');
    // Recovery's timeout void of it, in flight too: it belongs to the run of the sale.
    entry('TV1', { service: 'timeout-void', referencedTransactionId: 'S1', resolvesEntryId: unknownSale });
    expect(undecidedEntriesOf(j, 'S1').map((e) => e.transactionId)).toEqual(['S1']);
    j.resolve(unknownSale, 'timeout-void');
    expect(undecidedEntriesOf(j, 'S1')).toEqual([]);

    sale(j, 'S2');
    expect(undecidedEntriesOf(j, 'S2')).toEqual([]);
    entry('R1', { service: 'refund-payment', referencedTransactionId: 'S2' }, 'approved');
    entry('VR1', { service: 'void-refund', referencedTransactionId: 'R1' }, 'unknown');
    entry('R2', { service: 'refund-payment', referencedTransactionId: 'S2' }, 'unknown');
    entry('V1', { service: 'void-payment', referencedTransactionId: 'S2' });
    expect(undecidedEntriesOf(j, 'S2').map((e) => e.transactionId)).toEqual(['VR1', 'R2', 'V1']);
    expect(undecidedEntriesOf(j, 'NONE')).toEqual([]);
  });

  it('finds the approved pre-authorizations that no capture standing and no reversal settled, however old', () => {
    const j = journal();
    /** An entry with its outcome (`state` undefined: left sent, its answer awaited). */
    const entry = (
      transactionId: string,
      e: Parameters<typeof saleEntry>[1],
      state?: 'approved' | 'declined' | 'unknown',
    ): number => {
      const { id } = j.begin(saleEntry(transactionId, e));
      j.markSent(id);
      if (state) j.recordOutcome(id, { state, gatewayId: `G-${transactionId}` });
      return id;
    };
    const preauth = (tx: string): number =>
      entry(tx, { service: 'preauth', comments: 'Parking Authorization' }, 'approved');
    const followOn = (tx: string, service: string, of: string, state?: 'approved' | 'declined' | 'unknown') =>
      entry(tx, { service, referencedTransactionId: of, parentGatewayId: `G-${of}` }, state);
    preauth('OLD'); // written before everything else: an orphan however many entries follow
    preauth('CAPTURED');
    followOn('CAP1', 'capture', 'CAPTURED', 'approved');
    preauth('REVERSED');
    followOn('REV1', 'reversal', 'REVERSED', 'approved');
    preauth('REVERSAL-UNKNOWN'); // recovery reverses it
    followOn('REV2', 'reversal', 'REVERSAL-UNKNOWN', 'unknown');
    preauth('REVERSAL-DECLINED');
    followOn('REV3', 'reversal', 'REVERSAL-DECLINED', 'declined');
    preauth('CAPTURE-VOIDED'); // voiding a capture leaves the hold in place
    followOn('CAP2', 'capture', 'CAPTURE-VOIDED', 'approved');
    followOn('VOID2', 'void-capture', 'CAP2', 'approved');
    preauth('CAPTURE-TIMEOUT-VOIDED'); // recovery voided the capture (a void whose answer was lost)
    followOn('CAP4', 'capture', 'CAPTURE-TIMEOUT-VOIDED', 'approved');
    const timeoutVoid = followOn('TV4', 'timeout-void', 'CAP4');
    j.resolve(timeoutVoid, 'timeout-void');
    preauth('CAPTURE-VOID-DECLINED'); // the capture stands
    followOn('CAP5', 'capture', 'CAPTURE-VOID-DECLINED', 'approved');
    followOn('VOID5', 'void-capture', 'CAP5', 'declined');
    entry('DECLINED', { service: 'preauth', comments: 'Parking Authorization' }, 'declined');
    entry('SALE', {}, 'approved');
    for (let i = 0; i < 10_050; i++) sale(j, `S${i}`);
    expect(j.unsettledAuthorizations().map((e) => e.transactionId)).toEqual([
      'OLD',
      'REVERSAL-DECLINED',
      'CAPTURE-VOIDED',
      'CAPTURE-TIMEOUT-VOIDED',
    ]);
  });

  it('counts entries, unknown and in-flight ones as a full count does, across commits, rollbacks and transactions', () => {
    const j = journal();
    const truth = (): { entries: number; unknown: number; inFlight: number } =>
      j.db
        .prepare<[], { entries: number; unknown: number; inFlight: number }>(
          `SELECT COUNT(*) AS entries, COALESCE(SUM(state = 'unknown'), 0) AS unknown,
            COALESCE(SUM(state IN ('pending', 'sent', 'unknown')), 0) AS inFlight FROM journal_entries`,
        )
        .get()!;
    expect(j.counts()).toEqual({ entries: 0, unknown: 0, inFlight: 0 });
    for (let i = 0; i < 5; i++) sale(j, `S${i}`);
    expect(j.counts()).toEqual(truth());
    const pending = j.begin(saleEntry('P1'));
    const unknown = j.begin(saleEntry('U1'));
    j.recordOutcome(unknown.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
    expect(j.counts()).toEqual({ entries: 7, unknown: 1, inFlight: 2 });
    // Rows of a transaction rolled back are not counted, and their ids are given again.
    expect(() =>
      j.atomically(true, () => {
        j.begin(saleEntry('R1'));
        expect(j.counts()).toEqual({ entries: 8, unknown: 1, inFlight: 3 });
        throw new Error('rolled back');
      }),
    ).toThrow();
    expect(j.counts()).toEqual(truth());
    j.begin(saleEntry('R2'));
    expect(j.counts()).toEqual({ entries: 8, unknown: 1, inFlight: 3 });
    // Entries leave the in-flight counts as they become final, the oldest first or not.
    j.resolve(unknown.id, 'reversed');
    j.recordOutcome(pending.id, { state: 'approved', gatewayId: 'GP1' });
    expect(j.counts()).toEqual(truth());
    for (let i = 5; i < 9; i++) sale(j, `S${i}`);
    expect(j.counts()).toEqual(truth());
    expect(j.counts()).toEqual({ entries: 12, unknown: 0, inFlight: 1 });
  });

  it('counts the rows another connection commits to the same file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lookups-'));
    try {
      const path = join(dir, 'journal.db');
      const ours = openJournal(path);
      const theirs = openJournal(path);
      try {
        sale(ours, 'O1');
        expect(ours.counts()).toEqual({ entries: 1, unknown: 0, inFlight: 0 });
        sale(theirs, 'T1');
        theirs.begin(saleEntry('T2'));
        expect(ours.counts()).toEqual({ entries: 3, unknown: 0, inFlight: 1 });
      } finally {
        ours.close();
        theirs.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads no table from end to end for the lookups of a payment, the operator status and the offline store', async () => {
    const j = journal();
    const queue = offlineQueue(j);
    for (let i = 0; i < 50; i++) sale(j, `S${i}`);
    const auth = j.begin(saleEntry('A1', { service: 'preauth', comments: 'Parking Authorization' }));
    j.recordOutcome(auth.id, { state: 'approved', gatewayId: 'GA1', authorizedMinor: 600 });
    j.begin(
      saleEntry('I1', { service: 'incremental', parentGatewayId: 'GA1', referencedTransactionId: 'A1' }),
    );
    const notSent = j.begin(saleEntry('N1'));
    j.resolve(notSent.id, NOT_SENT);
    // Forwarded payments, one declined: offline payments stay in their table once forwarded.
    const stored = Array.from({ length: 4 }, (_, i) => queue.store(offlinePayment(`Q${i}`)));
    const transmitter: Transmitter = {
      transmit: (r) =>
        Promise.resolve(
          r.transactionId === stored[0]!.transactionId
            ? { kind: 'declined', status: 'DECLINED', reason: 'INSUFFICIENT_FUND' }
            : { kind: 'approved', status: 'AUTHORIZED', gatewayId: `G-${r.transactionId}` },
        ),
    };
    expect((await queue.forwardPending(new JournaledSender(j, transmitter))).forwarded).toBe(4);
    const run = await statementsOf(j.db, () => {
      expect(j.findByTransactionId('NOT-THERE')).toBeUndefined();
      expect(j.findByTransactionId('S3')?.state).toBe('approved');
      expect(j.findByTransactionId('N1')?.resolution).toBe(NOT_SENT);
      expect(authorizedTotalOf(j, 'A1')).toEqual({ minor: 600, currency: 'GBP' });
      expect(j.unsettledAuthorizations().map((e) => e.transactionId)).toEqual(['A1']);
      expect(j.counts()).toEqual({ entries: 57, unknown: 0, inFlight: 1 });
      expect(queue.status().declinedAfterForward).toBe(1);
      expect(queue.declinedAfterForward()).toHaveLength(1);
      queue.store(offlinePayment('Q9'));
    });
    expect(run.length).toBeGreaterThan(8);
    const scans = run.flatMap((s) => fullScans(j.db, s.sql, s.params).map((table) => `${table}: ${s.sql}`));
    expect(scans).toEqual([]);
  });
  it('reads, for the offline expiry of each claim, the stored payments past the limit only, not every one queued', async () => {
    const j = journal();
    const queue = offlineQueue(j);
    for (let i = 0; i < 20; i++) queue.store(offlinePayment(`E${i}`));
    const transmitter: Transmitter = {
      transmit: (r) =>
        Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: `G-${r.transactionId}` }),
    };
    const sender = new JournaledSender(j, transmitter);
    let forwarded = 0;
    const run = await statementsOf(j.db, async () => {
      forwarded = (await queue.forwardPending(sender, { concurrency: 2 })).forwarded;
    });
    expect(forwarded).toBe(20);
    const expiry = run.filter((s) => /stored_at\s*</.test(s.sql));
    expect(expiry.length).toBeGreaterThan(0);
    // Each claim asks which queued payments are past the limit: a search by time of storage, which finds none here,
    // not a read of every payment in the queue (7 ms a claim at 10,000 stored on the build machine).
    for (const s of expiry) {
      const plan = j.db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${s.sql}`)
        .all(...s.params)
        .map((r) => r.detail);
      expect(plan.join('; ')).toMatch(/USING (COVERING )?INDEX \w+ \((?:state=\? AND )?stored_at[><]/);
    }
  });
});
