import type { Migration } from './migration.js';

/**
 * The audit log of operator and terminal actions (issue 13, item 7; DESIGN.md, money safety rule 6): who (`actor`)
 * did what (`action`) to what (`subject`, e.g. a transactionId), when (`at`, epoch milliseconds) and with which
 * result (`result` and its stable `code`), plus a small JSON object of `details`.
 *
 * Append-only: the store has no UPDATE or DELETE statement, and triggers refuse both (and an INSERT OR REPLACE of an existing id), so a record cannot be
 * changed or removed through SQL either. A later migration that must rebuild the table drops the triggers and
 * creates them again in its own transaction.
 *
 * `actor` and `action` are text checked by the store (like `follow_ups.kind`), so that a new action needs no table
 * rebuild — which the triggers would make costly. No card data: the store redacts `subject`, `code` and `details`
 * before they are written (money safety rule 4).
 */
export const migration0007: Migration = {
  version: 7,
  name: 'audit-log',
  up(db) {
    db.exec(`
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL CHECK (at >= 0),
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT,
        result TEXT NOT NULL CHECK (result IN ('ok', 'refused', 'failed')),
        code TEXT,
        details TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details) AND json_type(details) = 'object')
      );
      CREATE INDEX audit_log_by_time ON audit_log(at, id);
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be changed'); END;
      CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be deleted'); END;
      -- INSERT OR REPLACE deletes the row it replaces without firing delete triggers (recursive_triggers is off).
      CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
        WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be replaced'); END;
    `);
  },
};
