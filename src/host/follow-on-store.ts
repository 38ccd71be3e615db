import type { DccReceiptOffer, DccTerms } from '../flows/index.js';
import { storableDccDisclosure, type AuthorizationDataStore } from '../journal/index.js';
import type { FollowOnStore } from './payments.js';

/**
 * The follow-on data of authorizations (their EMV tags, their conversion terms) in the journal database
 * (src/journal/authorization-data.ts): tags and disclosure encrypted, terms in clear (no card data). The terms kept are those a
 * follow-on needs to convert its own amount at the authorization's rate (spec 001, DCC capture and refund), with the
 * offer's margin and disclaimer that the receipts of its transactions state (kiosk.md §1).
 */
export function journalFollowOnStore(store: AuthorizationDataStore, family: 'A' | 'B'): FollowOnStore {
  const dcc = (tx: string): DccTerms | undefined => {
    const t = store.dccTerms(tx);
    if (t === undefined) return undefined;
    return {
      indicator: '1',
      family: t.family,
      offer: {
        offerId: t.offerId ?? '',
        ...(t.reconciliationId !== undefined ? { reconciliationId: t.reconciliationId } : {}),
        localAmountMinor: t.localAmountMinor,
        localCurrency: t.localCurrency,
        billingAmountMinor: t.billingAmountMinor,
        billingCurrency: t.billingCurrency,
        exchangeRate: t.exchangeRate,
        exchangeRateInverted: t.exchangeRateInverted,
        exchangeRateTimeStamp: t.exchangeRateTimeStamp,
      },
    };
  };
  return {
    putTags: (tx, tags) => store.putTags(tx, tags),
    tags: (tx) => store.tags(tx),
    putDcc(tx, selection) {
      if (selection.indicator !== '1') return;
      const o = selection.offer;
      store.putDccTerms(
        tx,
        {
          indicator: '1',
          family,
          billingAmountMinor: o.billingAmountMinor,
          billingCurrency: o.billingCurrency,
          exchangeRate: o.exchangeRate,
          exchangeRateTimeStamp: o.exchangeRateTimeStamp,
          exchangeRateInverted: o.exchangeRateInverted,
          localAmountMinor: o.localAmountMinor,
          localCurrency: o.localCurrency,
          offerId: o.offerId,
          ...(o.reconciliationId !== undefined ? { reconciliationId: o.reconciliationId } : {}),
        },
        // Kept sealed, the disclaimer verbatim whatever digits it holds. One the journal would refuse (of the wrong
        // shape) is not kept: the payment's outcome stands, and its receipts after a restart leave the conversion out
        // (receiptOffer answers 'not-kept').
        storableDccDisclosure({ marginRate: o.marginRate, disclaimer: o.disclaimer }),
      );
    },
    dcc,
    receiptOffer(tx): DccReceiptOffer | 'not-kept' | undefined {
      const terms = dcc(tx);
      if (terms?.indicator !== '1') return undefined;
      const shown = store.dccDisclosure(tx);
      if (shown === undefined) return 'not-kept';
      return { ...terms.offer, marginRate: shown.marginRate, disclaimer: shown.disclaimer };
    },
    forget: (tx) => {
      store.forget(tx);
    },
  };
}
