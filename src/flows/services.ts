import type { ParkingComments, ServiceName } from './effects.js';
import type { FlowSettings } from './settings.js';

/**
 * The comments value of each service (spec 001, "Card-present parking", values of
 * clientReferenceInformation.comments). A capture's value depends on the amount: below the authorized amount it is
 * "Parking Capture Less Than Auth", and the gateway then reverses the rest itself (gateway.md §7).
 */
export function commentsFor(
  service: ServiceName,
  settings: Pick<FlowSettings, 'preauthComments'>,
  capture?: { amountMinor: number; authorizedMinor: number },
): ParkingComments {
  switch (service) {
    case 'avr':
      return 'Parking AVR';
    case 'preauth':
      return settings.preauthComments;
    case 'incremental':
      return 'Parking Incremental Auth';
    case 'reversal':
      return 'REVERSAL';
    case 'timeout-reversal':
      return 'REVERSAL Timeout';
    case 'capture':
      return capture !== undefined && capture.amountMinor < capture.authorizedMinor
        ? 'Parking Capture Less Than Auth'
        : 'Parking Capture';
    case 'sale':
      return 'Parking Sale';
    case 'refund-capture':
      return 'REFUND Capture';
    case 'refund-payment':
      return 'REFUND Payment';
    case 'credit':
      return 'Parking Standalone Credit';
    case 'void-capture':
      return 'VOID Capture';
    case 'void-payment':
      return 'VOID Payment';
    case 'void-refund':
      return 'VOID Refund';
    case 'void-credit':
      return 'VOID Credit';
    case 'timeout-void':
      return 'VOID Timeout';
  }
}

/**
 * How an unanswered request is resolved (gateway.md §2, "Timeouts"): authorizations by a timeout reversal, captures,
 * sales, refunds and credits by a timeout void. Reversals and voids have no timeout counterpart: an unanswered one is
 * left to the journal's recovery, which retries it (resending a reversal or void cannot move money twice).
 */
export function resolutionFor(service: ServiceName): 'timeout-reversal' | 'timeout-void' | null {
  switch (service) {
    case 'preauth':
    case 'incremental':
      return 'timeout-reversal';
    // A zero-amount account verification holds no funds: an unanswered one needs no reversal.
    case 'avr':
      return null;
    case 'capture':
    case 'sale':
    case 'refund-capture':
    case 'refund-payment':
    case 'credit':
      return 'timeout-void';
    case 'reversal':
    case 'timeout-reversal':
    case 'void-capture':
    case 'void-payment':
    case 'void-refund':
    case 'void-credit':
    case 'timeout-void':
      return null;
  }
}

/**
 * What undoes an approved original the customer cancelled while it was in flight, or a partial approval the model
 * does not accept: a reversal of an authorization, a void of a sale or credit.
 */
export function compensationFor(service: ServiceName): 'reversal' | 'void-payment' | 'void-credit' | null {
  switch (service) {
    case 'avr':
    case 'preauth':
      return 'reversal';
    case 'sale':
      return 'void-payment';
    case 'credit':
      return 'void-credit';
    case 'incremental':
    case 'reversal':
    case 'timeout-reversal':
    case 'capture':
    case 'refund-capture':
    case 'refund-payment':
    case 'void-capture':
    case 'void-payment':
    case 'void-refund':
    case 'void-credit':
    case 'timeout-void':
      return null;
  }
}
