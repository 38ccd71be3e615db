import type Database from 'better-sqlite3';

/** The `CREATE TABLE` statement SQLite keeps for `table`; undefined when there is no such table. */
export function storedCreateTable(db: Database.Database, table: string): string | undefined {
  return db
    .prepare<[string], { sql: string }>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?")
    .get(table)?.sql;
}

/**
 * Rebuilds `table` from its stored `CREATE TABLE` as `rewrite` changes it — for what SQLite cannot alter in place,
 * such as a CHECK constraint — by SQLite's own procedure (https://www.sqlite.org/lang_altertable.html, "Making Other
 * Kinds Of Table Schema Changes"): a new table from the rewritten statement, every row copied with its id, the old
 * table dropped, the new one renamed to its name, the table's indexes and triggers created again from their stored
 * SQL, and its AUTOINCREMENT sequence kept, so that no id is ever given twice.
 *
 * Runs inside the transaction of a schema rewrite, with foreign keys off (`SchemaRewrite`): other tables'
 * references to `table` are by name and hold again once the rebuilt table has it.
 * @throws Error when `rewrite` changes nothing (the stored statement is not the one expected).
 */
export function rebuildTable(
  db: Database.Database,
  table: string,
  rewrite: (createTable: string) => string,
): void {
  const stored = storedCreateTable(db, table);
  if (stored === undefined) throw new Error(`no table ${table}`);
  const rewritten = rewrite(stored);
  if (rewritten === stored) throw new Error(`the stored CREATE TABLE of ${table} is not the one expected`);
  const head = /^CREATE TABLE\s+("?)(\w+)\1\s*\(/i.exec(rewritten);
  if (head?.[2] !== table) throw new Error(`the CREATE TABLE of ${table} does not start as expected`);
  // Indexes SQLite makes itself (UNIQUE and PRIMARY KEY constraints) have no SQL: the new table makes them again.
  const dependents = db
    .prepare<[string], { sql: string }>(
      "SELECT sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
    )
    .all(table);
  const sequence = db
    .prepare<[string], { seq: number }>('SELECT seq FROM sqlite_sequence WHERE name = ?')
    .get(table);
  const columns = db
    .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?) ORDER BY cid')
    .all(table)
    .map((c) => `"${c.name}"`)
    .join(', ');
  const building = `${table}_rebuilt`;
  db.exec(`CREATE TABLE "${building}" (${rewritten.slice(head[0].length)}`);
  db.exec(`INSERT INTO "${building}" (${columns}) SELECT ${columns} FROM "${table}" ORDER BY rowid`);
  db.exec(`DROP TABLE "${table}"`);
  db.exec(`ALTER TABLE "${building}" RENAME TO "${table}"`);
  for (const d of dependents) db.exec(d.sql);
  // The rebuilt table's sequence is its highest id copied, and it has none when no row was copied.
  if (sequence !== undefined) {
    const kept = db
      .prepare('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?')
      .run(sequence.seq, table);
    if (kept.changes === 0)
      db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(table, sequence.seq);
  }
}
