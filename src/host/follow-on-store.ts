import type { DccTerms } from '../flows/index.js';
import type { AuthorizationDataStore } from '../journal/index.js';
import type { FollowOnStore } from './payments.js';

/**
 * The follow-on data of authorizations (their EMV tags, their conversion terms) in the journal database
 * (src/journal/authorization-data.ts): tags encrypted, terms in clear (no card data). The terms kept are those a
 * follow-on needs to convert its own amount at the authorization's rate (spec 001, DCC capture and refund).
 */
export function journalFollowOnStore(store: AuthorizationDataStore, family: 'A' | 'B'): FollowOnStore {
  return {
    putTags: (tx, tags) => store.putTags(tx, tags),
    tags: (tx) => store.tags(tx),
    putDcc(tx, selection) {
      if (selection.indicator !== '1') return;
      const o = selection.offer;
      store.putDccTerms(tx, {
        indicator: '1',
        family,
        billingAmountMinor: o.billingAmountMinor,
        billingCurrency: o.billingCurrency,
        exchangeRate: o.exchangeRate,
        exchangeRateTimeStamp: o.rateTimeUtc,
        exchangeRateInverted: o.exchangeRateInverted,
        localAmountMinor: o.localAmountMinor,
        localCurrency: o.localCurrency,
        offerId: o.offerId,
        ...(o.reconciliationId !== undefined ? { reconciliationId: o.reconciliationId } : {}),
      });
    },
    dcc(tx): DccTerms | undefined {
      const t = store.dccTerms(tx);
      if (t === undefined) return undefined;
      return {
        indicator: '1',
        offer: {
          offerId: t.offerId ?? '',
          ...(t.reconciliationId !== undefined ? { reconciliationId: t.reconciliationId } : {}),
          localAmountMinor: t.localAmountMinor,
          localCurrency: t.localCurrency,
          billingAmountMinor: t.billingAmountMinor,
          billingCurrency: t.billingCurrency,
          exchangeRate: t.exchangeRate,
          exchangeRateInverted: t.exchangeRateInverted,
          rateTimeUtc: t.exchangeRateTimeStamp,
        },
      };
    },
    forget: (tx) => {
      store.forget(tx);
    },
  };
}
