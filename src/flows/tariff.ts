import type { Config } from '../config/index.js';

/**
 * The tariff engine: pure functions from the `tariff` configuration section (src/config/schema.ts) and a stay to an
 * amount in integer minor units. No clock, no I/O: callers pass times.
 *
 * Rules (README, section "models"):
 * - A stay is charged period by period from its start; each period charges `priceMinor` per `unitMinutes`, a
 *   started unit being charged according to `rounding` (`up`: every started unit, `down`: complete units only,
 *   `nearest`: a unit at least half used). The last period applies to the rest of the day.
 * - The schedule restarts every 24 hours from the entry, and each such day costs at most `dailyCapMinor`
 *   (0 = no cap).
 * - A stay of at most `graceMinutes` is free (the kiosk exit and the meter end of session).
 * - The meter sells durations of at most `maxStayMinutes`; a lost ticket costs `lostTicketFeeMinor`.
 * - The meter pre-authorizes the price of `maxStayMinutes` (`meterAuthorization: maximum`) or of the chosen
 *   duration (`chosen`).
 */

export type TariffConfig = Config['tariff'];

export type TariffErrorCode =
  | 'TARIFF_INVALID_STAY' // negative, fractional or non-finite minutes
  | 'TARIFF_ABOVE_MAX_STAY' // a meter duration above maxStayMinutes
  | 'TARIFF_INVALID_TIMES' // exit before entry, or times that are not finite
  | 'TARIFF_INVALID_CONFIG'; // a period without minutes or units (the schema prevents it; hand-built configs may not)

export class TariffError extends Error {
  override readonly name = 'TariffError';
  constructor(
    readonly code: TariffErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const DAY_MINUTES = 1_440;
const MINUTE_MS = 60_000;

function requireStayMinutes(minutes: number): void {
  if (!Number.isSafeInteger(minutes) || minutes < 0) {
    throw new TariffError(
      'TARIFF_INVALID_STAY',
      `stay must be a whole number of minutes >= 0, got ${minutes}`,
    );
  }
}

function requirePeriods(tariff: TariffConfig): void {
  if (tariff.periods.length === 0) {
    throw new TariffError('TARIFF_INVALID_CONFIG', 'tariff.periods is empty');
  }
  for (const [i, p] of tariff.periods.entries()) {
    if (!(p.minutes > 0 && p.unitMinutes > 0 && p.priceMinor >= 0)) {
      throw new TariffError(
        'TARIFF_INVALID_CONFIG',
        `tariff.periods[${i}] needs minutes > 0, unitMinutes > 0, priceMinor >= 0`,
      );
    }
  }
}

function chargedUnits(minutes: number, unitMinutes: number, rounding: TariffConfig['rounding']): number {
  const whole = Math.floor(minutes / unitMinutes);
  const rest = minutes - whole * unitMinutes;
  switch (rounding) {
    case 'up':
      return rest > 0 ? whole + 1 : whole;
    case 'down':
      return whole;
    case 'nearest':
      return rest * 2 >= unitMinutes ? whole + 1 : whole;
  }
}

/** Price of `minutes` (≤ one day) from the start of a day of the schedule, before the cap. */
function scheduleCharge(tariff: TariffConfig, minutes: number): number {
  let left = minutes;
  let total = 0;
  for (let i = 0; i < tariff.periods.length && left > 0; i += 1) {
    const period = tariff.periods[i];
    if (period === undefined) break;
    const last = i === tariff.periods.length - 1;
    const used = last ? left : Math.min(left, period.minutes);
    total += chargedUnits(used, period.unitMinutes, tariff.rounding) * period.priceMinor;
    left -= used;
  }
  return total;
}

function capped(tariff: TariffConfig, charge: number): number {
  return tariff.dailyCapMinor > 0 ? Math.min(charge, tariff.dailyCapMinor) : charge;
}

/** Price of `minutes` of parking with the daily restart and cap, no grace period. */
function priceOfMinutes(tariff: TariffConfig, minutes: number): number {
  requirePeriods(tariff);
  const days = Math.floor(minutes / DAY_MINUTES);
  const rest = minutes - days * DAY_MINUTES;
  const fullDay = days > 0 ? capped(tariff, scheduleCharge(tariff, DAY_MINUTES)) : 0;
  return days * fullDay + capped(tariff, scheduleCharge(tariff, rest));
}

/**
 * Fee for a completed stay of `stayMinutes` (kiosk exit, meter end of session, tap-and-go exit): 0 within the grace
 * period, otherwise the whole stay at the tariff. Minor units.
 */
export function feeForStay(tariff: TariffConfig, stayMinutes: number): number {
  requireStayMinutes(stayMinutes);
  if (stayMinutes <= tariff.graceMinutes) return 0;
  return priceOfMinutes(tariff, stayMinutes);
}

/** Whole minutes between two epoch-millisecond times, a started minute counting as one. */
export function stayMinutesBetween(enteredAtMs: number, exitAtMs: number): number {
  if (!Number.isFinite(enteredAtMs) || !Number.isFinite(exitAtMs) || exitAtMs < enteredAtMs) {
    throw new TariffError('TARIFF_INVALID_TIMES', 'exit must be a finite time not before the entry');
  }
  return Math.ceil((exitAtMs - enteredAtMs) / MINUTE_MS);
}

/** Fee for a stay between two epoch-millisecond times. */
export function feeBetween(
  tariff: TariffConfig,
  enteredAtMs: number,
  exitAtMs: number,
): { stayMinutes: number; feeMinor: number } {
  const stayMinutes = stayMinutesBetween(enteredAtMs, exitAtMs);
  return { stayMinutes, feeMinor: feeForStay(tariff, stayMinutes) };
}

/**
 * Fee owed at the pay station for a ticket that was paid before (`paid`: what of its payments stands, and when the last
 * was made; src/flows/effects.ts TicketPaid):
 * - within `graceMinutes` after the last payment: the fee due at that payment less what stands paid — nothing
 *   (`alreadyPaid`, the exit opens as for a free stay) when what stands covers it, otherwise the rest (a sale approved
 *   for less than asked, a partial refund), never more than the whole stay less what stands;
 * - later: the fee of the whole stay (grace period and daily maximum as in {@link feeBetween}) less what stands paid,
 *   never below zero (`alreadyPaid` when nothing is left to pay);
 * - without a payment that stands: {@link feeBetween}.
 */
export function feeAfterPayments(
  tariff: TariffConfig,
  enteredAtMs: number,
  exitAtMs: number,
  paid: { standingMinor: number; lastPaidAtMs: number } | undefined,
): { stayMinutes: number; feeMinor: number; alreadyPaid: boolean } {
  const fee = feeBetween(tariff, enteredAtMs, exitAtMs);
  if (paid === undefined || !(paid.standingMinor > 0)) return { ...fee, alreadyPaid: false };
  // A payment recorded after this clock's now (clock skew between two stations) counts as made now.
  const paidAtMs = Math.min(paid.lastPaidAtMs, exitAtMs);
  const sincePaid = stayMinutesBetween(paidAtMs, exitAtMs);
  let owedMinor = fee.feeMinor;
  if (sincePaid <= tariff.graceMinutes) {
    // The grace period spares the time since the payment, not what the payment did not cover: what stands may be less
    // than the fee (a stored sale approved for less when forwarded, an operator's partial refund). A payment recorded
    // before the entry (skew between the gate and this station) is priced as made at the entry.
    const atPayment = feeBetween(tariff, enteredAtMs, Math.max(paidAtMs, enteredAtMs)).feeMinor;
    owedMinor = Math.min(atPayment, fee.feeMinor);
  }
  const feeMinor = Math.max(0, owedMinor - paid.standingMinor);
  return { stayMinutes: fee.stayMinutes, feeMinor, alreadyPaid: feeMinor === 0 };
}

/**
 * Price of a duration bought in advance at the meter (no grace period: the customer buys time). Throws
 * TARIFF_ABOVE_MAX_STAY above `maxStayMinutes`.
 */
export function priceForDuration(tariff: TariffConfig, minutes: number): number {
  requireStayMinutes(minutes);
  if (minutes > tariff.maxStayMinutes) {
    throw new TariffError(
      'TARIFF_ABOVE_MAX_STAY',
      `${minutes} minutes is above the maximum stay of ${tariff.maxStayMinutes} minutes`,
    );
  }
  return priceOfMinutes(tariff, minutes);
}

/**
 * What the meter pre-authorizes for a chosen duration, minor units (tariff.meterAuthorization):
 * - `maximum` (spec 001, Card-present parking: "pre-authorize maximum time, capture actual, reverse unused"): the
 *   price of `maxStayMinutes` — daily cap included, as {@link priceForDuration} prices any duration — whatever the
 *   chosen duration; the capture of the actual stay is then at most that.
 * - `chosen`: the price of the chosen duration (markets that sell fixed time).
 * Throws like {@link priceForDuration} for a chosen duration that is not a whole number of minutes or is above the
 * maximum stay, in both modes.
 */
export function meterAuthorizationMinor(tariff: TariffConfig, chosenMinutes: number): number {
  const chosen = priceForDuration(tariff, chosenMinutes);
  switch (tariff.meterAuthorization) {
    case 'maximum':
      return priceForDuration(tariff, tariff.maxStayMinutes);
    case 'chosen':
      return chosen;
  }
}

/** Fee of a lost ticket, minor units. */
export function lostTicketFee(tariff: TariffConfig): number {
  return tariff.lostTicketFeeMinor;
}

/**
 * Durations the meter offers: multiples of the first period's unit (at least 15 minutes apart), at most `count`,
 * never above `maxStayMinutes`, always including the maximum stay itself.
 */
export function durationOptions(tariff: TariffConfig, count = 6): number[] {
  requirePeriods(tariff);
  const unit = tariff.periods[0]?.unitMinutes ?? 30;
  const step = unit * Math.max(1, Math.ceil(15 / unit));
  const options: number[] = [];
  for (let m = step; m < tariff.maxStayMinutes && options.length < count - 1; m += step) options.push(m);
  options.push(tariff.maxStayMinutes);
  return options;
}
