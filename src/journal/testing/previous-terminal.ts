import Database from 'better-sqlite3';
import { LATEST_VERSION, migrate } from '../migrations/index.js';

/**
 * The previous terminal's statements, for the tests of a schema rewrite that keeps the file's version (it must still
 * open and write the file): it names its columns when it writes and reads its rows with `SELECT *`.
 */
export const PREVIOUS_INSERT = `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length,
  money_moving, state, created_at) VALUES (?, 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', 64, 1, 'pending', 1)`;
export const PREVIOUS_OUTCOME = `UPDATE journal_entries SET state = ?, gateway_id = ?, status = ?, http_status = ?,
  authorized_minor = ?, reason = ?, outcome_at = ?, sent_at = COALESCE(sent_at, ?) WHERE id = ? AND state IN ('pending', 'sent')`;

/**
 * A file as the previous terminal left it: every migration and every rewrite but the one `undo` takes away again, an
 * approved sale `S1` in it.
 */
export function previousFile(undo: (db: Database.Database) => void): Database.Database {
  const db = new Database(':memory:');
  migrate(db, LATEST_VERSION);
  undo(db);
  const id = Number(db.prepare(PREVIOUS_INSERT).run('S1').lastInsertRowid);
  db.prepare(PREVIOUS_OUTCOME).run('approved', 'G1', 'AUTHORIZED', 201, 600, null, 2, 1, id);
  return db;
}
