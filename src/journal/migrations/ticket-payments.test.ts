import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { PREVIOUS_INSERT, PREVIOUS_OUTCOME, previousFile } from '../testing/previous-terminal.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import { ticketPayments } from './ticket-payments.js';

const tables = (db: Database.Database): string[] =>
  db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .all()
    .map((t) => t.name);

/** A file as the previous terminal left it: every migration and every other rewrite, an approved sale in it. */
function previousFileWithout(): Database.Database {
  return previousFile((db) => db.exec('DROP TABLE ticket_payments'));
}

describe('schema rewrite: ticket payments', () => {
  it('adds the table of paid tickets to a file of the previous terminal, its rows kept, its version kept, once', () => {
    expect(REWRITES).toContain(ticketPayments);
    const db = previousFileWithout();
    const before = db.prepare('SELECT * FROM journal_entries ORDER BY id').all();
    expect(ticketPayments.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    // The version the previous terminal opens.
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(tables(db)).toContain('ticket_payments');
    expect(ticketPayments.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM journal_entries ORDER BY id').all()).toEqual(before);
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's writes as they were, and holds no card data column", () => {
    const db = new Database(':memory:');
    migrate(db);
    const id = Number(db.prepare(PREVIOUS_INSERT).run('S2').lastInsertRowid);
    expect(
      db.prepare(PREVIOUS_OUTCOME).run('approved', 'G2', 'AUTHORIZED', 201, 600, null, 2, 1, id).changes,
    ).toBe(1);
    expect(
      db
        .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('ticket_payments') ORDER BY cid")
        .all()
        .map((c) => c.name),
    ).toEqual(['id', 'ticket', 'method', 'payment_ref', 'amount_minor', 'currency', 'paid_at']);
    expect(() =>
      db
        .prepare(
          "INSERT INTO ticket_payments (ticket, method, payment_ref, amount_minor, currency, paid_at) VALUES ('T', 'cash', 'S2', 1, 'GBP', 1)",
        )
        .run(),
    ).toThrow(/CHECK/);
    db.close();
  });
});
