import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import { staysPaidByLink } from './stays-paid-by-link.js';

function columns(db: Database.Database, table: string): string[] {
  return db
    .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?) ORDER BY cid')
    .all(table)
    .map((c) => c.name);
}

/** The previous terminal's writes: it names its columns. */
const PREVIOUS_LINK = `INSERT INTO payment_links (link_id, reference, purpose, amount_minor, currency, state,
    watch_until, created_at, updated_at)
  VALUES ('L1', 'GATE-1', 'fee', 450, 'GBP', 'creating', 9, 1, 1)`;
const PREVIOUS_HOLD = `INSERT INTO holds (hold_id, fingerprint, masked_pan, gateway_id, transaction_id,
    authorized_minor, currency, card_ref, include_emv_tags, entered_at, expires_at)
  VALUES (@id, 'fp', '411111******1111', '70000000000000000001', @id, 598, 'GBP', 'card_1', 0, 1, 9)`;

/** A file as the previous terminal left it: every migration and every other rewrite, a link and a hold in it. */
function previousFile(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, LATEST_VERSION);
  db.exec('ALTER TABLE payment_links DROP COLUMN hold_id');
  db.exec('ALTER TABLE holds DROP COLUMN paid_link_id');
  db.exec('ALTER TABLE holds DROP COLUMN doubt_link_id');
  db.exec(PREVIOUS_LINK);
  db.prepare(PREVIOUS_HOLD).run({ id: 'H1' });
  return db;
}

describe('schema rewrite: stays paid by link', () => {
  it('adds its columns to a file of the previous terminal, its rows kept without a tie, its version kept, once', () => {
    expect(REWRITES).toContain(staysPaidByLink);
    const db = previousFile();
    const links = db.prepare('SELECT * FROM payment_links').all() as Record<string, unknown>[];
    const holds = db.prepare('SELECT * FROM holds').all() as Record<string, unknown>[];
    expect(staysPaidByLink.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(columns(db, 'payment_links')).toContain('hold_id');
    expect(columns(db, 'holds')).toContain('paid_link_id');
    expect(columns(db, 'holds')).toContain('doubt_link_id');
    expect(staysPaidByLink.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM payment_links').all()).toEqual(
      links.map((r) => ({ ...r, hold_id: null })),
    );
    expect(db.prepare('SELECT * FROM holds').all()).toEqual(
      holds.map((r) => ({ ...r, paid_link_id: null, doubt_link_id: null })),
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's writes as they were: the new columns stay NULL in its rows", () => {
    const db = new Database(':memory:');
    migrate(db);
    db.exec(PREVIOUS_LINK);
    db.prepare(PREVIOUS_HOLD).run({ id: 'H2' });
    expect(db.prepare('SELECT hold_id FROM payment_links').get()).toEqual({ hold_id: null });
    expect(db.prepare('SELECT paid_link_id, doubt_link_id FROM holds').get()).toEqual({
      paid_link_id: null,
      doubt_link_id: null,
    });
    db.close();
  });
});
