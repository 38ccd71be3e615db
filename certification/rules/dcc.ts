/**
 * Currency conversion (DCC) rules (spec 001, "Currency conversion (DCC)"; DESIGN.md money rule 7). The DCC field set
 * of a converted request is `orderInformation.amountDetails` with `currencyConversion.indicator` "1", `exchangeRate`,
 * `exchangeRateTimeStamp`, `currency` and `totalAmount`, and
 * - processor family A: `originalAmount`/`originalCurrency` (the merchant's price); `totalAmount` and `currency` are
 *   the billing (card) amount and currency;
 * - processor family B: `foreignAmount`/`foreignCurrency` (the billing amount); `totalAmount` and `currency` stay in
 *   the merchant's currency.
 * A capture or refund of a converted authorization carries the same field set at the authorization's rate, partial
 * amounts converted with that rate; a follow-on of an authorization in the local currency carries none. Written from
 * the spec, not from the client's builders (DESIGN.md: a builder bug must not hide in the validator).
 */
import { isServiceName, type ServiceName } from '../../src/vocabulary/services.js';
import type { Finding } from '../session.js';
import { finding } from './catalog.js';
import {
  convertsAt,
  DCC_FIELDS as F,
  dccAuthorizationOf,
  dccFieldSet,
  sameRate,
  type DccAuthorization,
  type DccFieldSet,
} from './dcc-terms.js';
import { field, minorUnits, text, type MessageView } from './message.js';
import type { SessionState } from './session-state.js';

/** The original a follow-on refers to: by the gateway id of its path, or (timeout requests) by transactionId. */
function originalOf(
  view: MessageView,
  state: SessionState,
): { view: MessageView; dcc: DccAuthorization | null } | undefined {
  if (view.targetId !== undefined) {
    const tx = state.byGatewayId.get(view.targetId);
    return tx === undefined ? undefined : { view: tx.view, dcc: tx.dcc };
  }
  if (view.service !== 'timeout-reversal' && view.service !== 'timeout-void') return undefined;
  const id = text(view.message.body, 'clientReferenceInformation.transactionId');
  const original = id !== undefined ? state.byTransactionId.get(id) : undefined;
  if (original === undefined) return undefined;
  return { view: original.view, dcc: dccAuthorizationOf(original.view) };
}

/** Originals that authorize with a conversion (the offer's rate applies to them). */
const CONVERTING_ORIGINALS: ReadonlySet<ServiceName> = new Set(['preauth', 'sale']);

/** Follow-ons that spec 001 requires to carry the DCC field set of a converted authorization. */
const FIELD_SET_FOLLOW_ONS: ReadonlySet<ServiceName> = new Set([
  'capture',
  'refund-capture',
  'refund-payment',
]);

/** spec 001 DCC authorization: the fields a converted original sends, per family. */
function requiredOfOriginal(view: MessageView, set: DccFieldSet): Finding[] {
  const body = view.message.body;
  const out: Finding[] = [];
  if (set.indicator !== '1')
    out.push(
      finding(
        'DE-REQUIRED-FIELD',
        F.indicator,
        `a converted authorization sends ${F.indicator} "1" with its DCC fields (spec 001, DCC authorization)`,
      ),
    );
  for (const path of [F.rate, F.stamp])
    if (field(body, path) === undefined)
      out.push(finding('DE-REQUIRED-FIELD', path, `a converted authorization requires ${path} (spec 001)`));
  if (set.family === undefined)
    out.push(
      finding(
        'DE-REQUIRED-FIELD',
        F.originalAmount,
        `a converted authorization sends ${F.originalAmount}/originalCurrency (processor family A) or foreignAmount/foreignCurrency (family B)`,
      ),
    );
  else
    for (const path of set.family === 'A'
      ? [F.originalAmount, F.originalCurrency]
      : [F.foreignAmount, F.foreignCurrency])
      if (field(body, path) === undefined)
        out.push(
          finding(
            'DE-REQUIRED-FIELD',
            path,
            `processor family ${set.family} requires ${path} (spec 001, DCC)`,
          ),
        );
  return out;
}

/** A converted authorization takes the rate and currencies of an offer the session was given. */
function againstOffer(view: MessageView, set: DccFieldSet, state: SessionState): Finding[] {
  // An offer whose answer is unknown may have given the rate: nothing to compare then.
  if (state.offerMessages === 0 || state.unansweredOffers > 0) return [];
  if (set.rate === undefined || set.family === undefined) return [];
  if (state.offers.length === 0)
    return [
      finding(
        'IC-DCC-OFFER-RATE',
        F.rate,
        'no DCC offer of the session gave a rate: the authorization must stay in the local currency',
      ),
    ];
  const rate = set.rate;
  const offer = state.offers.findLast((o) => sameRate(o.rate, rate));
  if (offer === undefined)
    return [
      finding(
        'IC-DCC-OFFER-RATE',
        F.rate,
        `exchangeRate ${rate} is not the rate of the session's offer (${state.offers.map((o) => o.rate).join(', ')})`,
      ),
    ];
  const out: Finding[] = [];
  if (offer.currency !== undefined && set.billing.currency !== offer.currency)
    out.push(
      finding(
        'IC-DCC-OFFER-RATE',
        set.billing.currencyField,
        `the billing currency is the offer's ${offer.currency} (message ${offer.index})`,
      ),
    );
  if (offer.originalCurrency !== undefined && set.local.currency !== offer.originalCurrency)
    out.push(
      finding(
        'IC-DCC-OFFER-RATE',
        set.local.currencyField,
        `the local currency is the offer's ${offer.originalCurrency} (message ${offer.index})`,
      ),
    );
  if (out.length > 0) return out;
  // spec 001 DCC flow: the customer chose between the two prices of the offer; the authorization is for them.
  for (const [side, offered] of [
    [set.local, offer.originalAmount],
    [set.billing, offer.amount],
  ] as const) {
    const sent = minorUnits(side.amount, side.currency);
    const expected = minorUnits(offered, side.currency);
    if (sent !== undefined && expected !== undefined && sent !== expected)
      out.push(
        finding(
          'IC-DCC-OFFER-RATE',
          side.amountField,
          `${side.amountField} must be the offer's ${String(offered)} ${side.currency ?? ''} (message ${offer.index})`,
        ),
      );
  }
  return out;
}

/** The billing amount is the local amount at `rate` (the authorization's, for a follow-on). */
function convertedAmount(
  set: DccFieldSet,
  rate: string | undefined,
  state: SessionState,
  authIndex: number | undefined,
): Finding[] {
  if (rate === undefined || set.family === undefined) return [];
  const { local, billing } = set;
  if (local.currency === undefined || billing.currency === undefined) return [];
  const localMinor = minorUnits(local.amount, local.currency);
  const billingMinor = minorUnits(billing.amount, billing.currency);
  if (localMinor === undefined || billingMinor === undefined) return [];
  // The direction the rate is written in is the offer's (exchangeRateInverted); without the offer, either.
  const offer = state.offers.findLast((o) => sameRate(o.rate, rate));
  const directions = offer !== undefined ? [offer.inverted] : [false, true];
  if (
    directions.some((inverted) =>
      convertsAt(localMinor, local.currency!, billingMinor, billing.currency!, rate, inverted),
    )
  )
    return [];
  return [
    finding(
      'CE-DCC-CONVERTED-AMOUNT',
      billing.amountField,
      `${billing.amountField} ${String(billing.amount)} ${billing.currency} is not ${String(local.amount)} ${local.currency} at the ${authIndex === undefined ? '' : `authorization's (message ${authIndex}) `}rate ${rate}`,
    ),
  ];
}

/** A follow-on of a converted authorization: the field set, at the authorization's rate and currencies. */
function followOnOfConverted(
  view: MessageView,
  set: DccFieldSet | undefined,
  auth: DccAuthorization,
  state: SessionState,
): Finding[] {
  const service = view.service as ServiceName;
  const body = view.message.body;
  const out: Finding[] = [];
  const at = `the converted authorization (message ${auth.index})`;
  if (FIELD_SET_FOLLOW_ONS.has(service)) {
    // spec 001: "DCC capture and refund require the same field set (currency, exchangeRate, totalAmount, plus
    // originalAmount/originalCurrency for family A, or foreignAmount/foreignCurrency/exchangeRateTimeStamp for B)".
    const required: string[] = [F.rate, F.total, F.currency];
    if (auth.family === 'A') required.push(F.originalAmount, F.originalCurrency);
    if (auth.family === 'B') required.push(F.foreignAmount, F.foreignCurrency, F.stamp);
    for (const path of required)
      if (field(body, path) === undefined)
        out.push(
          finding(
            'IC-DCC-FOLLOW-ON-FIELDS',
            path,
            `a ${service} of ${at} carries the DCC field set: ${path}`,
          ),
        );
  }
  if (set === undefined) return out;
  const indicator = text(body, F.indicator);
  if (indicator !== undefined && indicator !== '1')
    out.push(
      finding('IC-DCC-FOLLOW-ON-FIELDS', F.indicator, `${F.indicator} is "1" on a follow-on of ${at}`),
    );
  if (auth.family !== undefined && set.family !== undefined && set.family !== auth.family) {
    const path = auth.family === 'A' ? F.originalAmount : F.foreignAmount;
    out.push(
      finding(
        'IC-DCC-FOLLOW-ON-FIELDS',
        path,
        `${at} sent processor family ${auth.family}'s fields: the follow-on sends ${path}, not family ${set.family}'s`,
      ),
    );
  }
  if (set.rate !== undefined && auth.rate !== undefined && !sameRate(set.rate, auth.rate))
    out.push(
      finding('IC-DCC-FOLLOW-ON-RATE', F.rate, `exchangeRate must be the rate of ${at}, ${auth.rate}`),
    );
  if (
    set.rateTimeStamp !== undefined &&
    auth.rateTimeStamp !== undefined &&
    set.rateTimeStamp !== auth.rateTimeStamp
  )
    out.push(
      finding(
        'IC-DCC-FOLLOW-ON-RATE',
        F.stamp,
        `exchangeRateTimeStamp must be that of ${at}, ${auth.rateTimeStamp}`,
      ),
    );
  // The same pairing: the local and billing currencies of the authorization (orderInformation.amountDetails.currency
  // itself is IC-FOLLOW-ON-CURRENCY's).
  if (set.family !== undefined && set.family === auth.family) {
    const pair =
      set.family === 'A'
        ? { path: F.originalCurrency, actual: set.local.currency, expected: auth.localCurrency }
        : { path: F.foreignCurrency, actual: set.billing.currency, expected: auth.billingCurrency };
    if (pair.actual !== undefined && pair.expected !== undefined && pair.actual !== pair.expected)
      out.push(
        finding('IC-DCC-FOLLOW-ON-CURRENCY', pair.path, `${pair.path} must be ${pair.expected}, as in ${at}`),
      );
  }
  if (set.family !== undefined && (auth.family === undefined || set.family === auth.family))
    out.push(...convertedAmount(set, auth.rate ?? set.rate, state, auth.index));
  return out;
}

/** Every DCC rule of one message, against the authorization and offers before it. */
export function checkDcc(view: MessageView, state: SessionState): Finding[] {
  const service = view.service;
  if (!isServiceName(service)) return [];
  const set = dccFieldSet(view.message.body);
  if (CONVERTING_ORIGINALS.has(service)) {
    if (set === undefined) return [];
    return [
      ...requiredOfOriginal(view, set),
      ...againstOffer(view, set, state),
      ...convertedAmount(set, set.rate, state, undefined),
    ];
  }
  // An account verification or a standalone credit converts nothing (spec 001 names DCC for authorization,
  // capture and refund only); their fields are the data element rules'.
  if (service === 'avr' || service === 'credit') return [];
  const original = originalOf(view, state);
  if (original === undefined) {
    // The authorization is not in the session: the field set can only be judged against itself.
    return set === undefined ? [] : convertedAmount(set, set.rate, state, undefined);
  }
  if (original.dcc === null) {
    if (set === undefined) return [];
    const path = set.present[0] ?? F.rate;
    return [
      finding(
        'IC-DCC-NOT-CONVERTED',
        path,
        `the original (message ${original.view.index}) was not converted: a follow-on carries no DCC field set (${path})`,
      ),
    ];
  }
  return followOnOfConverted(view, set, original.dcc, state);
}
