import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FleetCommandLog } from '../fleet-commands.js';
import { openJournal } from '../journal.js';
import { fleetCommandStarts } from './fleet-command-starts.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import { rebuildTable } from './rebuild-table.js';

/** The previous terminal's claim: the id written `executing` (begun, as far as the store can tell). */
const PREVIOUS_CLAIM = `INSERT INTO fleet_commands (id, command, received_at, expires_at, state)
  VALUES (@id, 'flush-queue', 1, 9999999999999, 'executing')`;
const WAITING = "state TEXT NOT NULL CHECK (state IN ('waiting', 'executing', 'done'))";
const PREVIOUS = "state TEXT NOT NULL CHECK (state IN ('executing', 'done'))";

describe('schema rewrite: fleet command starts', () => {
  it('takes the state of a command not begun in a file of the previous terminal, its rows kept as begun, once', () => {
    expect(REWRITES).toContain(fleetCommandStarts);
    const db = new Database(':memory:');
    migrate(db, LATEST_VERSION);
    rebuildTable(db, 'fleet_commands', (sql) => sql.replace(WAITING, PREVIOUS));
    db.prepare(PREVIOUS_CLAIM).run({ id: 'c-1' });
    expect(() => db.prepare(PREVIOUS_CLAIM.replace("'executing'", "'waiting'")).run({ id: 'c-2' })).toThrow(
      /CHECK/,
    );
    const rows = db.prepare('SELECT * FROM fleet_commands').all();
    expect(fleetCommandStarts.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(fleetCommandStarts.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM fleet_commands').all()).toEqual(rows);
    db.prepare(PREVIOUS_CLAIM.replace("'executing'", "'waiting'")).run({ id: 'c-2' });
    expect(() => db.prepare(PREVIOUS_CLAIM.replace("'executing'", "'other'")).run({ id: 'c-3' })).toThrow(
      /CHECK/,
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(schema).toContainEqual(expect.objectContaining({ name: 'fleet_commands_by_expiry' }));
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('reads a command the previous terminal claimed as begun: never carried out again', () => {
    const journal = openJournal(':memory:');
    journal.db.prepare(PREVIOUS_CLAIM).run({ id: 'c-4' });
    const log = new FleetCommandLog(journal);
    expect(log.claim({ id: 'c-4', command: 'flush-queue', expiresAtMs: 9999999999999 })).toEqual({
      fresh: false,
    });
    expect(log.begin('c-4')).toEqual({ begun: false });
    journal.close();
  });
});
