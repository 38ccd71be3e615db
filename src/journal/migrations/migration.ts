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
  /**
   * The step rebuilds a table that others reference ({@link rebuildTable}): the runner turns foreign keys off around
   * its transaction (SQLite ignores the switch inside one) and checks every reference before committing, as SQLite's
   * procedure for such changes prescribes.
   */
  readonly foreignKeysOff?: boolean;
  /** Applies the step; runs inside a transaction opened by the runner. */
  up(db: Database.Database): void;
}
