import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migration0012 } from './0012-journal-without-request-bytes.js';
import { LATEST_VERSION, migrate, schemaVersion } from './index.js';
import { LOOKUP_INDEX_NAMES } from './lookup-indexes.js';
import { OFFLINE_CARD_COLUMN, OFFLINE_OPEN_BY_CARD_INDEX } from './offline-card-fingerprints.js';
import { RECEIPT_COPY_COLUMNS } from './receipt-copies.js';
import { RECEIPT_FACT_COLUMNS } from './receipt-facts.js';

/** A file as the terminal of version 12 left it: migrations 1 to 12, no rewrite. */
function writtenAt12(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, 11);
  db.transaction(() => {
    migration0012.up(db);
    db.pragma('user_version = 12');
  })();
  return db;
}

/** A journal at version 12 with entries in several states, links between them and an offline payment. */
function journalAt12(): Database.Database {
  const db = writtenAt12();
  db.pragma('foreign_keys = ON');
  const entry =
    db.prepare(`INSERT INTO journal_entries (transaction_id, referenced_transaction_id, service, comments,
    method, path, body_length, amount_minor, currency, masked_pan, money_moving, state, created_at, resolves_entry_id)
    VALUES (?, ?, ?, 'Parking', 'POST', '/pts/v2/payments', 64, 600, 'GBP', '476173******0119', 1, ?, 1, ?)`);
  const auth = Number(entry.run('A1', null, 'preauth', 'resolved', null).lastInsertRowid);
  const reversal = Number(entry.run(null, 'A1', 'timeout-reversal', 'approved', auth).lastInsertRowid);
  db.prepare('UPDATE journal_entries SET resolved_by_entry_id = ? WHERE id = ?').run(reversal, auth);
  entry.run('S1', null, 'sale', 'unknown', null);
  const forwarded = Number(entry.run('Q1', null, 'sale', 'sent', null).lastInsertRowid);
  // The sequence ahead of the rows: an id once given is never given again.
  db.prepare("UPDATE sqlite_sequence SET seq = 40 WHERE name = 'journal_entries'").run();
  db.prepare(
    `INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc, amount_minor,
    currency, entry_mode, state, journal_entry_id, stored_at) VALUES (?, 'sale', 'Parking', 'POST', '/pts/v2/payments',
    ?, 600, 'GBP', 'contactless', ?, ?, 1)`,
  ).run('Q1', Buffer.from('sealed'), 'forwarding', forwarded);
  db.prepare(
    `INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc, amount_minor,
    currency, entry_mode, state, stored_at) VALUES ('Q2', 'sale', 'Parking', 'POST', '/pts/v2/payments', ?, 600, 'GBP',
    'contactless', 'stored', 2)`,
  ).run(Buffer.from('sealed too'));
  return db;
}

/** A row without the columns the receipt-facts and receipt-copies rewrites add (their own tests). */
function withoutReceiptFacts(row: unknown): unknown {
  return Object.fromEntries(
    Object.entries(row as Record<string, unknown>).filter(
      ([name]) => !RECEIPT_FACT_COLUMNS.includes(name) && !RECEIPT_COPY_COLUMNS.includes(name),
    ),
  );
}

/** A stored payment without the column the offline-card-fingerprints rewrite adds (its own test). */
function withoutCardFingerprint(row: unknown): unknown {
  return Object.fromEntries(
    Object.entries(row as Record<string, unknown>).filter(([name]) => name !== OFFLINE_CARD_COLUMN),
  );
}

/**
 * What a migration must not change: every row, every index (by name and definition), the sequences. The indexes the
 * lookup-indexes rewrite adds are left out (`lookup-indexes.test.ts`), and the columns the receipt-facts and
 * receipt-copies ones add, and the column and index of the offline-card-fingerprints one
 * (`offline-card-fingerprints.test.ts`).
 */
function contents(db: Database.Database): unknown {
  return {
    entries: db.prepare('SELECT * FROM journal_entries ORDER BY id').all().map(withoutReceiptFacts),
    payments: db.prepare('SELECT * FROM offline_payments ORDER BY id').all().map(withoutCardFingerprint),
    indexes: db
      .prepare<[], { name: string }>(
        "SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('journal_entries', 'offline_payments') ORDER BY name",
      )
      .all()
      .filter((i) => !LOOKUP_INDEX_NAMES.includes(i.name) && i.name !== OFFLINE_OPEN_BY_CARD_INDEX),
    sequences: db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').all(),
  };
}

/** How many temporary indexes one run of `sql` builds. */
function ephemeralIndexes(db: Database.Database, sql: string, params: unknown[]): number {
  return db
    .prepare<unknown[], { opcode: string }>(`EXPLAIN ${sql}`)
    .all(...params)
    .filter((op) => op.opcode === 'OpenEphemeral').length;
}

const INSERT_ENTRY = `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length,
  money_moving, state, created_at) VALUES (?, 'sale', 'Parking', 'POST', '/pts/v2/payments', 64, 1, ?, 1)`;

describe('schema rewrite: state checks without lists', () => {
  it('rebuilds both tables with the same rows, ids, indexes and sequences, the same rule and version', () => {
    expect(LATEST_VERSION).toBe(12);
    const db = journalAt12();
    const before = contents(db);
    expect(ephemeralIndexes(db, INSERT_ENTRY, ['X', 'pending'])).toBe(1);
    expect(migrate(db)).toEqual([]);
    // The version the previous terminal opens: nothing it reads or writes changed.
    expect(schemaVersion(db)).toBe(12);
    expect(contents(db)).toEqual(before);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    // No temporary index per insert or state change any more.
    expect(ephemeralIndexes(db, INSERT_ENTRY, ['X', 'pending'])).toBe(0);
    expect(ephemeralIndexes(db, "UPDATE offline_payments SET state = 'approved' WHERE id = ?", [1])).toBe(0);
    // The same rule: every state of the list is accepted, anything else refused.
    for (const state of ['pending', 'sent', 'approved', 'declined', 'rejected', 'unknown', 'resolved'])
      expect(() => db.prepare(INSERT_ENTRY).run(`T-${state}`, state)).not.toThrow();
    expect(() => db.prepare(INSERT_ENTRY).run('T-bad', 'stored')).toThrow(/CHECK constraint failed/);
    expect(() => db.prepare(INSERT_ENTRY).run('T-null', null)).toThrow(/NOT NULL/);
    expect(() =>
      db.prepare("UPDATE offline_payments SET state = 'resolved' WHERE transaction_id = 'Q2'").run(),
    ).toThrow(/CHECK constraint failed/);
    db.prepare("UPDATE offline_payments SET state = 'forwarding' WHERE transaction_id = 'Q2'").run();
    // Ids continue after the sequence, not after the last row; references are enforced again.
    expect(Number(db.prepare(INSERT_ENTRY).run('after', 'pending').lastInsertRowid)).toBe(41 + 7);
    expect(() => db.prepare('UPDATE offline_payments SET journal_entry_id = 999 WHERE id = 2').run()).toThrow(
      /FOREIGN KEY/,
    );
    db.close();
  });

  it('keeps the sequence of a table whose rows are all gone', () => {
    const db = new Database(':memory:');
    migrate(db, 12);
    db.prepare(
      `INSERT INTO offline_payments (id, transaction_id, service, comments, method, path, amount_minor,
      currency, entry_mode, state, stored_at) VALUES (9, 'Q9', 'sale', 'Parking', 'POST', '/p', 600, 'GBP',
      'contactless', 'approved', 1)`,
    ).run();
    db.prepare('DELETE FROM offline_payments').run();
    migrate(db);
    expect(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'offline_payments'").get()).toEqual({
      seq: 9,
    });
    db.close();
  });

  it('leaves the file untouched when a reference would be left dangling', () => {
    const db = journalAt12();
    db.pragma('foreign_keys = OFF');
    db.prepare('UPDATE offline_payments SET journal_entry_id = 999 WHERE id = 2').run();
    db.pragma('foreign_keys = ON');
    const before = contents(db);
    expect(() => migrate(db)).toThrowError(expect.objectContaining({ code: 'JOURNAL_MIGRATION' }) as Error);
    expect(schemaVersion(db)).toBe(12);
    expect(contents(db)).toEqual(before);
    expect(ephemeralIndexes(db, INSERT_ENTRY, ['X', 'pending'])).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
  });

  it('brings a new file to the latest version with foreign keys as they were, and does it once', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = OFF');
    expect(migrate(db)).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
    expect(db.pragma('foreign_keys', { simple: true })).toBe(0);
    expect(ephemeralIndexes(db, INSERT_ENTRY, ['X', 'pending'])).toBe(0);
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    db.close();
  });

  it('leaves a file brought to an earlier version as its migrations made it', () => {
    const db = new Database(':memory:');
    migrate(db, 11);
    const table = db
      .prepare<[], { sql: string }>("SELECT sql FROM sqlite_schema WHERE name = 'journal_entries'")
      .get();
    expect(table?.sql).toContain("CHECK (state IN ('pending', 'sent', 'approved'");
    db.close();
  });
});
