import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditStore, openAuditLogReadOnly, type NewAuditRecord } from './audit.js';
import { JournalError } from './errors.js';
import { openJournal, type SqliteJournal } from './journal.js';
import { migrate } from './migrations/index.js';

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;
const now = (): Date => new Date(t);

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  t = T0;
});

function setup(path = ':memory:') {
  const journal = openJournal(path, { now });
  journals.push(journal);
  return { journal, audit: new AuditStore(journal) };
}

function tempJournal(): string {
  return join(mkdtempSync(join(tmpdir(), 'audit-')), 'journal.db');
}

function refund(tx: string, over: Partial<NewAuditRecord> = {}): NewAuditRecord {
  return {
    actor: 'operator',
    action: 'refund',
    subject: tx,
    result: 'ok',
    code: 'APPROVED',
    details: { amountMinor: 600, currency: 'GBP' },
    ...over,
  };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof JournalError) return e.code;
    throw e;
  }
  return 'no error';
}

/** The message of the SQLite error behind a refused statement. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  return 'no error';
}

const PAN = '4111111111111111';

describe('AuditStore', () => {
  it('appends a record stamped with the journal clock and lists it', () => {
    const { audit } = setup();
    const r = audit.append(refund('T1'));
    expect(r).toEqual({
      id: r.id,
      time: '2030-01-01T08:00:00.000Z',
      actor: 'operator',
      action: 'refund',
      subject: 'T1',
      result: 'ok',
      code: 'APPROVED',
      details: { amountMinor: 600, currency: 'GBP' },
    });
    const signIn = audit.append({ actor: 'operator', action: 'sign-in', result: 'ok' });
    expect(signIn).not.toHaveProperty('subject');
    expect(signIn).not.toHaveProperty('code');
    expect(signIn.details).toEqual({});
    expect(audit.list()).toEqual([r, signIn]);
  });

  it('lists the newest records at or after a time, oldest first', () => {
    const { audit } = setup();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      t = T0 + i * 60_000;
      ids.push(audit.append(refund(`T${i}`)).id);
    }
    expect(audit.list({ sinceMs: T0 + 2 * 60_000 }).map((r) => r.subject)).toEqual(['T2', 'T3', 'T4']);
    expect(audit.list({ limit: 2 }).map((r) => r.subject)).toEqual(['T3', 'T4']);
    expect(audit.list({ sinceMs: T0 + 60_000, limit: 10 }).map((r) => r.id)).toEqual(ids.slice(1));
    expect(audit.list({ sinceMs: T0 + 10 * 60_000 })).toEqual([]);
  });

  it('tells whether a record of an action about a subject already holds given facts, as they are stored', () => {
    const { audit } = setup();
    audit.append(
      refund('T1', { details: { paymentId: '7000000000000000000001', status: 'PENDING', note: PAN } }),
    );
    expect(audit.holds('refund', 'T1', { paymentId: '7000000000000000000001', status: 'PENDING' })).toBe(
      true,
    );
    // A card number is compared as the record keeps it: redacted on both sides.
    expect(audit.holds('refund', 'T1', { note: PAN })).toBe(true);
    expect(audit.holds('refund', 'T1', { paymentId: '7000000000000000000001', status: 'AUTHORIZED' })).toBe(
      false,
    );
    expect(audit.holds('refund', 'T2', { paymentId: '7000000000000000000001' })).toBe(false);
    expect(audit.holds('void', 'T1', { paymentId: '7000000000000000000001' })).toBe(false);
    expect(() => audit.holds('refund', 'x'.repeat(129), {})).toThrow(JournalError);
  });

  it('refuses UPDATE and DELETE on the table: records cannot be changed or removed', () => {
    const { audit, journal } = setup();
    const r = audit.append(refund('T1', { result: 'refused', code: 'NOT_VOIDABLE' }));
    expect(
      refusal(() => journal.db.prepare(`UPDATE audit_log SET result = 'ok' WHERE id = ?`).run(r.id)),
    ).toMatch(/append-only/);
    expect(refusal(() => journal.db.prepare('DELETE FROM audit_log WHERE id = ?').run(r.id))).toMatch(
      /append-only/,
    );
    expect(refusal(() => journal.db.prepare('DELETE FROM audit_log').run())).toMatch(/append-only/);
    expect(
      refusal(() =>
        journal.db
          .prepare(
            `INSERT OR REPLACE INTO audit_log (id, at, actor, action, result) VALUES (?, 1, 'system', 'recovery', 'ok')`,
          )
          .run(r.id),
      ),
    ).toMatch(/append-only/);
    expect(audit.list()).toEqual([r]);
  });

  it('keeps no statement that changes or removes a record', () => {
    const source = readFileSync(new URL('./audit.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(
      /UPDATE\s+audit_log|DELETE\s+FROM|OR\s+REPLACE|REPLACE\s+INTO|UPSERT|ON\s+CONFLICT/i,
    );
  });

  it('stores no card data, even when a caller passes a PAN', () => {
    const path = tempJournal();
    const { audit, journal } = setup(path);
    const r = audit.append(
      refund(PAN, {
        code: `BAD_${PAN}`,
        details: {
          pan: PAN,
          note: `customer card ${PAN} refunded`,
          track2: `;${PAN}=2912101?`,
          nested: { cardNumber: '5500 0000 0000 0004', list: [PAN] },
          amountMinor: 600,
        },
      }),
    );
    expect(JSON.stringify(r)).not.toContain(PAN);
    expect(r.subject).toBe('[REDACTED]');
    expect(r.details).toMatchObject({
      pan: '[REDACTED]',
      note: 'customer card [REDACTED] refunded',
      amountMinor: 600,
    });
    journal.close();
    // Not in any file the database wrote either.
    const dir = join(path, '..');
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).includes(PAN)).toBe(false);
  });

  it('keeps 22-digit gateway ids readable and still removes a card number written beside them', () => {
    // The gateway's transaction and payment ids are 22 digits; a card number has 12–19.
    const id = '7412345678901234567890';
    const { audit } = setup();
    const r = audit.append(
      refund(id, {
        code: `VOID_${id}`,
        details: {
          transactionId: id,
          note: `refund of payment ${id}, card 4111-1111-1111-1111`,
          reference: `${id}/4111.1111.1111.1111`,
        },
      }),
    );
    expect(r.subject).toBe(id);
    expect(r.code).toBe(`VOID_${id}`);
    expect(r.details).toEqual({
      transactionId: id,
      note: `refund of payment ${id}, card [REDACTED]`,
      reference: `${id}/[REDACTED]`,
    });
  });

  it('commits a record with the caller transaction, or not at all', () => {
    const { audit, journal } = setup();
    expect(
      code(() =>
        journal.atomically(true, () => {
          audit.append(refund('T1'));
          throw new JournalError('JOURNAL_IO', 'the outcome could not be written');
        }),
      ),
    ).toBe('JOURNAL_IO');
    expect(audit.list()).toEqual([]);
  });

  it('keeps records across a restart', () => {
    const path = tempJournal();
    const first = setup(path);
    first.audit.append(refund('T1'));
    first.journal.close();
    expect(
      setup(path)
        .audit.list()
        .map((r) => r.subject),
    ).toEqual(['T1']);
  });

  it.each([
    ['an unknown actor', { actor: 'root' as 'operator' }],
    ['an unknown action', { action: 'delete-log' as 'refund' }],
    ['an unknown result', { result: 'maybe' as 'ok' }],
    ['an empty subject', { subject: '' }],
    ['a long code', { code: 'X'.repeat(65) }],
    ['details that are not an object', { details: [1, 2] as unknown as Record<string, unknown> }],
    ['details that are too large', { details: { text: 'x'.repeat(3_000) } }],
  ])('refuses %s with JOURNAL_INVALID', (_name, over) => {
    const { audit } = setup();
    expect(code(() => audit.append(refund('T1', over)))).toBe('JOURNAL_INVALID');
    expect(audit.list()).toEqual([]);
  });

  it('refuses a bad query with JOURNAL_INVALID', () => {
    const { audit } = setup();
    expect(code(() => audit.list({ limit: 0 }))).toBe('JOURNAL_INVALID');
    expect(code(() => audit.list({ limit: 1.5 }))).toBe('JOURNAL_INVALID');
    expect(code(() => audit.list({ sinceMs: -1 }))).toBe('JOURNAL_INVALID');
  });
});

describe('openAuditLogReadOnly', () => {
  it('reads the log while the terminal holds the journal open and writes to it', () => {
    const path = tempJournal();
    const { audit, journal } = setup(path);
    journal.acquireSenderLock('the terminal');
    audit.append(refund('T1'));
    const reader = openAuditLogReadOnly(path);
    try {
      expect(reader.list().map((r) => r.subject)).toEqual(['T1']);
      audit.append(refund('T2'));
      expect(reader.list({ limit: 1 }).map((r) => r.subject)).toEqual(['T2']);
    } finally {
      reader.close();
    }
    // The terminal still writes: the reader took no lock.
    expect(audit.append(refund('T3')).subject).toBe('T3');
  });

  it('gives an empty log for a journal from before the audit log, and leaves its version alone', () => {
    const path = tempJournal();
    const db = new Database(path);
    migrate(db, 6);
    db.close();
    const reader = openAuditLogReadOnly(path);
    expect(reader.list()).toEqual([]);
    reader.close();
    const after = new Database(path, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(6);
    after.close();
  });

  it('refuses a missing file and a journal written by a newer terminal', () => {
    expect(code(() => openAuditLogReadOnly(join(tmpdir(), 'no-such-dir-audit', 'journal.db')))).toBe(
      'JOURNAL_IO',
    );
    const path = tempJournal();
    const db = new Database(path);
    db.pragma('user_version = 999');
    db.close();
    expect(code(() => openAuditLogReadOnly(path))).toBe('JOURNAL_MIGRATION');
  });
});

describe('AuditStore: fee shortfalls awaiting the operator', () => {
  const shortfall = (subject: string, shortfallMinor: number): NewAuditRecord => ({
    actor: 'system',
    action: 'fee-shortfall',
    subject,
    result: 'refused',
    code: 'INCREMENTAL_NOT_APPROVED',
    details: { owedMinor: 900, capturedMinor: 900 - shortfallMinor, shortfallMinor, currency: 'GBP' },
  });

  it('counts each subject once until acknowledged, and keeps the acknowledgement across a restart', () => {
    const path = tempJournal();
    const { journal, audit } = setup(path);
    audit.append(shortfall('cap-1', 302));
    audit.append(shortfall('cap-2', 100));
    // The same capture recorded twice is one shortfall, its first record.
    audit.append(shortfall('cap-1', 999));
    audit.append(refund('cap-3'));
    expect(audit.feeShortfallsAwaiting().map((r) => [r.subject, r.details['shortfallMinor']])).toEqual([
      ['cap-1', 302],
      ['cap-2', 100],
    ]);
    expect(audit.feeShortfallsAwaitingCount()).toBe(2);

    expect(audit.acknowledgeFeeShortfall('cap-1', 'operator')).toBe(true);
    expect(audit.acknowledgeFeeShortfall('cap-1', 'operator')).toBe(false);
    expect(audit.acknowledgeFeeShortfall('cap-3', 'operator')).toBe(false);
    journal.close();
    journals.splice(journals.indexOf(journal), 1);

    const again = setup(path).audit;
    expect(again.feeShortfallsAwaiting().map((r) => r.subject)).toEqual(['cap-2']);
    expect(again.feeShortfallsAwaitingCount()).toBe(1);
    expect(
      again
        .list()
        .filter((r) => r.action === 'fee-shortfall-acknowledge')
        .map((r) => [r.subject, r.result, r.code]),
    ).toEqual([
      ['cap-1', 'ok', 'ACKNOWLEDGED'],
      ['cap-1', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
      ['cap-3', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
    ]);
    expect(code(() => again.acknowledgeFeeShortfall('x'.repeat(129), 'operator'))).toBe('JOURNAL_INVALID');
  });

  it('reads the shortfalls and their acknowledgements through their indexes', () => {
    const { journal } = setup();
    const plan = (sql: string) =>
      journal.db
        .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all()
        .map((r) => r.detail)
        .join('; ');
    expect(plan(`SELECT COUNT(*) FROM audit_log WHERE action = 'fee-shortfall'`)).toContain(
      'audit_log_fee_shortfalls',
    );
    expect(
      plan(
        `SELECT subject FROM audit_log WHERE action = 'fee-shortfall-acknowledge' AND result = 'ok' AND subject IS NOT NULL`,
      ),
    ).toContain('audit_log_shortfalls_acknowledged');
  });
});
