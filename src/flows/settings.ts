import { cardWaitSeconds, resolveAltProfile, type Config, type CustomerField } from '../config/index.js';
import type { CardType } from './effects.js';
import type { TariffConfig } from './tariff.js';

/** Delays of the machines, milliseconds. Each is a named xstate delay; the host may override it with `provide`. */
export interface FlowTiming {
  /**
   * `readTimeout`: how long a machine waits for a card before it gives up and cancels the read. A backstop above the
   * reader's own activate timeout: the longest activation the host asks for (`cardWaitSeconds` in accessibility mode,
   * src/config/card-wait.ts) + reader.commandTimeoutMs.
   */
  readTimeoutMs: number;
  /**
   * `submitTimeout`: how long a machine waits for a gateway outcome before it treats it as unknown. A backstop above
   * the gateway client's own timeouts and retries.
   */
  submitTimeoutMs: number;
  /**
   * `resolutionDelay` for authorizations: wait before the timeout reversal of an unanswered authorization
   * (gateway.md §2: 60 s after the original; counted from the unknown outcome, so always at least that).
   */
  timeoutReversalDelayMs: number;
  /** `resolutionRetry`: wait between attempts of a timeout reversal/void that did not succeed. */
  resolutionRetryMs: number;
  /** Attempts of a timeout reversal/void before the machine leaves it to the journal's recovery. */
  maxResolutionAttempts: number;
  /** `resultScreen`: how long the approved/declined/error screens stay before the machine returns to idle. */
  resultScreenMs: number;
  /**
   * How long before its expiry (`exchangeRateExpirationTimeUtc`) a DCC offer stops being chosen on screen: a converted
   * authorization must reach the gateway while its offer holds, or the gateway refuses it. Past that point the
   * transaction asks for a fresh offer (`offerChoosableForMs`, src/flows/dcc.ts).
   */
  dccOfferMarginMs: number;
}

/** Everything the machines read from the configuration, resolved once by the host. */
export interface FlowSettings {
  /** ISO 4217 alpha code of every amount. */
  currency: string;
  /** pointOfSaleInformation.catLevel: 2 unattended (kiosk, meter, tap-and-go), 6 attended mobile (spec 001). */
  catLevel: 2 | 6;
  tariff: TariffConfig;
  /** The pre-authorization comments: spec 001 spells it both ways (table vs required-field list). */
  preauthComments: 'Parking Auth' | 'Parking Authorization';
  /** Meter: extend with an incremental authorization (else with a new pre-authorization). */
  allowIncremental: boolean;
  /** Card types whose network accepts incremental authorizations. */
  incrementalCardTypes: CardType[];
  /** `captureWindow`: meter pre-authorization left uncaptured this long is reversed automatically, ms. */
  captureWindowMs: number;
  /** Tap-and-go: an open hold is reversed this long after the entry, ms. */
  tapAndGoMaxStayMs: number;
  /** Tap-and-go: amount pre-authorized at the entry, minor units. */
  tapAndGoHoldMinor: number;
  /**
   * Tap-and-go anti-passback (config tariff.tapAndGoOneStayPerCard): a card whose stay is open is refused entry,
   * before any pre-authorization; false lets one card enter for several vehicles.
   */
  tapAndGoOneStayPerCard: boolean;
  timing: FlowTiming;
  /**
   * Currency conversion (spec 001, DCC): when `enabled`, a sale or pre-authorization of a model that can show the
   * choice asks for an offer after the card read. `processorFamily` decides the authorization fields (A: original*,
   * B: foreign*); the host builds them. `choiceAtCompletion`: the meter asks again at the end of a session whose
   * hold was converted (config `dcc.choiceAtCompletion`; absent: no).
   */
  dcc: { enabled: boolean; processorFamily: 'A' | 'B'; choiceAtCompletion?: boolean };
  /**
   * Pay by phone with a payment link (issue 14): present when this model offers the choice beside the card (config
   * `links.payByPhone`, and the terminal receives link-paid notifications); `waitMs` is the wait for the payment.
   */
  payByPhone?: { waitMs: number };
  /**
   * Pay later: a link for the amount owed when a capture cannot be completed (config `links.payLater`), printed and
   * shown; the terminal waits `waitMs` for its payment (`links.waitSeconds`).
   */
  payLater?: { waitMs: number };
  /**
   * Kiosk: the alternative methods of spec 001 offered beside the card (config `alternativeMethods.profiles`, in
   * button order) — only those whose currency is the terminal's: the fee is never converted.
   */
  altMethods?: AltMethodOffer[];
  /**
   * Attended: whether CREDIT starts a standalone credit (config `attended.standaloneCredit`); false: the machine takes
   * no CREDIT and offers none. Absent: it does (the host admits each one with the operator PIN first).
   */
  standaloneCredit?: boolean;
}

/** An alternative method on the kiosk's payment choice, and what it asks of the customer, in keyboard order. */
export interface AltMethodOffer {
  profile: number;
  label: string;
  fields: readonly CustomerField[];
}

/** The configured alternative methods the kiosk can offer: a sale in the terminal's own currency. */
function altMethodsOf(config: Config): AltMethodOffer[] {
  if (config.terminal.model !== 'kiosk') return [];
  return config.alternativeMethods.profiles
    .map(resolveAltProfile)
    .filter((p) => p.currency === config.terminal.currency)
    .map((p) => ({ profile: p.profile, label: p.label, fields: p.customerFields }));
}

const MINUTE_MS = 60_000;

/** Allowance for the journal's write and the clock difference between terminal and gateway: see dccOfferMarginMs. */
const DCC_CLOCK_ALLOWANCE_MS = 10_000;

/** The flow settings of a validated configuration. */
/**
 * The settings a follow-on is sent with (a tap-and-go hold's increment, capture and reversal; an operator's refund,
 * void and the reversal after a voided capture): in the currency of its original as the journal records it, never the
 * one configured since (`terminal.currency` changed at a restart). The amounts of a follow-on are amounts of its
 * original, and the gateway takes them in its currency only.
 */
export function followOnSettings(settings: FlowSettings, originalCurrency: string): FlowSettings {
  return { ...settings, currency: originalCurrency };
}

export function flowSettingsFromConfig(config: Config): FlowSettings {
  const t = config.gateway.timeouts;
  const r = config.gateway.retry;
  const oneAttempt = t.connectMs + t.headersMs + t.bodyMs;
  return {
    currency: config.terminal.currency,
    catLevel: config.terminal.catLevel ?? (config.terminal.model === 'attended' ? 6 : 2),
    tariff: config.tariff,
    preauthComments: 'Parking Auth',
    allowIncremental: config.tariff.allowIncremental,
    incrementalCardTypes: ['001', '002'],
    captureWindowMs: config.tariff.captureWindowMinutes * MINUTE_MS,
    tapAndGoMaxStayMs: config.tariff.tapAndGoMaxStayMinutes * MINUTE_MS,
    tapAndGoHoldMinor: config.tariff.tapAndGoHoldMinor,
    tapAndGoOneStayPerCard: config.tariff.tapAndGoOneStayPerCard,
    dcc: {
      enabled: config.dcc.enabled,
      processorFamily: config.dcc.processorFamily,
      choiceAtCompletion: config.dcc.choiceAtCompletion,
    },
    ...(config.links.payByPhone.enabled &&
    (config.links.payByPhone.models as string[]).includes(config.terminal.model)
      ? { payByPhone: { waitMs: config.links.payByPhone.waitSeconds * 1_000 } }
      : {}),
    ...(config.links.payLater ? { payLater: { waitMs: config.links.waitSeconds * 1_000 } } : {}),
    ...(altMethodsOf(config).length > 0 ? { altMethods: altMethodsOf(config) } : {}),
    standaloneCredit: config.attended.standaloneCredit,
    timing: {
      readTimeoutMs: cardWaitSeconds(config, true) * 1_000 + config.reader.commandTimeoutMs,
      submitTimeoutMs: oneAttempt * r.maxAttempts + r.maxDelayMs * (r.maxAttempts - 1),
      timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
      resolutionRetryMs: config.journal.resolutionRetryMs,
      maxResolutionAttempts: 3,
      resultScreenMs: 10_000,
      // The time an authorization may take to reach the gateway once chosen: it is sent once, never retried
      // (src/gateway/retry.ts), so one connect timeout; plus the journal's write before it and a difference between
      // the terminal's clock and the gateway's, which dates the offer.
      dccOfferMarginMs: t.connectMs + DCC_CLOCK_ALLOWANCE_MS,
    },
  };
}
