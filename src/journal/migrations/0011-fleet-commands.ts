import type { Migration } from './migration.js';

/**
 * The ids of the fleet's commands (issue 15; DESIGN.md, money safety rule 6: fleet command ids live in the journal
 * database). MQTT delivers a QoS 1 command at least once; the terminal executes it at most once: the id is written
 * here, durably, before the command is carried out (`executing`), and its reply when it is done (`done`). A command
 * whose id is here is never executed again — not after a redelivery, not after a crash in the middle of it.
 *
 * `expires_at` is the signed expiry of the command: once it has passed, the signature check refuses the command
 * anyway, so the row may be deleted after it (the table stays small).
 */
export const migration0011: Migration = {
  version: 11,
  name: 'fleet-commands',
  up(db) {
    db.exec(`
      CREATE TABLE fleet_commands (
        id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
        command TEXT NOT NULL CHECK (length(command) BETWEEN 1 AND 64),
        received_at INTEGER NOT NULL CHECK (received_at >= 0),
        expires_at INTEGER NOT NULL CHECK (expires_at >= 0),
        state TEXT NOT NULL CHECK (state IN ('executing', 'done')),
        reply TEXT CHECK (reply IS NULL OR (json_valid(reply) AND json_type(reply) = 'object')),
        finished_at INTEGER CHECK (finished_at IS NULL OR finished_at >= 0),
        CHECK ((state = 'done') = (reply IS NOT NULL AND finished_at IS NOT NULL))
      );
      CREATE INDEX fleet_commands_by_expiry ON fleet_commands(expires_at);
    `);
  },
};
