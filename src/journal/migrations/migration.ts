import type Database from 'better-sqlite3';

/**
 * One numbered schema step. Migrations run in order, each in its own transaction, and `PRAGMA user_version` records
 * the last one applied; a file whose version is above the newest known migration is refused (a newer terminal wrote
 * it). A migration is never edited once released: a change is a new number.
 */
export interface Migration {
  /** 1, 2, 3 … without gaps; equals the file's number. */
  readonly version: number;
  /** Short kebab-case name, as in the file name. */
  readonly name: string;
  /** Applies the step; runs inside a transaction opened by the runner. */
  up(db: Database.Database): void;
}

/**
 * A change of the stored schema that the code of the previous version reads and writes as before — an equivalent
 * constraint that SQLite checks faster, an index, a column that code never names (NULL in the rows it writes) —
 * applied without a new number, once the file is at the latest version: the file keeps that version, so the previous
 * terminal still opens it (an update that fails its trial is rolled back to the previous version, and a terminal
 * refuses a journal whose version is newer than its own). A rewrite may rebuild tables (`rebuild-table.ts`): the
 * runner applies it in a transaction of its own with foreign keys off (SQLite ignores the switch inside one) and
 * checks every reference before the commit, as SQLite's procedure for such changes prescribes.
 */
export interface SchemaRewrite {
  /** Short kebab-case name, for its errors and the architecture document's table of rewrites. */
  readonly name: string;
  /** Whether the file still lacks the rewrite (read from the stored schema: applying it twice does nothing). */
  needed(db: Database.Database): boolean;
  /** Applies the rewrite; runs inside a transaction opened by the runner. */
  apply(db: Database.Database): void;
}
