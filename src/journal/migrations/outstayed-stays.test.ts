import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import { outstayedStays } from './outstayed-stays.js';

/** The previous terminal's write of a hold: it names its columns. */
const PREVIOUS_HOLD = `INSERT INTO holds (hold_id, fingerprint, masked_pan, gateway_id, transaction_id,
    authorized_minor, currency, card_ref, include_emv_tags, entered_at, expires_at)
  VALUES (@id, 'fp', '411111******1111', '70000000000000000001', @id, 598, 'GBP', 'card_1', 0, 1, 9)`;

describe('schema rewrite: outstayed stays', () => {
  it('adds its column to a file of the previous terminal, its holds kept as not outstayed, its version kept, once', () => {
    expect(REWRITES).toContain(outstayedStays);
    const db = new Database(':memory:');
    migrate(db, LATEST_VERSION);
    db.exec('ALTER TABLE holds DROP COLUMN outstayed_at');
    db.prepare(PREVIOUS_HOLD).run({ id: 'H1' });
    const holds = db.prepare('SELECT * FROM holds').all() as Record<string, unknown>[];
    expect(outstayedStays.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(outstayedStays.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM holds').all()).toEqual(holds.map((r) => ({ ...r, outstayed_at: null })));
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's writes as they were: the new column stays NULL in its rows", () => {
    const db = new Database(':memory:');
    migrate(db);
    db.prepare(PREVIOUS_HOLD).run({ id: 'H2' });
    expect(db.prepare('SELECT outstayed_at FROM holds').get()).toEqual({ outstayed_at: null });
    db.close();
  });
});
