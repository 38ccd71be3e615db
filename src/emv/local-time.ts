/**
 * The terminal's local date and time, in its configured time zone: what EMV tags 9A and 9F21 and the gateway's
 * transactionLocalDateTime carry, and what a reader's clock, set to local time, dates a card read with.
 */

/**
 * One formatter per time zone: building an `Intl.DateTimeFormat` costs far more than formatting with it, and every
 * request of a sale asks for its local date and time. Bounded (a terminal has one zone; tests use a few).
 */
const LOCAL_FORMATS = new Map<string, Intl.DateTimeFormat>();

function localFormat(timeZone: string): Intl.DateTimeFormat {
  let format = LOCAL_FORMATS.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    if (LOCAL_FORMATS.size >= 64) LOCAL_FORMATS.clear();
    LOCAL_FORMATS.set(timeZone, format);
  }
  return format;
}

/** The zone's offset in the UTC minute last asked about, per zone: a sale asks for it several times in a second. */
const MINUTE_OFFSETS = new Map<string, { minute: number; offsetMs: number }>();
const MINUTE_MS = 60_000;

/** The zone's offset from UTC at `ms` (a whole second), read from its wall-clock fields. */
function offsetFromFields(ms: number, timeZone: string): number {
  const parts = localFormat(timeZone).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes): number =>
    Number(parts.find((p) => p.type === type)?.value ?? 0);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - ms;
}

/**
 * Offset of `timeZone` from UTC at the instant `at` (epoch ms), in milliseconds. Offsets change only at whole minutes
 * (every transition of the time zone database since 1970 falls on one), so one reading serves a whole UTC minute.
 */
export function zoneOffsetMs(at: number, timeZone: string): number {
  const minute = Math.floor(at / MINUTE_MS);
  const cached = MINUTE_OFFSETS.get(timeZone);
  if (cached?.minute === minute) return cached.offsetMs;
  const offsetMs = offsetFromFields(minute * MINUTE_MS, timeZone);
  if (MINUTE_OFFSETS.size >= 64) MINUTE_OFFSETS.clear();
  MINUTE_OFFSETS.set(timeZone, { minute, offsetMs });
  return offsetMs;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** `YYYYMMDDhhmmss` of `at` in the terminal's time zone (merchantInformation.transactionLocalDateTime). */
export function localDateTime(at: Date, timeZone: string): string {
  const ms = at.getTime();
  // An invalid date fails as the formatter fails on it (RangeError).
  if (!Number.isFinite(ms)) localFormat(timeZone).formatToParts(at);
  const local = new Date(ms + zoneOffsetMs(ms, timeZone));
  return (
    pad(local.getUTCFullYear(), 4) +
    pad(local.getUTCMonth() + 1, 2) +
    pad(local.getUTCDate(), 2) +
    pad(local.getUTCHours(), 2) +
    pad(local.getUTCMinutes(), 2) +
    pad(local.getUTCSeconds(), 2)
  );
}
