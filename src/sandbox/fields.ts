/**
 * Reading and checking request fields by dotted path, collecting every problem so that one 400 answer names all
 * of them (reference/gateway.md §4: `details[].field`, `MISSING_FIELD` | `INVALID_DATA`).
 */
import { AmountError, currencyByAlpha, parseDecimal } from '../money/index.js';
import { GatewayAnswer, type FieldDetail } from './errors.js';

/**
 * Dotted paths split once: the services read the same few dozen paths on every request, and splitting them anew
 * each time was a measurable share of an authorization's cost. Bounded, as link paths carry array indexes.
 */
const SPLIT_PATHS = new Map<string, readonly string[]>();
const MAX_SPLIT_PATHS = 4096;

function splitPath(path: string): readonly string[] {
  let keys = SPLIT_PATHS.get(path);
  if (keys === undefined) {
    keys = path.split('.');
    if (SPLIT_PATHS.size < MAX_SPLIT_PATHS) SPLIT_PATHS.set(path, keys);
  }
  return keys;
}

/** The value at a dotted path of a JSON body, or undefined. */
export function valueAt(body: unknown, path: string): unknown {
  let cur: unknown = body;
  for (const key of splitPath(path)) {
    if (Array.isArray(cur)) {
      // Array elements by index: `orderInformation.lineItems.0.productName`.
      if (!/^\d+$/.test(key)) return undefined;
      cur = cur[Number(key)];
      continue;
    }
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** ISO 8601 UTC without milliseconds, as the gateway writes `submitTimeUtc`. */
export function isoSeconds(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** The 400 INVALID_REQUEST answer of the payment services. */
export function invalidRequest(
  now: Date,
  reason: string,
  message: string,
  details: FieldDetail[] = [],
): GatewayAnswer {
  return new GatewayAnswer(
    400,
    {
      submitTimeUtc: isoSeconds(now),
      status: 'INVALID_REQUEST',
      reason,
      message,
      ...(details.length ? { details } : {}),
    },
    reason,
  );
}

/** Collects field problems of one request; {@link FieldReader.finish} throws the 400 when there are any. */
export class FieldReader {
  readonly details: FieldDetail[] = [];
  private readonly messages: string[] = [];

  constructor(
    readonly body: Record<string, unknown>,
    private readonly now: Date,
  ) {}

  missing(field: string, message = `${field} is required`): void {
    if (!this.details.some((d) => d.field === field)) this.details.push({ field, reason: 'MISSING_FIELD' });
    this.messages.push(message);
  }

  invalid(field: string, message: string): void {
    if (!this.details.some((d) => d.field === field)) this.details.push({ field, reason: 'INVALID_DATA' });
    this.messages.push(message);
  }

  has(path: string): boolean {
    return valueAt(this.body, path) !== undefined;
  }

  /** A string field (numbers are accepted and turned into text when `allowNumber`). */
  text(path: string, required: boolean, allowNumber = false): string | undefined {
    const v = valueAt(this.body, path);
    if (v === undefined || v === null || v === '') {
      if (required) this.missing(path);
      return undefined;
    }
    if (typeof v === 'string') return v;
    if (allowNumber && typeof v === 'number' && Number.isFinite(v)) return String(v);
    this.invalid(path, `${path} must be a string`);
    return undefined;
  }

  /** A text field that must equal one of `allowed`. */
  oneOf(
    path: string,
    allowed: readonly string[],
    required: boolean,
    allowNumber = false,
  ): string | undefined {
    const v = this.text(path, required, allowNumber);
    if (v !== undefined && !allowed.includes(v)) {
      this.invalid(path, `${path} must be ${allowed.join(' or ')}`);
      return undefined;
    }
    return v;
  }

  /** A boolean field; the strings "true" and "false" are accepted as the gateway does. */
  flag(path: string): boolean | undefined {
    const v = valueAt(this.body, path);
    if (v === undefined) return undefined;
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    this.invalid(path, `${path} must be a boolean`);
    return undefined;
  }

  /** An ISO 4217 alphabetic currency code. */
  currency(path: string, required = true): string | undefined {
    const v = this.text(path, required);
    if (v === undefined) return undefined;
    if (!currencyByAlpha(v)) {
      this.invalid(path, `${path} is not an ISO 4217 currency`);
      return undefined;
    }
    return v;
  }

  /** A decimal amount string in minor units of `currency` (skipped when the currency itself is bad). */
  amount(path: string, currency: string | undefined, required = true): number | undefined {
    const v = valueAt(this.body, path);
    if (v === undefined || v === null || v === '') {
      if (required) this.missing(path);
      return undefined;
    }
    if (typeof v !== 'string') {
      this.invalid(path, `${path} must be a decimal string`);
      return undefined;
    }
    if (currency === undefined) return undefined;
    try {
      return parseDecimal(v, currency);
    } catch (e) {
      if (e instanceof AmountError) {
        this.invalid(path, `${path}: ${e.message}`);
        return undefined;
      }
      throw e;
    }
  }

  /**
   * `YYYYMMDDhhmmss`, a real date and time: `merchantInformation.transactionLocalDateTime` (spec 001: 14 digits, date
   * then time, local) and `exchangeRateTimeStamp` (the same form in GMT, the gateway's public field reference).
   * Returns the text when it is one.
   */
  dateTimeDigits(path: string, required: boolean): string | undefined {
    const v = this.text(path, required);
    if (v === undefined) return undefined;
    const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(v);
    if (!m) {
      this.invalid(path, `${path} must be 14 digits YYYYMMDDhhmmss`);
      return undefined;
    }
    const y = Number(m[1]);
    const mo = Number(m[2]);
    const d = Number(m[3]);
    const h = Number(m[4]);
    const mi = Number(m[5]);
    const s = Number(m[6]);
    const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
    if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
      this.invalid(path, `${path} is not a valid date and time`);
      return undefined;
    }
    return v;
  }

  /** Throws the 400 answer when any problem was collected. */
  finish(): void {
    if (this.details.length === 0) return;
    const reason = this.details.some((d) => d.reason === 'MISSING_FIELD') ? 'MISSING_FIELD' : 'INVALID_DATA';
    throw invalidRequest(this.now, reason, this.messages.join('; '), this.details);
  }
}
