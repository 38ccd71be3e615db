import { describe, expect, it } from 'vitest';
import type { CardRead } from '../../devices/reader.js';
import { parseConfig, type ConfigInput } from '../config/index.js';
import type { DccOfferSummary } from '../flows/index.js';
import { GatewayError } from '../gateway/errors.js';
import type { DccOfferRequest, DccOfferResult } from '../gateway/services/dcc.js';
import { silentLogger } from '../log/index.js';
import type { HeldCard } from './card-store.js';
import {
  cardBin,
  dccFieldsFor,
  DccOffers,
  emvTransactionAmount,
  localAmountOf,
  presentableOffer,
  reversalAmount,
  terminalCanPresentDcc,
} from './dcc.js';

const NOW = new Date('2030-01-15T09:00:00Z');
const PAN = '4761739001010119';

const ANSWER: DccOfferResult = {
  kind: 'offer',
  id: 'offer-1',
  reconciliationId: 'rec-1',
  disclaimer: 'Chosen freely. Conversion by the merchant.',
  offers: [
    {
      amountMinor: 2_088,
      currency: 'JPY',
      originalAmountMinor: 1_250,
      originalCurrency: 'EUR',
      exchangeRate: '167.01795',
      marginRate: '3.5',
      exchangeRateTimeUtc: '2030-01-15T09:00:00Z',
      exchangeRateTimeStamp: '20300115090000',
      exchangeRateExpirationTimeUtc: '2030-01-15T09:10:00Z',
      rateId: 'rate-1',
      exchangeRateInverted: false,
    },
  ],
};

const INPUT = { cardRef: 'card_1', amountMinor: 1_250, currency: 'EUR' };

const SUMMARY: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 1_250,
  localCurrency: 'EUR',
  billingAmountMinor: 2_088,
  billingCurrency: 'JPY',
  exchangeRate: '167.01795',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20300115090000',
  expiresAtUtc: '2030-01-15T09:10:00Z',
  rateId: 'rate-1',
  disclaimer: 'Chosen freely. Conversion by the merchant.',
};

function held(entryMode: HeldCard['summary']['entryMode'] = 'contact'): HeldCard {
  return {
    ref: 'card_1',
    read: {} as CardRead,
    summary: {
      cardRef: 'card_1',
      entryMode,
      cardType: '001',
      maskedPan: '476173******0119',
      fingerprint: 'fp',
      fallback: false,
      chip: true,
    },
    data: { pan: PAN, expiry: '3012', serviceCode: '201', discretionaryData: '' },
  };
}

function offers(answer: DccOfferResult | Error, config: ConfigInput = {}, card: HeldCard | null = held()) {
  const sent: DccOfferRequest[] = [];
  const service = new DccOffers({
    config: parseConfig(config),
    gateway: {
      dccOffer: (request) => {
        sent.push(request);
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    },
    cards: { get: () => card ?? undefined },
    logger: silentLogger(),
    now: () => NOW,
  });
  return { service, sent };
}

describe('DCC offers on the host', () => {
  it('asks with the BIN, the local price, the entry mode and the terminal id, never the PAN', async () => {
    const { service, sent } = offers(ANSWER, { terminal: { id: 'PT000042' } });
    const offer = await service.offer(INPUT, new AbortController().signal);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      cardPrefix: '47617390',
      amountMinor: 1_250,
      currency: 'EUR',
      entryMode: 'contact',
      terminalId: 'PT000042',
    });
    expect(JSON.stringify(sent)).not.toContain(PAN);
    expect(offer).toEqual(SUMMARY);
    expect(service.exchanges()).toMatchObject([{ status: 'PENDING', amountMinor: 1_250, currency: 'EUR' }]);
  });

  it('names a contactless magnetic-stripe read CONTACTLESS for the offer service', async () => {
    const { service, sent } = offers(ANSWER, {}, held('msd'));
    await service.offer(INPUT, new AbortController().signal);
    expect(sent[0]?.entryMode).toBe('contactless');
  });

  it('offers nothing on a tap-and-go gate, when DCC is disabled, or without a held card, and asks nothing', async () => {
    for (const [config, card] of [
      [{ terminal: { model: 'tap-and-go' } }, held()],
      [{ dcc: { enabled: false } }, held()],
      [{}, null],
    ] as const) {
      const { service, sent } = offers(ANSWER, config, card);
      expect(await service.offer(INPUT, new AbortController().signal)).toBeNull();
      expect(sent).toEqual([]);
    }
    expect(terminalCanPresentDcc(parseConfig({ terminal: { model: 'kiosk' } }))).toBe(true);
  });

  it('offers no conversion on a tap at or below the configured CVM limit, and asks nothing (kiosk.md §1)', async () => {
    const limited = { dcc: { contactlessCvmLimitMinor: 1_250 } };
    for (const entryMode of ['contactless', 'msd'] as const) {
      const { service, sent } = offers(ANSWER, limited, held(entryMode));
      expect(await service.offer(INPUT, new AbortController().signal)).toBeNull();
      expect(sent).toEqual([]);
    }
    // Above the limit, inserted or swiped at any amount, or with no limit configured: the offer is asked for.
    const above = offers(ANSWER, { dcc: { contactlessCvmLimitMinor: 1_249 } }, held('contactless'));
    expect(await above.service.offer(INPUT, new AbortController().signal)).toEqual(SUMMARY);
    const inserted = offers(ANSWER, limited, held('contact'));
    expect(await inserted.service.offer(INPUT, new AbortController().signal)).toEqual(SUMMARY);
    const unlimited = offers(ANSWER, {}, held('contactless'));
    expect(await unlimited.service.offer(INPUT, new AbortController().signal)).toEqual(SUMMARY);
  });

  it('continues in the local currency when there is no offer or the lookup fails', async () => {
    const declined = offers({ kind: 'no-offer', reason: 'NOT_ELIGIBLE' });
    expect(await declined.service.offer(INPUT, new AbortController().signal)).toBeNull();
    expect(declined.service.exchanges()[0]?.status).toBe('DECLINED:NOT_ELIGIBLE');
    const failed = offers(new GatewayError('GW_SERVER', 'boom', { httpStatus: 502 }));
    expect(await failed.service.offer(INPUT, new AbortController().signal)).toBeNull();
    expect(failed.service.exchanges()[0]).toMatchObject({ status: 'GW_SERVER', httpStatus: 502 });
  });

  it('rejects when the machine aborted the lookup', async () => {
    const { service } = offers(new GatewayError('GW_CANCELLED', 'aborted'));
    const controller = new AbortController();
    controller.abort();
    await expect(service.offer(INPUT, controller.signal)).rejects.toThrow('aborted');
  });
});

describe('presentableOffer', () => {
  const first = ANSWER.kind === 'offer' ? ANSWER.offers[0]! : undefined;
  const variant = (
    change: Partial<NonNullable<typeof first>>,
    disclaimer: string | null = 'D',
  ): DccOfferResult => ({
    kind: 'offer',
    id: 'o',
    offers: [{ ...first!, ...change }],
    ...(disclaimer !== null ? { disclaimer } : {}),
  });

  it('refuses an offer the choice screen could not show completely', () => {
    expect(presentableOffer(variant({}, null), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ marginRate: undefined }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ exchangeRateExpirationTimeUtc: undefined }), INPUT, NOW)).toBeNull();
    // A disclaimer of blanks shows and prints as nothing: the customer would choose without it.
    expect(presentableOffer(variant({}, ' \n\t '), INPUT, NOW)).toBeNull();
  });

  it("carries the offer's rate time as the 14 digits the authorization sends, and refuses an offer without it", () => {
    expect(presentableOffer(ANSWER, INPUT, NOW)).toEqual(SUMMARY);
    expect(presentableOffer(variant({ exchangeRateTimeStamp: undefined }), INPUT, NOW)).toBeNull();
  });

  it('refuses an expired offer and one for another price or in the local currency', () => {
    expect(
      presentableOffer(variant({ exchangeRateExpirationTimeUtc: '2030-01-15T08:59:59Z' }), INPUT, NOW),
    ).toBeNull();
    expect(presentableOffer(variant({ originalAmountMinor: 1_000 }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ currency: 'EUR' }), INPUT, NOW)).toBeNull();
  });

  it('refuses an offer whose card amount is not the price at its own rate: its follow-ons convert at that rate', () => {
    // 12.50 EUR at 167.01795 is 2087.72 JPY: an answer offering 1 JPY, or stating a rate that gives another amount,
    // would be authorized for its amount while a partial capture or refund converts at its rate.
    expect(presentableOffer(variant({ amountMinor: 1 }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ amountMinor: 20_880 }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ exchangeRate: '1.0' }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ exchangeRate: '0' }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ exchangeRate: '0.000' }), INPUT, NOW)).toBeNull();
    expect(presentableOffer(variant({ exchangeRateInverted: true }), INPUT, NOW)).toBeNull();
    // The gateway's own rounding of the amount (down as well as half up) is its figure, taken as it is.
    expect(presentableOffer(variant({ amountMinor: 2_087 }), INPUT, NOW)).not.toBeNull();
    expect(presentableOffer(variant({ amountMinor: 2_088 }), INPUT, NOW)).not.toBeNull();
  });

  it('takes an amount the gateway converted at more digits than the rate it states, within the last digit', () => {
    // 1000.00 EUR at 1.082342 is 1082.34 USD; the answer writes the rate as 1.0823 (1082.25 … 1082.35 USD).
    const usd = (amountMinor: number, exchangeRate: string, exchangeRateInverted = false): DccOfferResult =>
      variant({
        currency: 'USD',
        amountMinor,
        exchangeRate,
        exchangeRateInverted,
        originalAmountMinor: 100_000,
      });
    const input = { ...INPUT, amountMinor: 100_000 };
    expect(presentableOffer(usd(108_234, '1.0823'), input, NOW)).not.toBeNull();
    expect(presentableOffer(usd(108_240, '1.0823'), input, NOW)).toBeNull();
    // Inverted: 1 USD = 0.9239 EUR, 1000.00 EUR / 0.9239 = 1082.36 USD (0.92385 … 0.92395: 1082.30 … 1082.42).
    expect(presentableOffer(usd(108_236, '0.9239', true), input, NOW)).not.toBeNull();
    expect(presentableOffer(usd(108_500, '0.9239', true), input, NOW)).toBeNull();
  });
});

describe('DCC fields per processor family', () => {
  it('converts the original at the offer and sends the offer ids', () => {
    expect(dccFieldsFor({ indicator: '1', offer: SUMMARY }, 1_250, 'A', true)).toEqual({
      indicator: '1',
      family: 'A',
      billingAmountMinor: 2_088,
      billingCurrency: 'JPY',
      exchangeRate: '167.01795',
      exchangeRateTimeStamp: '20300115090000',
      offerId: 'offer-1',
      reconciliationId: 'rec-1',
    });
  });

  it('converts a partial capture at the authorization rate', () => {
    expect(dccFieldsFor({ indicator: '1', offer: SUMMARY }, 625, 'B', false)).toMatchObject({
      family: 'B',
      billingAmountMinor: 1_044,
    });
  });

  it('sends indicator 3 on the original only, and nothing without a choice', () => {
    expect(dccFieldsFor({ indicator: '3' }, 1_250, 'A', true)).toEqual({ indicator: '3' });
    expect(dccFieldsFor({ indicator: '3' }, 1_250, 'A', false)).toBeUndefined();
    expect(dccFieldsFor(undefined, 1_250, 'A', true)).toBeUndefined();
  });

  it('reverses a family A authorization in its billing currency and a family B one in the local currency', () => {
    const request = { amountMinor: 1_250, currency: 'EUR', dcc: { indicator: '1' as const, offer: SUMMARY } };
    expect(reversalAmount(request, 'A')).toEqual({ amountMinor: 2_088, currency: 'JPY' });
    expect(reversalAmount(request, 'B')).toEqual({ amountMinor: 1_250, currency: 'EUR' });
    expect(reversalAmount({ amountMinor: 1_250, currency: 'EUR' }, 'A')).toEqual({
      amountMinor: 1_250,
      currency: 'EUR',
    });
  });

  it('reads a family A answer back in local minor units', () => {
    const request = { dcc: { indicator: '1' as const, offer: SUMMARY } };
    expect(localAmountOf(2_088, request, 'A')).toBe(1_250);
    expect(localAmountOf(1_044, request, 'A')).toBe(625);
    expect(localAmountOf(1_250, request, 'B')).toBe(1_250);
    expect(localAmountOf(undefined, request, 'A')).toBeUndefined();
  });

  it('takes the BIN of a card number: eight digits of a 16-digit PAN, six of a shorter one', () => {
    expect(cardBin('4761739001010119')).toBe('47617390');
    expect(cardBin('4111111111111')).toBe('411111');
  });
});

describe('dccFieldsFor a follow-on: the refund of a converted payment (the host repeats the sale’s terms)', () => {
  const selection = { indicator: '1' as const, offer: SUMMARY };

  it("repeats the authorization's terms; the full refund is exactly the offered billing amount", () => {
    expect(dccFieldsFor(selection, 1_250, 'A', false)).toEqual({
      indicator: '1',
      family: 'A',
      billingAmountMinor: 2_088,
      billingCurrency: 'JPY',
      exchangeRate: '167.01795',
      exchangeRateTimeStamp: '20300115090000',
      offerId: 'offer-1',
      reconciliationId: 'rec-1',
    });
  });

  it("converts a partial refund at the authorization's rate, rounded half up", () => {
    // 6.25 EUR × 167.01795 = 1043.86 JPY → 1044; 0.01 EUR → 1.67 → 2.
    expect(dccFieldsFor(selection, 625, 'B', false)).toMatchObject({
      family: 'B',
      billingAmountMinor: 1_044,
    });
    expect(dccFieldsFor(selection, 1, 'A', false)).toMatchObject({ billingAmountMinor: 2 });
  });

  it('adds nothing to a refund of a payment in the local currency', () => {
    expect(dccFieldsFor(undefined, 500, 'A', false)).toBeUndefined();
    expect(dccFieldsFor({ indicator: '3' }, 500, 'A', false)).toBeUndefined();
  });
});

describe('emvTransactionAmount: 9F02/5F2A of a converted authorization', () => {
  it('stay the local price and currency the card was read and its cryptogram computed with', () => {
    const converted = {
      amountMinor: 1_250,
      currency: 'EUR',
      dcc: { indicator: '1' as const, offer: SUMMARY },
    };
    expect(emvTransactionAmount(converted)).toEqual({ amountMinor: 1_250, currency: 'EUR' });
  });
});
