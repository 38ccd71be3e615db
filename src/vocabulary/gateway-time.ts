/**
 * The two ways the gateway writes a time, written once for the gateway client that reads and sends them, the
 * receipts that print them and the certification rules that check them (the sandbox keeps its own copy on purpose):
 * - an ISO 8601 date-time with seconds and a zone, as the gateway writes its UTC times (`2026-11-30T10:00:00Z`; a DCC
 *   offer's `exchangeRateTimeUtc` and `exchangeRateExpirationTimeUtc`, gateway.md §5), fractions of a second allowed;
 * - 14 digits `yyyyMMddHHmmss`, as the gateway takes a time in a request (`merchantInformation.transactionLocalDateTime`
 *   in local time; `orderInformation.amountDetails.exchangeRateTimeStamp` in UTC: "String, length 14, format
 *   yyyyMMDDhhmmss … set to GMT", the gateway's public field reference for purchaseTotals_exchangeRateTimeStamp).
 */

/** 10000-01-01T00:00:00.000Z: a time from here on has no four-digit year. */
const YEAR_10000_MS = 253_402_300_800_000;

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const DIGIT_DATE_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** Epoch ms of a calendar date and time read as UTC, or undefined when it is no real one (2026-02-30, 24:00, :60). */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number) {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC maps years 0–99 to 1900–1999: set the year itself.
  const date = new Date(ms);
  date.setUTCFullYear(year);
  return date.getUTCDate() === day && date.getUTCMonth() === month - 1 ? date.getTime() : undefined;
}

/**
 * The instant an ISO 8601 date-time with seconds and a zone (`Z` or `±hh:mm`) stands for, in epoch milliseconds
 * (fractions of a second beyond the millisecond dropped); undefined for any other text, a date or time that does not
 * exist, or an instant outside the years 1970–9999 in UTC (none that a 14-digit UTC time stamp can write).
 */
export function isoDateTimeMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = ISO_DATE_TIME.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const local = utcMs(year, month, day, hour, minute, second);
  if (local === undefined) return undefined;
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offsetMs = 0;
  if (m[8] !== undefined) {
    const offsetHours = Number(m[9]);
    const offsetMinutes = Number(m[10]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offsetMs = (m[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const ms = local + millis - offsetMs;
  return ms >= 0 && ms < YEAR_10000_MS ? ms : undefined;
}

/** Whether `text` is 14 digits `yyyyMMddHHmmss` of a real calendar date and time. */
export function isDigitDateTime(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  const m = DIGIT_DATE_TIME.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return utcMs(year, month, day, hour, minute, second) !== undefined;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * `yyyyMMddHHmmss` of the instant `ms` in UTC, the form of `exchangeRateTimeStamp`: the second it falls in (a
 * fraction of a second is dropped, not rounded up into a later second).
 * @throws RangeError for an instant outside the years 1970–9999.
 */
export function utcTimeStamp(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0 || ms >= YEAR_10000_MS)
    throw new RangeError('a UTC time stamp is of the years 1970–9999');
  const d = new Date(Math.floor(ms / 1000) * 1000);
  return (
    pad(d.getUTCFullYear(), 4) +
    pad(d.getUTCMonth() + 1, 2) +
    pad(d.getUTCDate(), 2) +
    pad(d.getUTCHours(), 2) +
    pad(d.getUTCMinutes(), 2) +
    pad(d.getUTCSeconds(), 2)
  );
}

/**
 * The ISO 8601 form (`YYYY-MM-DDThh:mm:ssZ`) of a 14-digit UTC time stamp ({@link utcTimeStamp}), as a person reads
 * it; undefined when `stamp` is not one ({@link isDigitDateTime}).
 */
export function isoOfUtcTimeStamp(stamp: string): string | undefined {
  if (!isDigitDateTime(stamp)) return undefined;
  return `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(8, 10)}:${stamp.slice(10, 12)}:${stamp.slice(12, 14)}Z`;
}
