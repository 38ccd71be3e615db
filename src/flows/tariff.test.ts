import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tariffSchema } from '../config/index.js';
import {
  durationOptions,
  feeAfterPayments,
  feeBetween,
  feeForStay,
  lostTicketFee,
  meterAuthorizationMinor,
  priceForDuration,
  stayMinutesBetween,
  TariffError,
  type TariffConfig,
} from './tariff.js';

const base: TariffConfig = tariffSchema.parse({
  periods: [
    { minutes: 60, priceMinor: 100, unitMinutes: 15 },
    { minutes: 1440, priceMinor: 150, unitMinutes: 30 },
  ],
  graceMinutes: 10,
  maxStayMinutes: 240,
  dailyCapMinor: 2_000,
  lostTicketFeeMinor: 3_000,
  rounding: 'up',
});

const tariffArb: fc.Arbitrary<TariffConfig> = fc
  .record({
    periods: fc.array(
      fc.record({
        minutes: fc.integer({ min: 1, max: 600 }),
        priceMinor: fc.integer({ min: 0, max: 1_000 }),
        unitMinutes: fc.integer({ min: 1, max: 120 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    graceMinutes: fc.integer({ min: 0, max: 30 }),
    maxStayMinutes: fc.integer({ min: 1, max: 2_880 }),
    dailyCapMinor: fc.integer({ min: 0, max: 10_000 }),
    lostTicketFeeMinor: fc.integer({ min: 0, max: 10_000 }),
    rounding: fc.constantFrom('up' as const, 'down' as const, 'nearest' as const),
  })
  // The meter's capture window covers the longest stay (a configuration rule): at least as long, as the default is.
  .map((t) => tariffSchema.parse({ ...t, captureWindowMinutes: Math.max(1_440, t.maxStayMinutes) }));

const stayArb = fc.integer({ min: 0, max: 4 * 1_440 });

describe('tariff engine', () => {
  it('charges every started unit of each period with rounding up', () => {
    // 60 min at 100/15 min = 400, then 31 min at 150/30 min = 2 units = 300
    expect(feeForStay(base, 91)).toBe(700);
    expect(feeForStay(base, 60)).toBe(400);
    expect(feeForStay(base, 11)).toBe(100);
  });

  it('charges nothing within the grace period', () => {
    expect(feeForStay(base, 0)).toBe(0);
    expect(feeForStay(base, 10)).toBe(0);
  });

  it('caps each day of the stay at the daily maximum and restarts the schedule each day', () => {
    expect(feeForStay(base, 1_440)).toBe(2_000);
    expect(feeForStay(base, 1_440 + 15)).toBe(2_100);
    expect(feeForStay(base, 3 * 1_440)).toBe(6_000);
  });

  it('treats a daily cap of 0 as no cap', () => {
    const uncapped = { ...base, dailyCapMinor: 0 };
    expect(feeForStay(uncapped, 1_440)).toBe(400 + 46 * 150);
  });

  it('rounds down and to the nearest unit when configured', () => {
    const one = (rounding: TariffConfig['rounding']): TariffConfig => ({
      ...base,
      graceMinutes: 0,
      periods: [{ minutes: 1_440, priceMinor: 100, unitMinutes: 30 }],
      rounding,
    });
    expect(feeForStay(one('down'), 44)).toBe(100);
    expect(feeForStay(one('nearest'), 45)).toBe(200);
    expect(feeForStay(one('nearest'), 44)).toBe(100);
    expect(feeForStay(one('up'), 31)).toBe(200);
  });

  it('prices a meter duration without grace and refuses one above the maximum stay', () => {
    expect(priceForDuration(base, 10)).toBe(100);
    expect(priceForDuration(base, 240)).toBe(400 + 6 * 150);
    expect(() => priceForDuration(base, 241)).toThrow(TariffError);
    try {
      priceForDuration(base, 241);
    } catch (e) {
      expect((e as TariffError).code).toBe('TARIFF_ABOVE_MAX_STAY');
    }
  });

  it('rejects negative, fractional and non-finite stays with a typed error', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => feeForStay(base, bad)).toThrow(expect.objectContaining({ code: 'TARIFF_INVALID_STAY' }));
    }
  });

  it('counts a started minute between two times and rejects an exit before the entry', () => {
    expect(stayMinutesBetween(0, 60_001)).toBe(2);
    expect(feeBetween(base, 1_000, 1_000 + 91 * 60_000)).toEqual({ stayMinutes: 91, feeMinor: 700 });
    expect(() => stayMinutesBetween(10, 9)).toThrow(
      expect.objectContaining({ code: 'TARIFF_INVALID_TIMES' }),
    );
  });

  it('rejects a hand-built tariff without periods', () => {
    expect(() => feeForStay({ ...base, periods: [] }, 100)).toThrow(
      expect.objectContaining({ code: 'TARIFF_INVALID_CONFIG' }),
    );
  });

  it('has the meter pre-authorize the price of the maximum stay, or of the chosen duration when configured', () => {
    expect(base.meterAuthorization).toBe('maximum');
    // 240 minutes: 400 for the first hour, then 6 × 150.
    expect(meterAuthorizationMinor(base, 30)).toBe(1_300);
    expect(meterAuthorizationMinor({ ...base, meterAuthorization: 'chosen' }, 30)).toBe(200);
    // The daily cap applies to the maximum as to any price of the tariff.
    expect(meterAuthorizationMinor({ ...base, maxStayMinutes: 1_440 }, 30)).toBe(2_000);
    for (const meterAuthorization of ['maximum', 'chosen'] as const) {
      expect(() => meterAuthorizationMinor({ ...base, meterAuthorization }, 241)).toThrow(
        expect.objectContaining({ code: 'TARIFF_ABOVE_MAX_STAY' }),
      );
      expect(() => meterAuthorizationMinor({ ...base, meterAuthorization }, 1.5)).toThrow(
        expect.objectContaining({ code: 'TARIFF_INVALID_STAY' }),
      );
    }
  });

  it('returns the configured lost-ticket fee', () => {
    expect(lostTicketFee(base)).toBe(3_000);
  });

  it('offers increasing durations ending at the maximum stay', () => {
    expect(durationOptions(base)).toEqual([15, 30, 45, 60, 75, 240]);
    const options = durationOptions({ ...base, maxStayMinutes: 20 });
    expect(options).toEqual([15, 20]);
  });

  describe('properties', () => {
    it('is a non-negative integer, never decreasing with the stay', () => {
      fc.assert(
        fc.property(tariffArb, stayArb, fc.integer({ min: 0, max: 300 }), (tariff, stay, more) => {
          const a = feeForStay(tariff, stay);
          const b = feeForStay(tariff, stay + more);
          return Number.isSafeInteger(a) && a >= 0 && b >= a;
        }),
      );
    });

    it('never charges more than the daily cap per started day', () => {
      fc.assert(
        fc.property(
          tariffArb.filter((t) => t.dailyCapMinor > 0),
          stayArb,
          (tariff, stay) => feeForStay(tariff, stay) <= Math.ceil(stay / 1_440) * tariff.dailyCapMinor,
        ),
      );
    });

    it('charges nothing for any stay within the grace period', () => {
      fc.assert(fc.property(tariffArb, (tariff) => feeForStay(tariff, tariff.graceMinutes) === 0));
    });

    it('orders the rounding rules: down <= nearest <= up', () => {
      fc.assert(
        fc.property(tariffArb, stayArb, (tariff, stay) => {
          const down = feeForStay({ ...tariff, rounding: 'down' }, stay);
          const nearest = feeForStay({ ...tariff, rounding: 'nearest' }, stay);
          const up = feeForStay({ ...tariff, rounding: 'up' }, stay);
          return down <= nearest && nearest <= up;
        }),
      );
    });

    it('prices a meter duration at least as high as the fee for the same stay', () => {
      fc.assert(
        fc.property(tariffArb, stayArb, (tariff, stay) => {
          const minutes = Math.min(stay, tariff.maxStayMinutes);
          return priceForDuration(tariff, minutes) >= feeForStay(tariff, minutes);
        }),
      );
    });

    it('pre-authorizes at the maximum enough for the fee of any stay up to the maximum stay', () => {
      fc.assert(
        fc.property(tariffArb, stayArb, stayArb, (tariff, chosen, stay) => {
          const minutes = Math.min(chosen, tariff.maxStayMinutes);
          const held = meterAuthorizationMinor({ ...tariff, meterAuthorization: 'maximum' }, minutes);
          return (
            held >= meterAuthorizationMinor({ ...tariff, meterAuthorization: 'chosen' }, minutes) &&
            held >= feeForStay(tariff, Math.min(stay, tariff.maxStayMinutes))
          );
        }),
      );
    });

    it('offers only durations within the maximum stay, strictly increasing', () => {
      fc.assert(
        fc.property(tariffArb, (tariff) => {
          const options = durationOptions(tariff);
          return (
            options.every(
              (m, i) => m > 0 && m <= tariff.maxStayMinutes && (i === 0 || m > (options[i - 1] ?? 0)),
            ) && options.at(-1) === tariff.maxStayMinutes
          );
        }),
      );
    });
  });
});

describe('feeAfterPayments: a ticket paid before', () => {
  const tariff = tariffSchema.parse({
    periods: [{ minutes: 1_440, priceMinor: 150, unitMinutes: 30 }],
    graceMinutes: 10,
    maxStayMinutes: 240,
    dailyCapMinor: 2_000,
    lostTicketFeeMinor: 3_000,
    tapAndGoHoldMinor: 2_000,
  });
  const MIN = 60_000;
  const entry = Date.UTC(2026, 0, 5, 8, 0);

  it('is the whole stay without a payment that stands', () => {
    expect(feeAfterPayments(tariff, entry, entry + 95 * MIN, undefined)).toEqual({
      stayMinutes: 95,
      feeMinor: 600,
      alreadyPaid: false,
    });
    expect(
      feeAfterPayments(tariff, entry, entry + 95 * MIN, { standingMinor: 0, lastPaidAtMs: entry + 94 * MIN }),
    ).toMatchObject({ feeMinor: 600, alreadyPaid: false });
  });

  it('is nothing within the grace period after the last payment, up to its last minute', () => {
    const paid = { standingMinor: 600, lastPaidAtMs: entry + 95 * MIN };
    expect(feeAfterPayments(tariff, entry, entry + 105 * MIN, paid)).toEqual({
      stayMinutes: 105,
      feeMinor: 0,
      alreadyPaid: true,
    });
    // A payment recorded after this clock's now (skew between stations) counts as made now.
    expect(feeAfterPayments(tariff, entry, entry + 90 * MIN, paid)).toMatchObject({
      feeMinor: 0,
      alreadyPaid: true,
    });
  });

  it('within the grace period asks for the rest of the fee due at the last payment when less than it stands', () => {
    // 95 minutes cost 6.00 (four started half-hours); a sale approved for 3.00 of it, or refunded down to 3.00.
    const paid = { standingMinor: 300, lastPaidAtMs: entry + 95 * MIN };
    expect(feeAfterPayments(tariff, entry, entry + 100 * MIN, paid)).toEqual({
      stayMinutes: 100,
      feeMinor: 300,
      alreadyPaid: false,
    });
    // Up to the last minute of the grace period.
    expect(feeAfterPayments(tariff, entry, entry + 105 * MIN, paid)).toMatchObject({ feeMinor: 300 });
    // Covered in full at the payment: nothing, even if the stay since crossed into a new half-hour.
    expect(
      feeAfterPayments(tariff, entry, entry + 98 * MIN, {
        standingMinor: 450,
        lastPaidAtMs: entry + 88 * MIN,
      }),
    ).toEqual({ stayMinutes: 98, feeMinor: 0, alreadyPaid: true });
    // Paid at 88 minutes (4.50) for 2.00: 2.50 is owed within the grace period, though 98 minutes cost 6.00.
    expect(
      feeAfterPayments(tariff, entry, entry + 98 * MIN, {
        standingMinor: 200,
        lastPaidAtMs: entry + 88 * MIN,
      }),
    ).toEqual({ stayMinutes: 98, feeMinor: 250, alreadyPaid: false });
    // A payment recorded after this clock's now (skew between stations) is priced at this clock's now: never more
    // than the whole stay less what stands.
    expect(feeAfterPayments(tariff, entry, entry + 60 * MIN, paid)).toEqual({
      stayMinutes: 60,
      feeMinor: 0,
      alreadyPaid: true,
    });
    expect(
      feeAfterPayments(tariff, entry, entry + 60 * MIN, {
        standingMinor: 100,
        lastPaidAtMs: entry + 95 * MIN,
      }),
    ).toEqual({ stayMinutes: 60, feeMinor: 200, alreadyPaid: false });
  });

  it('is the whole stay less what stands paid after the grace period, daily maximum included, never below zero', () => {
    const paid = { standingMinor: 600, lastPaidAtMs: entry + 95 * MIN };
    expect(feeAfterPayments(tariff, entry, entry + 125 * MIN, paid)).toEqual({
      stayMinutes: 125,
      feeMinor: 150,
      alreadyPaid: false,
    });
    // 20 hours: capped at 20.00 for the day.
    expect(feeAfterPayments(tariff, entry, entry + 1_200 * MIN, paid)).toMatchObject({ feeMinor: 1_400 });
    expect(feeAfterPayments(tariff, entry, entry + 1_200 * MIN, { ...paid, standingMinor: 2_500 })).toEqual({
      stayMinutes: 1_200,
      feeMinor: 0,
      alreadyPaid: true,
    });
  });
});
