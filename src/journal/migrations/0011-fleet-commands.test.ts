import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0011 (fleet commands)', () => {
  it('adds the fleet command ids, one row per id, a reply exactly when done', () => {
    const db = new Database(':memory:');
    migrate(db, 10);
    db.prepare(`INSERT INTO configuration_state (id, at, settings) VALUES (1, 5, '{}')`).run();
    expect(migrate(db, 11)).toEqual([11]);
    expect(schemaVersion(db)).toBe(11);
    // Rows of the earlier tables survive.
    expect(db.prepare('SELECT count(*) AS n FROM configuration_state').get()).toEqual({ n: 1 });
    const insert = db.prepare(
      'INSERT INTO fleet_commands (id, command, received_at, expires_at, state, reply, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    insert.run('c1', 'flush-queue', 10, 20, 'executing', null, null);
    expect(() => insert.run('c1', 'flush-queue', 10, 20, 'executing', null, null)).toThrow(/UNIQUE/);
    insert.run('c2', 'flush-queue', 10, 20, 'done', '{"ok":true}', 11);
    expect(() => insert.run('c3', 'flush-queue', 10, 20, 'done', null, null)).toThrow(/CHECK/);
    expect(() => insert.run('c4', 'flush-queue', 10, 20, 'executing', '{"ok":true}', 11)).toThrow(/CHECK/);
    expect(() => insert.run('c5', 'flush-queue', 10, 20, 'other', null, null)).toThrow(/CHECK/);
    expect(() => insert.run('', 'flush-queue', 10, 20, 'executing', null, null)).toThrow(/CHECK/);
    expect(() => insert.run('c6', 'x', 10, 20, 'done', '[1]', 11)).toThrow(/CHECK/);
  });
});
