import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0010 (configuration state)', () => {
  it('adds one row of settings that must be a JSON object', () => {
    const db = new Database(':memory:');
    migrate(db, 9);
    expect(migrate(db, 10)).toEqual([10]);
    expect(schemaVersion(db)).toBe(10);
    const insert = db.prepare('INSERT INTO configuration_state (id, at, settings) VALUES (?, ?, ?)');
    insert.run(1, 10, '{"terminal.model":"kiosk"}');
    // One row only, and settings are a JSON object.
    expect(() => insert.run(2, 10, '{}')).toThrow(/CHECK/);
    db.exec('DELETE FROM configuration_state');
    expect(() => insert.run(1, 10, '[1]')).toThrow(/CHECK/);
    expect(() => insert.run(1, 10, 'nope')).toThrow(/CHECK/);
    expect(() => insert.run(1, -1, '{}')).toThrow(/CHECK/);
  });
});
