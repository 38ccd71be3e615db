import type Database from 'better-sqlite3';
import { JournalError } from '../errors.js';
import { migration0001 } from './0001-journal.js';
import { migration0002 } from './0002-offline-queue.js';
import { migration0003 } from './0003-resolution-links.js';
import { migration0004 } from './0004-holds.js';
import { migration0005 } from './0005-authorization-data.js';
import { migration0006 } from './0006-follow-ups.js';
import { migration0007 } from './0007-audit-log.js';
import { migration0008 } from './0008-payment-links.js';
import { migration0009 } from './0009-alt-payments.js';
import { migration0010 } from './0010-configuration-state.js';
import { migration0011 } from './0011-fleet-commands.js';
import { migration0012 } from './0012-journal-without-request-bytes.js';
import type { Migration, SchemaRewrite } from './migration.js';
import { dccDisclosure } from './dcc-disclosure.js';
import { dccDisclosureSealed } from './dcc-disclosure-sealed.js';
import { feeLinksInDoubt } from './fee-links-in-doubt.js';
import { fleetCommandStarts } from './fleet-command-starts.js';
import { lookupIndexes } from './lookup-indexes.js';
import { offlineCardFingerprints } from './offline-card-fingerprints.js';
import { outstayedStays } from './outstayed-stays.js';
import { receiptCopies } from './receipt-copies.js';
import { receiptFacts } from './receipt-facts.js';
import { stateChecksWithoutLists } from './state-checks.js';
import { staysPaidByLink } from './stays-paid-by-link.js';
import { ticketPayments } from './ticket-payments.js';

export type { Migration, SchemaRewrite } from './migration.js';

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  migration0001,
  migration0002,
  migration0003,
  migration0004,
  migration0005,
  migration0006,
  migration0007,
  migration0008,
  migration0009,
  migration0010,
  migration0011,
  migration0012,
];

/** The schema version a fully migrated database has. */
export const LATEST_VERSION = MIGRATIONS.length;

/** The schema version recorded in the file (0 for a new file). */
export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Every schema rewrite (no version of its own: see {@link SchemaRewrite}), in order. */
export const REWRITES: readonly SchemaRewrite[] = [
  stateChecksWithoutLists,
  lookupIndexes,
  receiptFacts,
  dccDisclosure,
  ticketPayments,
  offlineCardFingerprints,
  receiptCopies,
  staysPaidByLink,
  feeLinksInDoubt,
  outstayedStays,
  dccDisclosureSealed,
  fleetCommandStarts,
];

/**
 * Brings `db` to `target` (default: the latest), one migration per transaction so that a crash leaves the file at a
 * whole version; at the latest version, then applies each {@link REWRITES} entry the file lacks, each in a
 * transaction of its own. Refuses a file newer than this code. Returns the versions applied.
 */
export function migrate(db: Database.Database, target: number = LATEST_VERSION): number[] {
  const current = schemaVersion(db);
  if (current > LATEST_VERSION)
    throw new JournalError(
      'JOURNAL_MIGRATION',
      `the journal has schema version ${current}, newer than this terminal (${LATEST_VERSION})`,
    );
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current || m.version > target) continue;
    try {
      db.transaction(() => {
        m.up(db);
        db.pragma(`user_version = ${m.version}`);
      })();
    } catch (cause) {
      throw new JournalError('JOURNAL_MIGRATION', `migration ${m.version} (${m.name}) failed`, { cause });
    }
    applied.push(m.version);
  }
  if (target === LATEST_VERSION) for (const r of REWRITES) if (r.needed(db)) rewrite(db, r);
  return applied;
}

/**
 * Whether {@link migrate} would change `db`: a migration it lacks, or at the latest version a schema rewrite it lacks.
 * False for a file newer than this code (which {@link migrate} refuses, changing nothing).
 */
export function migrationNeeded(db: Database.Database): boolean {
  const current = schemaVersion(db);
  return current < LATEST_VERSION || (current === LATEST_VERSION && REWRITES.some((r) => r.needed(db)));
}

/**
 * Applies `r` in one transaction with foreign keys off, and checks every reference before the commit (SQLite's
 * procedure for rebuilding a table); the switch is put back as it was, whatever happens.
 */
function rewrite(db: Database.Database, r: SchemaRewrite): void {
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    // IMMEDIATE, and asked again inside: another process opening the file at the same time waits for this one's
    // commit (busy timeout), then finds the rewrite done.
    db.transaction(() => {
      if (!r.needed(db)) return;
      r.apply(db);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0) throw new Error(`${broken.length} references left dangling`);
    }).immediate();
  } catch (cause) {
    throw new JournalError('JOURNAL_MIGRATION', `schema rewrite ${r.name} failed`, { cause });
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys}`);
  }
}
