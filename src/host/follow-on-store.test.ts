import { describe, expect, it } from 'vitest';
import type { DccOfferSummary } from '../flows/index.js';
import { AuthorizationDataStore, openJournal } from '../journal/index.js';
import { dccFieldsFor } from './dcc.js';
import { journalFollowOnStore } from './follow-on-store.js';

const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  localAmountMinor: 600,
  localCurrency: 'GBP',
  billingAmountMinor: 799,
  billingCurrency: 'USD',
  exchangeRate: '1.331838',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20261124080000',
  expiresAtUtc: '2026-11-24T08:10:00Z',
  disclaimer: 'I have chosen to pay in the card currency.',
};

describe('journalFollowOnStore: the rate time a follow-on repeats (DESIGN.md money rule 7)', () => {
  it('is the 14 digits the authorization sent, kept and read back as sent', () => {
    const j = openJournal(':memory:');
    const store = new AuthorizationDataStore(j, Buffer.alloc(32, 5));
    const followOns = journalFollowOnStore(store, 'B');
    followOns.putDcc('A1', { indicator: '1', offer: OFFER });
    expect(store.dccTerms('A1')?.exchangeRateTimeStamp).toBe('20261124080000');
    const original = dccFieldsFor({ indicator: '1', offer: OFFER }, 600, 'B', true);
    const capture = dccFieldsFor(followOns.dcc('A1'), 300, 'B', false);
    expect(original?.indicator === '1' && original.exchangeRateTimeStamp).toBe('20261124080000');
    expect(capture?.indicator === '1' && capture.exchangeRateTimeStamp).toBe('20261124080000');
    j.close();
  });

  it('of an authorization an earlier version sent with the ISO 8601 text is that text, unchanged', () => {
    const j = openJournal(':memory:');
    const store = new AuthorizationDataStore(j, Buffer.alloc(32, 5));
    // A row written before the stamp was sent as 14 digits: its authorization sent the offer's time as written.
    store.putDccTerms('OLD1', {
      indicator: '1',
      family: 'B',
      localAmountMinor: 600,
      localCurrency: 'GBP',
      billingAmountMinor: 799,
      billingCurrency: 'USD',
      exchangeRate: '1.331838',
      exchangeRateInverted: false,
      exchangeRateTimeStamp: '2026-11-24T08:00:00Z',
    });
    const followOns = journalFollowOnStore(store, 'B');
    const refund = dccFieldsFor(followOns.dcc('OLD1'), 600, 'B', false);
    expect(refund).toMatchObject({ indicator: '1', exchangeRateTimeStamp: '2026-11-24T08:00:00Z' });
    j.close();
  });
});

describe('journalFollowOnStore: the currency-conversion disclosure of receipts after a restart', () => {
  it("keeps the gateway's disclaimer verbatim when a date in it reads as a Luhn-valid run of digits", () => {
    const j = openJournal(':memory:');
    const key = Buffer.alloc(32, 5);
    // "2026-12-01 08:11:00" is 20261201081100 to a card-number search: 14 digits that pass the Luhn check.
    const offer = { ...OFFER, disclaimer: 'Rate of 2026-12-01 08:11:00 UTC. I have chosen to pay in USD.' };
    journalFollowOnStore(new AuthorizationDataStore(j, key), 'B').putDcc('A1', { indicator: '1', offer });
    // A restart: a new store over the same journal and key.
    const after = journalFollowOnStore(new AuthorizationDataStore(j, key), 'B');
    expect(after.receiptOffer('A1')).toMatchObject({ marginRate: '3.5', disclaimer: offer.disclaimer });
    j.close();
  });
});
