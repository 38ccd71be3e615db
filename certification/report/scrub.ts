import { redactString } from '../../src/log/index.js';

/**
 * The last check before evidence is written (DESIGN.md, money safety rule 4): the runner has already masked card data
 * in a way that keeps EMV tags and masked PANs readable, so the reports do not redact again wholesale (the log
 * redactor would also erase every long hex blob, the tags included, and every gateway id). They only make sure that
 * nothing that reads as a full card number survives: every run of 13–19 digits (possibly grouped by spaces or
 * dashes) that `redactString` would remove as a PAN is removed.
 */

// The same candidates as the log redactor's PAN rule: a maximal run of digits, not part of a longer number.
const PAN_CANDIDATE = /(?<![0-9])(?:\d[ -]?){12,18}\d(?![0-9])/g;

/** `text` with every run of digits that `redactString` judges a PAN replaced by its redaction. */
export function scrubCardNumbers(text: string): string {
  if (text.length < 13) return text;
  // The candidate alone holds only digits, spaces and dashes, so only the redactor's PAN rule (Luhn, 13–19 digits,
  // not a transactionLocalDateTime) can change it.
  return text.replace(PAN_CANDIDATE, (candidate) => redactString(candidate));
}

/**
 * A deep copy of a JSON value with {@link scrubCardNumbers} applied to every string, and to every integer large
 * enough to be a card number (which then becomes a string).
 */
export function scrubCardNumbersDeep(value: unknown): unknown {
  if (typeof value === 'string') return scrubCardNumbers(value);
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) >= 1e12) {
    const text = String(value);
    const scrubbed = scrubCardNumbers(text);
    return scrubbed === text ? value : scrubbed;
  }
  if (Array.isArray(value)) return value.map(scrubCardNumbersDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      // defineProperty: a key named `__proto__` (legal JSON) stays a key instead of replacing the prototype.
      Object.defineProperty(out, scrubCardNumbers(k), {
        value: scrubCardNumbersDeep(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return value;
}
