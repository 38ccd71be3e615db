import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { feeLinksInDoubt } from './fee-links-in-doubt.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';

/** The previous terminal's writes: it names its columns. */
const PREVIOUS_LINK = `INSERT INTO payment_links (link_id, reference, purpose, amount_minor, currency, state,
    watch_until, created_at, updated_at)
  VALUES ('L1', '2030011507250042', 'fee', 450, 'GBP', 'active', 9, 1, 1)`;

describe('schema rewrite: fee links in doubt', () => {
  it('adds its column to a file of the previous terminal, its rows kept not in doubt, its version kept, once', () => {
    expect(REWRITES).toContain(feeLinksInDoubt);
    const db = new Database(':memory:');
    migrate(db, LATEST_VERSION);
    db.exec('ALTER TABLE payment_links DROP COLUMN payment_in_doubt');
    db.exec(PREVIOUS_LINK);
    const links = db.prepare('SELECT * FROM payment_links').all() as Record<string, unknown>[];
    expect(feeLinksInDoubt.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(feeLinksInDoubt.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM payment_links').all()).toEqual(
      links.map((r) => ({ ...r, payment_in_doubt: null })),
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's writes as they were: the column stays NULL in its rows", () => {
    const db = new Database(':memory:');
    migrate(db);
    db.exec(PREVIOUS_LINK);
    expect(db.prepare('SELECT payment_in_doubt FROM payment_links').get()).toEqual({
      payment_in_doubt: null,
    });
    db.close();
  });
});
