/**
 * Interchange compliance rules: the network tag tables, the never-send list, and what a message must respect of the
 * session before it (amounts held, captured and refunded; the original's tags; transactionIds).
 */
import {
  NETWORK_TAG_TABLE,
  NEVER_SEND_TAGS,
  type CardType,
  type Presence,
  type TagSetService,
} from '../../src/emv/index.js';
import { isServiceName, type ServiceName } from '../../src/vocabulary/services.js';
import type { Finding } from '../session.js';
import { finding, tagField } from './catalog.js';
import { field, hasTag, isMasked, text, TAGS_FIELD, type MessageView } from './message.js';
import { mayHold, ORIGINALS, requestAmount, type SessionState } from './session-state.js';
import { CARD_TYPES, EMV_ENTRY_MODES, TAG_SET_SERVICE, buildsTags } from './tables.js';

/** Tags a capture of an EMV contact pre-authorization must carry (gateway.md §7). */
const CONTACT_CAPTURE_TAGS: readonly string[] = ['95', '9F10', '9F26'];

/** What a timeout request may undo (gateway.md §2): a timeout reversal undoes authorizations, a timeout void the rest. */
const TIMEOUT_TARGETS: Readonly<Partial<Record<ServiceName, ReadonlySet<ServiceName>>>> = {
  'timeout-reversal': new Set<ServiceName>(['avr', 'preauth', 'incremental']),
  'timeout-void': new Set<ServiceName>(['capture', 'sale', 'refund-capture', 'refund-payment', 'credit']),
};

/**
 * The originals each follow-on may name in its path (spec 001 comments table: a reversal "reverses authorization or
 * incremental authorization", a void is of a capture, sale, refund or credit; gateway.md §2 and §7 for the paths).
 * An increment keeps its authorization's id, so reversing or capturing an increment names the pre-authorization.
 */
const FOLLOW_ON_TARGETS: Readonly<Partial<Record<ServiceName, ReadonlySet<ServiceName>>>> = {
  reversal: new Set<ServiceName>(['avr', 'preauth']),
  capture: new Set<ServiceName>(['preauth']),
  incremental: new Set<ServiceName>(['preauth']),
  'refund-payment': new Set<ServiceName>(['sale']),
  'refund-capture': new Set<ServiceName>(['capture']),
  'void-payment': new Set<ServiceName>(['sale']),
  'void-capture': new Set<ServiceName>(['capture']),
  'void-refund': new Set<ServiceName>(['refund-capture', 'refund-payment']),
  'void-credit': new Set<ServiceName>(['credit']),
};

/** A follow-on whose original is in the session names one it may follow (an original outside it is not judged). */
function followOnOriginal(view: MessageView, state: SessionState): Finding[] {
  if (!isServiceName(view.service) || view.targetId === undefined) return [];
  const allowed = FOLLOW_ON_TARGETS[view.service];
  const increment = state.incrementIds.get(view.targetId);
  if (allowed !== undefined && increment !== undefined)
    return [
      finding(
        'IC-FOLLOW-ON-ORIGINAL',
        'path',
        `${view.service} names ${view.targetId}, the id of the incremental authorization of message ${increment.index}: a follow-on names the original authorization (gateway.md §7)`,
      ),
    ];
  const original = state.byGatewayId.get(view.targetId)?.view;
  if (allowed === undefined || original === undefined) return [];
  if (isServiceName(original.service) && allowed.has(original.service)) return [];
  return [
    finding(
      'IC-FOLLOW-ON-ORIGINAL',
      'path',
      `${view.service} names ${view.targetId}, the ${original.service} of message ${original.index}: it follows only ${[...allowed].join(', ')}`,
    ),
  ];
}

function presence(
  row: (typeof NETWORK_TAG_TABLE)[number],
  cardType: CardType,
  service: TagSetService,
): Presence {
  const rule = row.rules[cardType];
  return typeof rule === 'string' ? rule : rule[service];
}

function neverSend(view: MessageView): Finding[] {
  // gateway.md §3's list, as spec fact shared with src/emv (a table, not a request builder).
  return [...NEVER_SEND_TAGS]
    .filter((tag) => hasTag(view, tag))
    .map((tag) =>
      finding(
        'IC-NEVER-SEND',
        tagField(tag),
        `tag ${tag} is card data that must never be sent (gateway.md §3)`,
      ),
    );
}

/**
 * The card type a message's tags are judged for: its own `paymentInformation.card.type`, else (a follow-on, which
 * repeats no card fields) the one of the original it refers to, through captures to their authorization.
 */
function cardTypeOf(view: MessageView, state: SessionState): string | undefined {
  const seen = new Set<MessageView>();
  let at: MessageView | undefined = view;
  while (at !== undefined && !seen.has(at)) {
    seen.add(at);
    const own = text(at.message.body, 'paymentInformation.card.type');
    if (own !== undefined) return own;
    at = at.targetId !== undefined ? state.byGatewayId.get(at.targetId)?.view : undefined;
  }
  return undefined;
}

function networkTable(view: MessageView, state: SessionState): Finding[] {
  const service = view.service;
  if (!isServiceName(service) || view.tags === undefined) return [];
  const tagSetService = TAG_SET_SERVICE[service];
  const cardType = cardTypeOf(view, state);
  if (tagSetService === null || cardType === undefined || !CARD_TYPES.includes(cardType as CardType))
    return [];
  const type = cardType as CardType;
  const out: Finding[] = [];
  const network = type === '002' ? 'N1' : 'N2';
  for (const row of NETWORK_TAG_TABLE) {
    const rule = presence(row, type, tagSetService);
    if (rule === 'P' && hasTag(view, row.tag))
      out.push(
        finding(
          'IC-NETWORK-PROHIBITED',
          tagField(row.tag),
          `tag ${row.tag} is prohibited for ${network} ${tagSetService}`,
        ),
      );
    // The network's length of the value (the table's `lengths`: 9F6E), in whatever message carries it.
    const value = view.tags.get(row.tag);
    const range = row.lengths?.[type];
    if (range !== undefined && value !== undefined) {
      const bytes = value.length / 2;
      if (bytes < range[0] || bytes > range[1])
        out.push(
          finding(
            'IC-NETWORK-LENGTH',
            tagField(row.tag),
            `tag ${row.tag} is ${range[0] === range[1] ? range[0] : `${range[0]}-${range[1]}`} bytes for ${network} (card type ${type}), not ${bytes}`,
          ),
        );
    }
    // Mandatory tags are judged where the tag set is read: follow-ons repeat the original's (judged below).
    if (rule === 'M' && buildsTags(service) && !hasTag(view, row.tag))
      out.push(
        finding(
          'IC-NETWORK-MANDATORY',
          tagField(row.tag),
          `tag ${row.tag} (${row.element}) is mandatory for ${network}`,
        ),
      );
  }
  return out;
}

function tagsForEntryMode(view: MessageView): Finding[] {
  if (!buildsTags(view.service)) return [];
  const entryMode = text(view.message.body, 'pointOfSaleInformation.entryMode');
  if (entryMode === undefined) return [];
  const chip = EMV_ENTRY_MODES.includes(entryMode);
  const sent = field(view.message.body, TAGS_FIELD) !== undefined;
  if (chip && !sent)
    return [finding('IC-EMV-TAGS-ENTRY-MODE', TAGS_FIELD, `an EMV ${entryMode} read sends ${TAGS_FIELD}`)];
  if (!chip && sent)
    return [
      finding(
        'IC-EMV-TAGS-ENTRY-MODE',
        TAGS_FIELD,
        `a ${entryMode} read has no chip data: ${TAGS_FIELD} must not be sent`,
      ),
    ];
  return [];
}

const FALLBACK_FIELD = 'pointOfSaleInformation.emv.fallback';
const FALLBACK_CONDITION_FIELD = 'pointOfSaleInformation.emv.fallbackCondition';

/** The service code of the card read: from the track data (masked or not), else the field of its own. */
function serviceCodeOf(body: unknown): string | undefined {
  const track = text(body, 'pointOfSaleInformation.trackData') ?? '';
  return (
    /=\d{4}(\d{3})/.exec(track)?.[1] ??
    /\^[^^]*\^\d{4}(\d{3})/.exec(track)?.[1] ??
    text(body, 'pointOfSaleInformation.serviceCode')
  );
}

/**
 * EMV fallback: a chip card (service code 2xx or 6xx) read by its stripe is sent only as a fallback after its chip
 * failed, and says so — `emv.fallback` true with `emv.fallbackCondition` 1 or 2 (the gateway REST API reference). A
 * fallback is a swipe of a chip card; a condition without `fallback: true` says a fallback that was not one.
 */
function emvFallback(view: MessageView): Finding[] {
  if (!buildsTags(view.service)) return [];
  const body = view.message.body;
  const entryMode = text(body, 'pointOfSaleInformation.entryMode');
  const fallback = field(body, FALLBACK_FIELD);
  const condition = text(body, FALLBACK_CONDITION_FIELD);
  const out: Finding[] = [];
  if (fallback !== undefined && fallback !== true && fallback !== false)
    out.push(finding('IC-EMV-FALLBACK', FALLBACK_FIELD, 'emv.fallback is a boolean'));
  if (fallback === true) {
    if (entryMode !== 'swiped')
      out.push(
        finding(
          'IC-EMV-FALLBACK',
          FALLBACK_FIELD,
          `a fallback is a swipe, not a ${entryMode ?? 'missing'} read`,
        ),
      );
    if (condition !== '1' && condition !== '2')
      out.push(
        finding('IC-EMV-FALLBACK', FALLBACK_CONDITION_FIELD, 'a fallback carries fallbackCondition 1 or 2'),
      );
    // A stripe-only card has no chip to fall back from.
    const serviceCode = serviceCodeOf(body);
    if (entryMode === 'swiped' && serviceCode !== undefined && !/^[26]/.test(serviceCode))
      out.push(
        finding(
          'IC-EMV-FALLBACK',
          FALLBACK_FIELD,
          `a fallback is a chip card (service code 2xx or 6xx), not service code ${serviceCode}`,
        ),
      );
  } else {
    if (condition !== undefined)
      out.push(
        finding(
          'IC-EMV-FALLBACK',
          FALLBACK_CONDITION_FIELD,
          'fallbackCondition is sent only with fallback true',
        ),
      );
    const serviceCode = serviceCodeOf(body);
    if (entryMode === 'swiped' && serviceCode !== undefined && /^[26]/.test(serviceCode))
      out.push(
        finding(
          'IC-EMV-FALLBACK',
          FALLBACK_FIELD,
          `a chip card (service code ${serviceCode}) swiped is sent only as a fallback: emv.fallback true`,
        ),
      );
  }
  return out;
}

function repeatsOriginal(view: MessageView, original: MessageView, requireAll: boolean): Finding[] {
  const out: Finding[] = [];
  for (const [tag, value] of original.tags ?? []) {
    const repeated = view.tags?.get(tag);
    if (repeated === undefined) {
      if (requireAll && !view.maskedTags.has(tag))
        out.push(
          finding(
            'IC-FOLLOW-ON-TAGS-REPEAT',
            tagField(tag),
            `the original (message ${original.index}) sent ${tag}: repeat it`,
          ),
        );
    } else if (repeated !== value)
      out.push(
        finding(
          'IC-FOLLOW-ON-TAGS-REPEAT',
          tagField(tag),
          `${tag} differs from the original's (message ${original.index})`,
        ),
      );
  }
  return out;
}

/** gateway.md §7: a capture carries `emv.tags` only when the pre-authorization was an EMV contact read. */
function tagsWithoutContactOriginal(): Finding[] {
  return [
    finding(
      'IC-CAPTURE-CONTACT-TAGS',
      TAGS_FIELD,
      'a capture sends EMV tags only after an EMV contact pre-authorization',
    ),
  ];
}

function followOnTags(view: MessageView, state: SessionState): Finding[] {
  if (view.targetId === undefined || view.tagsError !== undefined) return [];
  const original = state.byGatewayId.get(view.targetId)?.view;
  // Tags masked whole by a capture: sent, but nothing to compare.
  if (original?.tagsMasked === true || view.tagsMasked) return [];
  const sent = field(view.message.body, TAGS_FIELD) !== undefined;
  if (original === undefined || original.tags === undefined) {
    if (view.service === 'capture' && original !== undefined && sent) return tagsWithoutContactOriginal();
    return [];
  }
  const entryMode = text(original.message.body, 'pointOfSaleInformation.entryMode');
  if (view.service === 'reversal') {
    if (view.tags === undefined)
      return [
        finding(
          'IC-REVERSAL-EMV-TAGS',
          TAGS_FIELD,
          `the authorization (message ${original.index}) carried EMV data: the reversal carries its tags`,
        ),
      ];
    return repeatsOriginal(view, original, true);
  }
  if (view.service === 'capture') {
    if (entryMode !== 'contact') {
      if (sent) return tagsWithoutContactOriginal();
      return [];
    }
    if (view.tags === undefined)
      return [
        finding(
          'IC-CAPTURE-CONTACT-TAGS',
          TAGS_FIELD,
          `the pre-authorization (message ${original.index}) was an EMV contact read: the capture carries its tags with 95, 9F10, 9F26`,
        ),
      ];
    const missing = CONTACT_CAPTURE_TAGS.filter((t) => !hasTag(view, t));
    return [
      ...missing.map((t) =>
        finding('IC-CAPTURE-CONTACT-TAGS', tagField(t), `a capture after an EMV contact read carries ${t}`),
      ),
      ...repeatsOriginal(view, original, false),
    ];
  }
  return [];
}

function amounts(view: MessageView, state: SessionState): Finding[] {
  const amount = requestAmount(view);
  const target = view.targetId !== undefined ? state.byGatewayId.get(view.targetId) : undefined;
  if (amount === undefined || target === undefined) return [];
  const reversedBy = target.reversedBy;
  if (reversedBy !== undefined && (view.service === 'capture' || view.service === 'reversal'))
    return [
      finding(
        view.service === 'capture' ? 'IC-CAPTURE-AUTHORIZED' : 'IC-REVERSAL-AMOUNT',
        view.service === 'capture'
          ? 'orderInformation.amountDetails.totalAmount'
          : 'reversalInformation.amountDetails.totalAmount',
        `the authorization of message ${target.view.index} was reversed by the ${reversedBy.service} of message ${reversedBy.index}: it holds nothing to ${view.service === 'capture' ? 'capture' : 'reverse'}`,
      ),
    ];
  if (view.service === 'capture') {
    // After a capture of it was voided, the authorization holds only what that capture left held (gateway.md §7).
    const held = target.heldAfterVoidMinor;
    const authorized = held ?? target.authorizedMinor;
    if (authorized !== undefined && target.capturedMinor + amount > authorized)
      return [
        finding(
          'IC-CAPTURE-AUTHORIZED',
          'orderInformation.amountDetails.totalAmount',
          held !== undefined
            ? `captures would total ${target.capturedMinor + amount} minor units, above the ${held} a voided capture left held (message ${target.view.index})`
            : `captures would total ${target.capturedMinor + amount} minor units, above the ${authorized} authorized (message ${target.view.index})`,
        ),
      ];
    return [];
  }
  if (view.service === 'reversal') {
    // After an increment without a decision, the hold is the authorization's total with or without it: either is
    // the authorized amount the reversal may carry.
    const authorized = target.authorizedMinor;
    if (authorized !== undefined && !mayHold(target, amount))
      return [
        finding(
          'IC-REVERSAL-AMOUNT',
          'reversalInformation.amountDetails.totalAmount',
          target.uncertainMinor.length === 0
            ? `a reversal carries the authorized amount, ${authorized} minor units (message ${target.view.index})`
            : `a reversal carries the authorized amount: ${authorized} minor units (message ${target.view.index}), less any of the increments whose outcome is unknown (${target.uncertainMinor.join(', ')})`,
        ),
      ];
    return [];
  }
  if (view.service === 'refund-capture' || view.service === 'refund-payment') {
    if (target.refundedMinor + amount > target.capturedMinor)
      return [
        finding(
          'IC-REFUND-CAPTURED',
          'orderInformation.amountDetails.totalAmount',
          `refunds would total ${target.refundedMinor + amount} minor units, above the ${target.capturedMinor} captured (message ${target.view.index})`,
        ),
      ];
    return [];
  }
  return [];
}

/** Follow-ons that name their amount's currency (spec 001: amounts of a transaction stay in its currency). */
const CURRENCY_FOLLOW_ONS: ReadonlySet<string> = new Set([
  'incremental',
  'reversal',
  'timeout-reversal',
  'capture',
  'refund-capture',
  'refund-payment',
]);

/**
 * A follow-on moves money in its original's currency: a capture, reversal, increment or refund in another currency
 * is refused by the gateway (for a converted family A authorization that currency is the billing one).
 */
function followOnCurrency(view: MessageView, state: SessionState): Finding[] {
  if (!CURRENCY_FOLLOW_ONS.has(view.service)) return [];
  const path = 'orderInformation.amountDetails.currency';
  const currency = text(view.message.body, path);
  if (currency === undefined) return [];
  let original: { currency: string | undefined; index: number } | undefined;
  if (view.targetId !== undefined) {
    const tx = state.byGatewayId.get(view.targetId);
    if (tx !== undefined) original = { currency: tx.currency, index: tx.view.index };
  } else if (view.service === 'timeout-reversal') {
    const id = text(view.message.body, 'clientReferenceInformation.transactionId');
    const tx = id !== undefined ? state.byTransactionId.get(id) : undefined;
    if (tx !== undefined) original = { currency: text(tx.view.message.body, path), index: tx.view.index };
  }
  if (original?.currency === undefined || original.currency === currency) return [];
  return [
    finding(
      'IC-FOLLOW-ON-CURRENCY',
      path,
      `${path} must be ${original.currency}, the currency of the original (message ${original.index})`,
    ),
  ];
}

function zeroAmount(view: MessageView): Finding[] {
  if (view.service !== 'sale') return [];
  if (requestAmount(view) !== 0) return [];
  return [
    finding(
      'IC-AVR-ZERO',
      'processingInformation.capture',
      'a zero amount is an account verification ("Parking AVR"): it captures nothing',
    ),
  ];
}

function transactionIds(view: MessageView, state: SessionState): Finding[] {
  const service = view.service;
  if (!isServiceName(service)) return [];
  const path = 'clientReferenceInformation.transactionId';
  const id = text(view.message.body, path);
  // A transactionId a capture masked (it looked like card data) names nothing that can be compared.
  if (isMasked(id)) return [];
  const timeout = TIMEOUT_TARGETS[service];
  if (timeout !== undefined) {
    if (id === undefined) return [];
    const original = state.byTransactionId.get(id);
    if (
      original === undefined ||
      !isServiceName(original.view.service) ||
      !timeout.has(original.view.service)
    )
      return [
        finding(
          'IC-TIMEOUT-ORIGINAL',
          path,
          `${service} must name the transactionId of an earlier ${[...timeout].join(', ')} of the session`,
        ),
      ];
    // gateway.md §7: a timeout reversal is only for an authorization not yet captured (a capture is voided instead);
    // an increment is part of its authorization, captured with it.
    const auth = service === 'timeout-reversal' ? state.authorizationOf(original.view) : undefined;
    if (auth !== undefined && auth.capturedMinor > 0)
      return [
        finding(
          'IC-TIMEOUT-ORIGINAL',
          path,
          original.view.service === 'incremental'
            ? `the authorization of message ${auth.view.index}, which the increment of message ${original.view.index} raised, is captured already: a timeout reversal is only for an authorization not yet captured`
            : `the authorization of message ${original.view.index} is captured already: a timeout reversal is only for an authorization not yet captured`,
        ),
      ];
    const amount = requestAmount(view);
    if (
      service === 'timeout-reversal' &&
      original.requestedMinor !== undefined &&
      amount !== undefined &&
      amount !== original.requestedMinor
    )
      return [
        finding(
          'IC-TIMEOUT-REVERSAL-AMOUNT',
          'reversalInformation.amountDetails.totalAmount',
          `a timeout reversal carries the amount the original requested, ${original.requestedMinor} minor units (message ${original.view.index})`,
        ),
      ];
    return [];
  }
  if (id === undefined || !ORIGINALS.has(service)) return [];
  const earlier = state.byTransactionId.get(id);
  if (earlier === undefined) return [];
  return [
    finding('IC-TRANSACTION-ID-UNIQUE', path, `transactionId already sent by message ${earlier.view.index}`),
  ];
}

/** Every interchange compliance rule of one message, against the session before it. */
export function checkInterchange(view: MessageView, state: SessionState): Finding[] {
  return [
    ...neverSend(view),
    ...networkTable(view, state),
    ...tagsForEntryMode(view),
    ...emvFallback(view),
    ...followOnOriginal(view, state),
    ...followOnTags(view, state),
    ...amounts(view, state),
    ...followOnCurrency(view, state),
    ...zeroAmount(view),
    ...transactionIds(view, state),
  ];
}
