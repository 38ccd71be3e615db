import { redactCardNumbers } from '../../src/log/index.js';

/**
 * The last check before evidence is written (DESIGN.md, money safety rule 4): the runner has already masked card data
 * in a way that keeps EMV tags and masked PANs readable, so the reports do not redact again wholesale (the log
 * redactor would also erase every long hex blob, the tags included, and every gateway id). They only make sure that
 * nothing that reads as a full card number survives, by the log's own card-number rule (`redactCardNumbers`): a number
 * of a card network with any separators or in full-width digits, and any Luhn-valid run of 13–19 digits grouped by
 * spaces or dashes.
 */

/** `text` with every card number the log redaction removes replaced by its redaction. */
export function scrubCardNumbers(text: string): string {
  return redactCardNumbers(text);
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
