/** 10000-01-01T00:00:00.000Z: from here on, an ISO 8601 time has a six-digit signed year. */
const YEAR_10000_MS = 253_402_300_800_000;

/** The minute whose ISO prefix ("2026-11-29T02:31:") was formatted last. */
let cachedMinute = -1;
let cachedPrefix = '';

/**
 * `new Date(ms).toISOString()`, the same string, made cheaply for the journal's times. V8's `toISOString` formats in
 * C++ and costs about a microsecond here; the journal turns up to four times of each entry it writes or reads into
 * ISO strings, and the times of one payment (and of entries read in order) fall in the same minute. So the minute's
 * prefix is formatted once and kept, and each time adds its seconds and milliseconds to it. Times before 1970 or
 * from the year 10000, and anything not a whole number of milliseconds, are left to `toISOString` (which throws a
 * RangeError for an invalid time, as before).
 */
export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= YEAR_10000_MS) return new Date(ms).toISOString();
  const inMinute = ms % 60_000;
  const minute = ms - inMinute;
  if (minute !== cachedMinute) {
    cachedPrefix = new Date(minute).toISOString().slice(0, 17);
    cachedMinute = minute;
  }
  const seconds = (inMinute / 1000) | 0;
  const millis = inMinute - seconds * 1000;
  return (
    cachedPrefix +
    (seconds < 10 ? '0' : '') +
    seconds +
    (millis < 10 ? '.00' : millis < 100 ? '.0' : '.') +
    millis +
    'Z'
  );
}
