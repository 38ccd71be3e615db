import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';
import { rebuildTable, storedCreateTable } from './rebuild-table.js';

/** The state CHECK of `fleet_commands` as migration 0011 wrote it, and with the state of a command not begun. */
const WITHOUT_WAITING = "state TEXT NOT NULL CHECK (state IN ('executing', 'done'))";
const WITH_WAITING = "state TEXT NOT NULL CHECK (state IN ('waiting', 'executing', 'done'))";

function missing(db: Database.Database): boolean {
  return storedCreateTable(db, 'fleet_commands')?.includes(WITHOUT_WAITING) === true;
}

/**
 * `fleet_commands.state` `waiting`: a fleet command whose id is claimed (written as it arrives, before the broker is
 * acknowledged) and which has not begun — it waits its turn behind the command running, or its claim reported a
 * failure. `FleetCommandLog.begin` makes it `executing`, durably, before the command is carried out. A delivery of an
 * id still `waiting` (the terminal stopped before its turn) is carried out then: it never took effect. One `executing`
 * without a reply began and never ended: not carried out again, its effect not known.
 *
 * SQLite cannot alter a CHECK: the table is rebuilt ({@link rebuildTable}), rows and index kept. The previous terminal
 * reads and writes it as before: it writes `executing` at its claim (begun, as this store reads it — never run again),
 * and it answers a delivery of a `waiting` id as one begun (`DUPLICATE`, its effect not known): never run twice.
 */
export const fleetCommandStarts: SchemaRewrite = {
  name: 'fleet-command-starts',
  needed: missing,
  apply(db) {
    if (missing(db)) rebuildTable(db, 'fleet_commands', (sql) => sql.replace(WITHOUT_WAITING, WITH_WAITING));
  },
};
