import type Database from 'better-sqlite3';
import { currencyByAlpha, MAX_MINOR } from '../money/index.js';
import { JournalError } from './errors.js';

/**
 * Checks of the values the journal-side stores (holds, authorization data, follow-ups) put into clear columns. Every
 * one throws {@link JournalError} `JOURNAL_INVALID` naming the field, so bad input is a typed refusal, never a
 * constraint failure deep in SQLite — and card data cannot reach a clear column (DESIGN.md, money safety rule 4).
 */

/** First 6 and last 4 digits at most, around at least one non-digit mask character (same rule as the journal's). */
const MASKED_PAN = /^\d{0,6}[^\d]{1,19}\d{0,4}$/;
/** A value that is nothing but 12 to 19 digits has the shape of a PAN. */
const PAN_SHAPED = /^\d{12,19}$/;

/** A non-empty string of at most `max` characters. */
export function checkText(value: unknown, what: string, max = 256): asserts value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new JournalError(
      'JOURNAL_INVALID',
      `${what} must be a non-empty string of at most ${max} characters`,
    );
}

/**
 * An identifier (transactionId, gateway id, card reference): printable ASCII without spaces. Gateway ids are 22
 * digits, so digits alone are allowed; see {@link checkCardKey} for values derived from a card.
 */
export function checkIdentifier(value: unknown, what: string, max = 64): asserts value is string {
  checkText(value, what, max);
  if (!/^[\x21-\x7e]+$/.test(value))
    throw new JournalError('JOURNAL_INVALID', `${what} must be printable ASCII without spaces`);
}

/**
 * A value derived from a card (the keyed fingerprint, the reference of an in-memory card read): an identifier that
 * does not have the shape of a PAN, so a card number passed by mistake is refused instead of stored in clear.
 */
export function checkCardKey(value: unknown, what: string, max = 128): asserts value is string {
  checkIdentifier(value, what, max);
  if (PAN_SHAPED.test(value))
    throw new JournalError(
      'JOURNAL_INVALID',
      `${what} has the shape of a card number: it must be a keyed hash or a reference`,
    );
}

export function checkMaskedPan(value: unknown, what = 'maskedPan'): asserts value is string {
  if (typeof value !== 'string' || !MASKED_PAN.test(value))
    throw new JournalError('JOURNAL_INVALID', `${what} may show the first 6 and last 4 digits at most`);
}

/** An integer number of minor units, 0…MAX_MINOR. */
export function checkMinor(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_MINOR)
    throw new JournalError(
      'JOURNAL_INVALID',
      `${what} must be an integer number of minor units (0…${MAX_MINOR})`,
    );
}

/** An ISO 4217 alpha code the money table knows. */
export function checkCurrency(value: unknown, what = 'currency'): asserts value is string {
  if (typeof value !== 'string' || currencyByAlpha(value) === undefined)
    throw new JournalError('JOURNAL_INVALID', `${what} "${String(value)}" is not an ISO 4217 code`);
}

/** Epoch milliseconds (a safe integer, not negative). */
export function checkEpochMs(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new JournalError('JOURNAL_INVALID', `${what} must be epoch milliseconds (a non-negative integer)`);
}

export function checkBoolean(value: unknown, what: string): asserts value is boolean {
  if (typeof value !== 'boolean') throw new JournalError('JOURNAL_INVALID', `${what} must be a boolean`);
}

export function checkObject(value: unknown, what: string): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JournalError('JOURNAL_INVALID', `${what} must be an object`);
}

/**
 * The part of {@link SqliteJournal} the journal-side stores use: its connection (so that their rows and journal rows
 * change in one transaction), its transaction runner and its clock.
 */
export interface JournalConnection {
  readonly db: Database.Database;
  /**
   * Runs `fn` in one transaction whose commit is synced to disk (`full`) or not; nested calls join the outer
   * transaction. Maps SQLite failures to {@link JournalError}; `JOURNAL_CLOSED` once the journal is closed.
   */
  atomically<T>(full: boolean, fn: () => T): T;
  readonly now: () => Date;
}

/** Runs a read on the shared connection, mapping failures like the journal does (`JOURNAL_CLOSED`, `JOURNAL_IO`). */
export function readOn<T>(connection: JournalConnection, fn: () => T): T {
  if (!connection.db.open) throw new JournalError('JOURNAL_CLOSED', 'the journal is closed');
  try {
    return fn();
  } catch (e) {
    if (e instanceof JournalError) throw e;
    throw new JournalError('JOURNAL_IO', 'journal read failed', { cause: e });
  }
}
