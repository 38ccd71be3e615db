import type { CustomerField } from '../config/index.js';
import type { ParkingComments, ServiceName } from '../vocabulary/services.js';

/**
 * The effects the parking machines need, as one typed contract (STYLE.md §7: machines name their effects, the
 * composition root provides them). Nothing in `src/flows/` talks to the reader, the gateway or the journal: the host
 * implements {@link FlowEffects} and hands it to `provideFlowEffects` (src/flows/provide.ts), which plugs each function
 * into the xstate machines with `machine.provide(...)`.
 *
 * Card data never crosses this boundary: the machines see a {@link CardSummary} (masked PAN, an opaque `cardRef`, a
 * keyed fingerprint) and hand `cardRef` back when a request needs the card; the host keeps the card data itself.
 */

/** How the card was read (gateway.md §3 `pointOfSaleInformation.entryMode`; `msd` is contactless magnetic stripe). */
export type EntryMode = 'contact' | 'contactless' | 'swiped' | 'msd';

/** Card type codes of the parking section (spec 001): N2 = `001`, N1 = `002`. Other networks are not supported. */
export type CardType = '001' | '002';

/**
 * Gateway services the machines ask for, and the comments values of spec 001: the one vocabulary in
 * src/vocabulary/services.ts (paths per service are listed there).
 */
export type { ParkingComments, ServiceName } from '../vocabulary/services.js';
/** Why the card is read: lets the host choose reader options and log the purpose (never the card). */
export type CardPurpose = 'avr' | 'preauth' | 'sale' | 'credit' | 'exit';

/** Input of {@link FlowEffects.readCard}. */
export interface ReadCardInput {
  /** Amount authorised (tag 9F02), integer minor units of `currency`; 0 for an account verification or a gate exit. */
  amountMinor: number;
  /** ISO 4217 alpha code, e.g. "GBP". The host converts it to the numeric code for 5F2A. */
  currency: string;
  /** EMV transaction type (9C): "00" goods and services, "20" refund/credit, "30" balance inquiry (verification). */
  transactionType: '00' | '20' | '30';
  purpose: CardPurpose;
}

/**
 * What the machines learn about a card read. Holds no card data: the host keeps the read (tracks, tags) under
 * `cardRef` until {@link FlowEffects.releaseCard} is called.
 */
export interface CardSummary {
  /** Opaque handle of the card read the host keeps; pass it back in {@link ServiceRequest.cardRef}. */
  cardRef: string;
  entryMode: EntryMode;
  /** `001` or `002`; null when the network is not one of the parking networks (the machines refuse such a card). */
  cardType: CardType | null;
  /** At most the first 6 and last 4 digits, e.g. "411111******1111". Safe for the UI and the logs. */
  maskedPan: string;
  /**
   * Keyed hash of the card (e.g. HMAC-SHA-256 of PAN + expiry under a terminal secret), stable across reads of the
   * same card on this terminal, never the PAN or a plain hash of it. Tap-and-go matches entry and exit with it.
   */
  fingerprint: string;
  /** True when a chip card was swiped (fallback rules apply). */
  fallback: boolean;
  /** True when EMV chip data was read (contact or contactless). With `entryMode` 'contact' the capture carries tags. */
  chip: boolean;
}

/** The original transaction a follow-on refers to. */
export interface OriginalRef {
  /** The gateway's `id` of the original; absent only for timeout reversals and voids (never answered). */
  gatewayId?: string;
  /** Our `clientReferenceInformation.transactionId` of the original. */
  transactionId: string;
  service: ServiceName;
}

/** An authorization a meter session's settlement releases ({@link ServiceRequest.alsoReleases}). */
export interface HoldRelease {
  /** The pre-authorization: its transactionId and gateway id. */
  original: OriginalRef & { gatewayId: string };
  /** Its authorized total (increments included), minor units of the request's currency. */
  amountMinor: number;
}

/** An authorization a meter session's settlement captures next ({@link ServiceRequest.alsoCaptures}). */
export interface HoldCapture {
  /** The pre-authorization: its transactionId and gateway id. */
  original: OriginalRef & { gatewayId: string };
  /** The part of the fee it covers, minor units of the request's currency (what its capture asks). */
  amountMinor: number;
  /** Whether its capture carries the pre-authorization's EMV tags (an EMV contact read, spec 001). */
  includeEmvTags: boolean;
}

/** Input of {@link FlowEffects.submit}: one gateway request, described without card data. */
export interface ServiceRequest {
  service: ServiceName;
  /** The exact `clientReferenceInformation.comments` to send (spec 001 comments table). */
  comments: ParkingComments;
  /**
   * Integer minor units of `currency`. Meaning per service: `incremental` the additional amount; `reversal` the
   * authorized total of the authorization (gateway.md §2, never the requested amount); `timeout-reversal` the amount
   * requested by the unanswered original; `avr` 0; voids and `timeout-void` the amount of the original (informative).
   */
  amountMinor: number;
  /** ISO 4217 alpha code. */
  currency: string;
  /** pointOfSaleInformation.catLevel: 2 unattended, 6 attended mobile (spec 001). */
  catLevel: 2 | 6;
  /** Card read to use for card fields (avr, preauth, sale, credit) or EMV tags of a capture/reversal. */
  cardRef?: string;
  /** The original of a follow-on (incremental, reversal, capture, refunds, voids, timeout-*). */
  original?: OriginalRef;
  /**
   * Send `pointOfSaleInformation.emv.tags` of `cardRef` (gateway.md §7: a capture after an EMV contact
   * pre-authorization carries the tags with 95, 9F10, 9F26; a reversal of an original with EMV data carries them).
   */
  includeEmvTags: boolean;
  /**
   * An EMV fallback: `cardRef` is a chip card swiped after its chip failed technically in this transaction. The
   * request says so (`pointOfSaleInformation.emv.fallback` and `fallbackCondition`). Set by the transaction machine
   * only; the host sends no other read of a chip card swiped.
   */
  emvFallback?: true;
  /**
   * Currency conversion (spec 001, "Currency conversion (DCC)"). On a `sale` or `preauth`: the customer's choice after
   * an offer (`1` converted, `3` declined by the customer). On a follow-on of a converted authorization (capture,
   * reversal, timeout reversal, void): the authorization's terms, so that the follow-on uses its rate (spec 001, DCC
   * capture and refund). `amountMinor` and `currency` stay the local price: the host converts for the processor family.
   */
  dcc?: DccSelection;
  /**
   * On a `reversal`: the authorization is given up for good (a meter session's end, a partial approval the machine
   * does not accept, the host's undo of an approval nobody waited for, a tap-and-go hold the entry could not store or
   * whose stay the exit ended), so a refusal that passes (the vocabulary's `refusalPasses`) or a reversal that never
   * left leaves the host a durable follow-up that sends it again later. Absent on a reversal whose refusal the machine
   * answers itself (the undo of a full approval, kept when the undo is refused) and on the tap-and-go expiry watch's
   * own, which its watch sends again (one the host holds back unsent, which no watch sees, gets the follow-up anyway).
   */
  releases?: boolean;
  /**
   * On a `capture`: the fee is taken from this authorization for good (a meter session's end, which has no one left to
   * ask), so a refusal that passes (the vocabulary's `refusalPasses`) or a capture that never left leaves the host a
   * durable follow-up that captures it again — only once nothing of it is unresolved, and no later than the
   * authorization's capture window allows: then the hold is released and the fee recorded for the operator. The
   * machine keeps the hold for it instead of reversing it (released, the fee would be lost).
   */
  capturesFee?: boolean;
  /**
   * On a step of a meter session's settlement (the capture of one of its holds, the sale of a converted hold's fee in
   * the local currency, the reversal of a hold): the session's other authorizations that the machine reverses after
   * this step, whatever its outcome (their amount: the authorized total, as the reversal carries it). Never sent: the
   * host writes the reversal of each as a durable follow-up before this request can reach the gateway, due when
   * the authorization's capture window ends — closed by the machine's own reversal, brought forward by a refusal of
   * it for now, and carried out at the next start when the terminal stopped before (the hold is not left on the
   * customer's card until its window ends).
   */
  alsoReleases?: readonly HoldRelease[];
  /**
   * On a step of a meter session's settlement: the session's other authorizations that the machine captures after this
   * step, whatever its outcome (a fee spread over two holds: the part each covers). Never sent: the host writes the
   * capture of each as a durable follow-up before this request can reach the gateway — closed by the first capture
   * or reversal of that authorization the journal shows (the machine's own, normally), and carried out at the next
   * start when the terminal stopped before: that part of the fee is not lost with the process.
   */
  alsoCaptures?: readonly HoldCapture[];
  /**
   * On a `capture`: what the customer owes for what it settles (a tap-and-go exit's fee; its capture asks less when
   * its increment was not approved and it captures what the hold covers, and the gateway may take less than asked).
   * Never sent: when the capture took less, the host records the fee less what it took as a shortfall for the
   * operator, in the transaction of the capture's outcome.
   */
  owedMinor?: number;
  /**
   * On a pay station's `sale`: the ticket it pays (never sent to the gateway); on a tap-and-go exit's sale of a stay
   * that outlasted its hold, that hold's id (the stay's ticket). The host records the ticket's payment by
   * it in the journal database before the sale is sent, and what of it stands follows the sale's journal entry, so that
   * the ticket inserted again is not charged again for a sale that stands (approved, or unanswered and found standing).
   */
  ticket?: string;
}

/**
 * A currency conversion offer as the machines see it (spec 001 DCC offer response; gateway.md §5). Carries no card
 * data. The host only passes an offer on when the terminal can show every element the card networks require.
 */
export interface DccOfferSummary {
  /** The gateway's `id` of the offer answer. */
  offerId: string;
  /** `orderInformation.currencyConversion.reconciliationId` (family A sends it back with the authorization). */
  reconciliationId?: string;
  /** The local price that was offered for conversion, minor units of `localCurrency` (the request's amount). */
  localAmountMinor: number;
  /** ISO 4217 alpha code of the merchant's price. */
  localCurrency: string;
  /** The converted amount, minor units of `billingCurrency`. */
  billingAmountMinor: number;
  /** ISO 4217 alpha code of the card's billing currency; never equal to `localCurrency`. */
  billingCurrency: string;
  /**
   * Exchange rate with the margin included, exactly as the gateway wrote it: units of `billingCurrency` per unit of
   * `localCurrency` (per unit of `billingCurrency` when `exchangeRateInverted`).
   */
  exchangeRate: string;
  exchangeRateInverted: boolean;
  /** Margin over the wholesale rate, percent, as the gateway wrote it. */
  marginRate: string;
  /**
   * When the rate was set, as the authorization and its follow-ons send it (`exchangeRateTimeStamp`): the offer's
   * `exchangeRateTimeUtc` as 14 digits `yyyyMMddHHmmss` in UTC (src/vocabulary/gateway-time.ts). A follow-on of a
   * payment converted by an earlier version repeats what its authorization sent, which may be that ISO 8601 text.
   */
  exchangeRateTimeStamp: string;
  /** `exchangeRateExpirationTimeUtc`: the offer cannot be used after it. */
  expiresAtUtc: string;
  rateId?: string;
  /** The gateway's disclaimer: shown and printed without modification (gateway.md §5). */
  disclaimer: string;
}

/**
 * The customer's currency choice after an offer: `1` pay in the card's currency at the offer's terms, `3` conversion
 * declined by the customer (pay in the local currency). Nothing is set when there was no offer.
 */
export type DccSelection = { indicator: '1'; offer: DccOfferSummary } | { indicator: '3' };

/** Input of {@link FlowEffects.dccOffer}. */
export interface DccOfferInput {
  /** The card read the offer is for (the host sends only the card's BIN, never the PAN). */
  cardRef: string;
  /** The local price, minor units of `currency`. */
  amountMinor: number;
  /** ISO 4217 alpha code. */
  currency: string;
}

/** Classification of a gateway answer (gateway.md §4). */
export type SubmitKind = 'approved' | 'declined' | 'rejected' | 'unknown';

/** Output of {@link FlowEffects.submit}. */
export interface SubmitOutcome {
  /**
   * - `approved`: 201 with an approving status (AUTHORIZED, PARTIAL_AUTHORIZED, PENDING, REVERSED, VOIDED, …);
   * - `declined`: 201 DECLINED (or a risk decline) — money did not move;
   * - `rejected`: 400 — the gateway refused the request itself, money did not move;
   * - `unknown`: no answer, reset after send, 5xx or any undocumented code — money may have moved. The machine then
   *   resolves it itself with a `timeout-reversal` or `timeout-void` through this same effect.
   */
  kind: SubmitKind;
  /** Our `clientReferenceInformation.transactionId`, unique for 180 days, journaled before the request was sent. */
  transactionId: string;
  /** The gateway's `id` of the answer (approved and declined). For `incremental` it is the increment's id. */
  gatewayId?: string;
  /**
   * Minor units. Authorizations (avr, preauth, sale): `authorizedAmount`; `incremental`: the NEW TOTAL authorized
   * (the host always states it: an answer that omitted it counts as the total before plus the increment);
   * capture, refund, credit: the amount processed; reversal: `reversedAmount`.
   */
  authorizedMinor?: number;
  /** True when the gateway approved less than requested (PARTIAL_AUTHORIZED). */
  partial?: boolean;
  /** The issuer's approval code of an approved authorization (`processorInformation.approvalCode`): receipt only. */
  approvalCode?: string;
  /** `errorInformation.reason` / 400 `reason` / 502 reason; never card data. */
  reason?: string;
  /**
   * On `rejected`: the request provably never reached the gateway (it could not be reached, or refused the terminal's
   * credentials unprocessed; the journal holds it resolved `not-sent`) — nothing moved. A reversal that gives its
   * authorization up (`releases`) and never left is sent again by the host's durable follow-up.
   */
  notSent?: boolean;
}

/** Answer of {@link FlowEffects.lookupTicket}. */
export type TicketLookup =
  | {
      found: true;
      ticket: string;
      /** Epoch milliseconds of the entry. */
      enteredAtMs: number;
      /** What the journal holds of the ticket's payments; absent when it was never paid (or nothing of it stands). */
      paid?: TicketPaid;
      /**
       * A payment of the ticket whose outcome is not known yet (a sale whose answer was lost, recovery not done with
       * it): it may have taken the customer's money. The ticket is neither charged again nor counted paid until
       * recovery has decided (DESIGN.md rule 3); `paid` then says what stands.
       */
      paymentUnresolved?: true;
    }
  | { found: false; ticket: string };

/**
 * The payments of a ticket that stand (neither voided nor refunded in full by the operator): their sum, minor units
 * of the terminal's currency, and the time of the last of them (epoch milliseconds, the pay station's clock).
 */
export interface TicketPaid {
  standingMinor: number;
  lastPaidAtMs: number;
}

/** A transaction the operator may refund or void, as the host's journal knows it. */
export interface OriginalTransaction {
  transactionId: string;
  /**
   * The gateway's `id` of it, the path of its refunds and voids (gateway.md §7); absent when its answer was lost and
   * recovery found it standing (its timeout void refused NOT_VOIDABLE): the terminal cannot refund or void it then.
   */
  gatewayId?: string;
  /** Only these can be refunded or voided. */
  service: 'capture' | 'sale' | 'refund-capture' | 'refund-payment' | 'credit';
  /** Amount of the original, minor units. */
  amountMinor: number;
  currency: string;
  /** Sum already refunded (captures and sales), minor units. */
  refundedMinor: number;
  /**
   * True when a void of it went through (approved, or finished by recovery's timeout void): its money is given back,
   * and it is neither refunded nor voided again.
   */
  voided: boolean;
  /**
   * True while a void of it awaits its outcome (being sent, or its answer lost until recovery resolves it): it may yet
   * be refused, so nothing is given back yet — and nothing else is sent for it (neither a refund nor a second void)
   * until the outcome is known.
   */
  voidPending: boolean;
  /**
   * True while a void is possible: before the merchant's settlement cut-off (spec 001), not voided already and no void
   * of it awaiting its outcome.
   */
  voidable: boolean;
  /**
   * For a capture: the authorization it captured. Voiding a capture leaves the hold in place (gateway.md §7), so the
   * operator flow reverses it with `authorizedMinor` once the void is approved.
   */
  authorization?: { gatewayId: string; transactionId: string; authorizedMinor: number };
  /** Card read kept for the original when its follow-ons need EMV tags; absent otherwise. */
  cardRef?: string;
}

/** An open authorization hold (tap-and-go entry) that the host persists and watches. */
export interface HoldRecord {
  /** Equal to the pre-authorization's transactionId. */
  holdId: string;
  /** {@link CardSummary.fingerprint} of the card that entered. */
  fingerprint: string;
  maskedPan: string;
  /** The pre-authorization (capture and reversal go to its gatewayId). */
  gatewayId: string;
  transactionId: string;
  /** Authorized total, minor units (grows with incrementals). */
  authorizedMinor: number;
  currency: string;
  /** Card read kept for the follow-ons (EMV tags after a contact read); the host wipes it on {@link FlowEffects.closeHold}. */
  cardRef: string;
  /** True when the capture and reversal must carry the EMV tags (EMV contact pre-authorization). */
  includeEmvTags: boolean;
  /** Epoch milliseconds of the entry. */
  enteredAtMs: number;
  /**
   * Epoch milliseconds after which the hold is reversed automatically (tariff.tapAndGoMaxStayMinutes). The host runs
   * `holdExpiryMachine` for it (src/flows/hold.ts), restarted from its store after a restart.
   */
  expiresAtMs: number;
}

/**
 * What the exit finds for a card ({@link FlowEffects.claimHold}):
 * - `claimed`: its open hold, taken out of expiry watch for this exit;
 * - `settling`: it has an open hold that someone else is settling — the expiry watch's reversal under way, a reversal,
 *   capture or increment whose outcome is unknown until recovery resolves it, another exit — or whose release was
 *   decided already (its reversal refused: the stay was paid by phone, owed nothing, or ended; the expiry watch
 *   reverses it again), which the exit must neither capture nor reverse;
 * - `captured`: no open hold, but one of its holds was captured within the `recentCaptureMs` asked for (a paid exit
 *   whose gate a restart kept shut): nothing is charged again; `capture` is the journal's record of the capture that
 *   paid it (as {@link FlowEffects.findTransaction} reads one: amount, ids), for the screen and the receipt — absent
 *   when the journal does not hold it;
 * - `paid-by-link`: the stay of its last hold was paid by phone (its link's payment counted, journaled with it): it is
 *   never charged again. `claimed`: the hold is open and taken out of expiry watch for this exit, to be released in
 *   full (its authorized total, increments included); otherwise someone else releases it (or did, within
 *   `recentCaptureMs`), and the exit only opens. `amountMinor`: what the link took, for the screen;
 * - `outstayed`: the hold of its last stay was released at the end of the maximum stay while its car was inside, and
 *   nothing has paid that stay yet (nor is a payment of it unresolved: then `settling`; one paid within
 *   `recentCaptureMs` is `captured`, without `capture`): the stay, from its entry, is owed and no hold covers it — the
 *   exit charges it by a sale on the card presented;
 * - `none`: no entry with this card.
 */
export type HoldClaim =
  | { kind: 'claimed'; hold: HoldRecord }
  | { kind: 'settling'; holdId: string; phonePaymentInDoubt?: string }
  | { kind: 'captured'; hold: HoldRecord; capturedAtMs: number; capture?: OriginalTransaction }
  | { kind: 'paid-by-link'; hold: HoldRecord; claimed: boolean; amountMinor: number }
  | { kind: 'outstayed'; hold: HoldRecord }
  | { kind: 'none' };

/**
 * What the entry finds for a card ({@link FlowEffects.stayAtEntry}), by the rule the exit's {@link HoldClaim} follows:
 * - `open`: the card's stay is open — the hold its exit would claim now (a car that entered with it is inside);
 * - `settling`: its open hold is being settled by someone else (the expiry watch's reversal, a follow-on whose outcome
 *   recovery has yet to resolve, its release decided, another exit), which its exit would not claim either;
 * - `none`: no open hold.
 */
export type EntryStay =
  | { kind: 'open'; holdId: string; enteredAtMs: number }
  | { kind: 'settling'; holdId: string }
  | { kind: 'none' };

/** How a claimed hold ended. `returned`: the exit failed, the hold goes back under expiry watch. */
export type HoldResolution = 'captured' | 'reversed' | 'returned';

/** What a receipt says; the host formats it (money formatting, locale) and prints and/or shows it. */
export interface ReceiptData {
  /** The service that moved the money. */
  service: ServiceName;
  comments: ParkingComments;
  amountMinor: number;
  currency: string;
  maskedPan?: string;
  transactionId: string;
  gatewayId?: string;
  /** Epoch milliseconds. */
  atMs: number;
  /** Model-specific lines already worded, e.g. ticket number, stay, paid until. No card data. */
  lines: { label: string; value: string }[];
}

/** Why a payment link is asked for: the fee due now (pay by phone), or an amount owed after a failed capture. */
export type LinkPurpose = 'fee' | 'pay-later';

/** Input of {@link FlowEffects.createLink}: a fixed-price link for a fee (issue 14, pay by phone). No personal data. */
export interface LinkRequest {
  /**
   * The ticket or session reference (the host makes the purchase number of it and the terminal's id, free of
   * card-number shapes).
   */
  reference: string;
  /** Minor units of `currency`. */
  amountMinor: number;
  currency: string;
  purpose: LinkPurpose;
  /** How long the terminal waits for the payment before it deactivates the link, ms (the host may lengthen it). */
  waitMs: number;
  /**
   * Tap-and-go: the hold whose stay the link charges for, journaled with the link before it is created. A counted
   * payment of the link pays that stay durably: the hold is never charged again (`paid-by-link`).
   */
  holdId?: string;
}

/** A link created and shown: what the screen needs (the QR code's content and the wait's end). */
export interface LinkShown {
  linkId: string;
  /** The hosted payment page: the QR code's content, shown and read out as text. */
  url: string;
  /** The host of `url`, printed under the QR code. */
  domain?: string;
  /** Epoch milliseconds at which the terminal deactivates the link if it was not paid. */
  expiresAtMs: number;
}

/** A link paid (journaled): how its wait ended, or how its create did when the payment came first. */
export interface LinkPaid {
  kind: 'paid';
  linkId: string;
  /** The gateway's id of the payment on the hosted page. */ paymentId: string;
}

/** How the wait for a link ended. */
export type LinkOutcome =
  | LinkPaid
  | {
      kind: 'closed';
      linkId: string;
      /** `cancelled`, `timeout`, `failed`, or what else closed it (the operator, the gateway). */
      reason: string;
    };

/**
 * A link whose deactivation the gateway has not confirmed (its answer lost, or the link still ACTIVE): it may still be
 * paid, or have been paid with the notification on its way. Nobody is asked for another payment of the same fee until
 * the wait ends paid or the gateway confirms the link INACTIVE (`awaitLink`).
 */
export interface LinkUnconfirmed {
  kind: 'unconfirmed';
  linkId: string;
}

/**
 * Input of {@link FlowEffects.startAltSale}: a redirect-based alternative-method sale of spec 001 for a fee. The
 * `customer` values are personal data: they go into the sale request and nowhere else (never logged, never stored).
 */
export interface AltSaleRequest {
  /** The spec 001 profile (a configured one). */
  profile: number;
  /** The ticket reference (`clientReferenceInformation.code`). */
  reference: string;
  /** Minor units of `currency` (the terminal's: the kiosk offers only methods in its currency). */
  amountMinor: number;
  currency: string;
  customer: Partial<Record<CustomerField, string>>;
}

/** How an alternative-method sale started: PENDING with the page where the customer pays, or not. */
export type AltSaleStarted =
  | {
      kind: 'pending';
      /** The terminal's record of the sale (the journal's `alt_sales` id). */
      saleId: number;
      /** Where the customer pays: shown as a QR code and as text. */
      paymentUrl: string;
    }
  | {
      kind: 'failed';
      /** FAILED at the gateway, refused before sending, or no answer (the operator sees it as unknown). */
      reason: string;
    };

/**
 * Everything the machines ask of the outside world. All promise-returning effects receive an AbortSignal: the signal
 * aborts when the machine leaves the waiting state (customer CANCEL, a reader or gateway timeout of the machine).
 */
export interface FlowEffects {
  /**
   * How much longer than configured the customer is given to read and hear what a screen says: the accessibility
   * factor while the customer has accessibility mode on, else 1 (absent: 1). The result screens (approved, declined,
   * an error, the receipt read out) and the pending sale's QR code stay that much longer (provide.ts).
   */
  waitFactor?(): number;
  /**
   * How long a result screen about to come up stays at most, asked as it comes up with the time it stays otherwise
   * (`resultScreenMs` times {@link waitFactor}), in milliseconds (absent: that time). The host answers a longer time
   * while the screen is read out to a customer in accessibility mode, and ends the screen itself (DONE) once the
   * speech has ended and that time has passed (src/host/result-screen.ts).
   */
  resultScreenMs?(ms: number): number;
  /**
   * Activates the reader and waits for a card. Resolves with a summary; rejects with an error whose `code` is the
   * reader's code (e.g. READER_TIMEOUT, CARD_USE_CONTACT). On abort the host cancels the reader (reader.cancel()) and
   * rejects; a card read that arrives after the abort must be discarded by the host.
   */
  readCard(input: ReadCardInput, signal: AbortSignal): Promise<CardSummary>;
  /**
   * Sends one gateway request. The host journals it (with a fresh transactionId) BEFORE sending and writes the outcome
   * when it returns (DESIGN.md, money safety rule 1). Never resends a money-moving request. Gateway failures are
   * outcomes, not rejections. Who resolves an unanswered request (exactly one party does):
   * - resolved `unknown` (with its transactionId): the MACHINE sends the timeout reversal/void through this same
   *   effect; the host's recovery takes the entry over only if the process stops before that completes;
   * - the promise rejects, or the signal aborts while the request may be out (the machine's `submitTimeout`): the
   *   machine reports the outcome unknown without resolving it, and the HOST's journal recovery resolves the entry.
   */
  submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome>;
  /**
   * Asks the gateway for a currency conversion offer for the card read `cardRef` (spec 001, DCC flow step 1). Resolves
   * null when the card is not eligible, there is no offer, the lookup failed, or the terminal cannot present the offer
   * as the card networks require (gateway.md §5): the payment then continues in the local currency (flow step 2).
   * Moves no money and is not journaled; rejects only on abort.
   */
  dccOffer(input: DccOfferInput, signal: AbortSignal): Promise<DccOfferSummary | null>;
  /** Kiosk: the entry time of a ticket or plate. Rejects only on a storage failure. */
  lookupTicket(input: { ticket: string }, signal: AbortSignal): Promise<TicketLookup>;
  /** Operator mode: the journal's record of a transaction, or null when there is none. */
  findTransaction(input: { transactionId: string }, signal: AbortSignal): Promise<OriginalTransaction | null>;
  /** Tap-and-go: persists an open hold and starts watching its expiry. Resolves once durable. */
  openHold(hold: HoldRecord, signal: AbortSignal): Promise<void>;
  /**
   * Tap-and-go exit: atomically takes the open hold of this fingerprint out of expiry watch (so that the expiry
   * cannot reverse it while the exit settles it) and returns it as `claimed`; a hold being settled otherwise (a
   * reversal, capture or increment of it in flight or its outcome unknown) or whose release was decided already (its
   * reversal refused) is never claimed, and a hold whose stay was paid by phone is claimed only to be released
   * (`paid-by-link`). See {@link HoldClaim} for the other answers;
   * `recentCaptureMs`: how long after its capture a hold still answers `captured`.
   */
  claimHold(input: { fingerprint: string; recentCaptureMs: number }, signal: AbortSignal): Promise<HoldClaim>;
  /**
   * Tap-and-go entry (tariff.tapAndGoOneStayPerCard): the card's open stay, if any, by the exit's rule (see
   * {@link EntryStay}). Claims nothing, moves nothing; rejects when the holds cannot be read.
   */
  stayAtEntry(input: { fingerprint: string }, signal: AbortSignal): Promise<EntryStay>;
  /**
   * Tap-and-go: an entry was refused after its verification (`transactionId`, the AVR: it moved no money) and before
   * any pre-authorization — `CARD_ALREADY_INSIDE`: the card's stay `holdId` is open. Recorded for the operator.
   */
  entryRefused(input: { reason: 'CARD_ALREADY_INSIDE'; holdId: string; transactionId: string }): void;
  /** Tap-and-go: ends a claimed hold (`returned` puts it back under expiry watch with its `authorizedMinor`). */
  closeHold(input: { hold: HoldRecord; resolution: HoldResolution }): void;
  /**
   * Tap-and-go: the exit of `hold` could not price its fee in the hold's currency (the tariff is in the configured
   * currency, changed since the hold was authorized): the hold is released and nothing is charged, so the fee the
   * tariff asks (`feeMinor` of `feeCurrency`, the configured currency) is uncollected — recorded for the operator.
   */
  feeNotComputable(input: { hold: HoldRecord; feeMinor: number; feeCurrency: string }): void;
  /**
   * Tap-and-go: the exit of a stay that outlasted its hold (`outstayed`, see {@link HoldClaim}) charged its fee
   * (`feeMinor`, the hold's currency) by a sale on the card presented — `sold` (its transactionId) or not (`reason`: the
   * sale's outcome; the gate stays shut). Recorded for the operator.
   */
  stayOutstayed(input: {
    hold: HoldRecord;
    feeMinor: number;
    sold: boolean;
    transactionId?: string;
    reason?: string;
  }): void;
  /** The card read is no longer needed by any follow-on: wipe it (DESIGN.md, money safety rule 4). */
  releaseCard(input: { cardRef: string }): void;
  /** A payment, refund, void or reversal completed: print and/or show its receipt. */
  issueReceipt(receipt: ReceiptData): void;
  /**
   * Pay by phone: creates a fixed-price payment link for a fee (journaled before it is sent, created once) and starts
   * waiting for its payment. Resolves with the link to show, or `paid` when its payment was notified before the
   * create's answer came — whatever that answer, even none: the journal holds the link paid (the fee with it), and the
   * customer is told so. Rejects with an error whose `code` says why there is no link to show (LINK_UNAVAILABLE,
   * LINK_REFUSED, LINK_BAD_REQUEST, LINK_PERSONAL_DATA, LINK_BUSY: an earlier link of the reference is not confirmed
   * inactive); nothing is owed then.
   */
  createLink(input: LinkRequest, signal: AbortSignal): Promise<LinkShown | LinkPaid>;
  /**
   * Resolves when the wait for a link is over: paid (journaled), or closed by the terminal (its wait ran out, the
   * operator). An abort only stops listening: the link stays watched by the host until it is closed.
   */
  awaitLink(input: { linkId: string }, signal: AbortSignal): Promise<LinkOutcome>;
  /**
   * The customer cancelled or walked away: the link is deactivated (the intent journaled first). Resolves with how
   * the link ended — `paid` when the payment came first — or `unconfirmed` while the gateway has not confirmed it
   * INACTIVE: the host keeps deactivating it, and `awaitLink` resolves once it is paid or confirmed INACTIVE.
   */
  closeLink(
    input: { linkId: string; reason: 'cancelled' | 'timeout' },
    signal: AbortSignal,
  ): Promise<LinkOutcome | LinkUnconfirmed>;
  /** Pay later: prints the link (its QR code and URL) on the receipt printer for the customer to take. */
  printLink(input: LinkShown & { amountMinor: number; currency: string; reference: string }): void;
  /**
   * Kiosk: sends an alternative-method sale (`AP_SALE`, journaled before it is sent, sent once). Resolves with its
   * payment page when PENDING; its status checks are the host's from then on (spec 001's hourly interval).
   */
  startAltSale(input: AltSaleRequest, signal: AbortSignal): Promise<AltSaleStarted>;
}

/** Epoch-millisecond clock. xstate's `SimulatedClock` satisfies it; the host passes `{ now: Date.now }`. */
export interface FlowClock {
  now(): number;
}

/** Failure of an effect the host did not provide, or of an effect that broke its contract. */
export class FlowEffectError extends Error {
  override readonly name = 'FlowEffectError';
  constructor(
    readonly code: 'EFFECT_NOT_PROVIDED' | 'EFFECT_CONTRACT',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
