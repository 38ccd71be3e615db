import { localDateTime, zoneOffsetMs } from '../emv/index.js';

export { localDateTime, zoneOffsetMs };

/** Whether the instant `iso` falls on the same local day as `now` in `timeZone` (the settlement day of a void). */
export function sameLocalDay(iso: string, now: Date, timeZone: string): boolean {
  return localDateTime(new Date(iso), timeZone).slice(0, 8) === localDateTime(now, timeZone).slice(0, 8);
}

/** A kiosk ticket encodes its entry time: `YYYYMMDDhhmm` followed by up to 8 digits of serial number. */
export function lookupTicket(
  ticket: string,
  timeZone: string,
): { found: true; ticket: string; enteredAtMs: number } | { found: false; ticket: string } {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})\d{0,8}$/.exec(ticket.trim());
  if (!m) return { found: false, ticket };
  const [, y, mo, d, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  const utcGuess = Date.UTC(y, mo - 1, d, h, mi);
  if (Number.isNaN(utcGuess) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59)
    return { found: false, ticket };
  // Shift by the zone's offset at that instant so the ticket's wall-clock time is read in the terminal's zone.
  const offset = zoneOffsetMs(utcGuess, timeZone);
  return { found: true, ticket, enteredAtMs: utcGuess - offset };
}
