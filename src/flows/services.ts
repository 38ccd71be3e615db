import {
  commentsFor as vocabularyComments,
  COMPENSATION,
  timeoutRequestFor,
  type ParkingComments,
  type ServiceName,
} from '../vocabulary/services.js';
import type { FlowSettings } from './settings.js';

/**
 * The service vocabulary as the machines use it: every rule lives in src/vocabulary/services.ts; these adapt it to
 * the machines' settings.
 */

/** The comments value of a service with the configured pre-authorization spelling (spec 001 comments table). */
export function commentsFor(
  service: ServiceName,
  settings: Pick<FlowSettings, 'preauthComments'>,
  capture?: { amountMinor: number; authorizedMinor: number },
): ParkingComments {
  return vocabularyComments(service, {
    preauthComments: settings.preauthComments,
    ...(capture ? { capture } : {}),
  });
}

/**
 * The timeout request a machine sends when its own request went unanswered (gateway.md §2): a timeout reversal of
 * an authorization (a zero-amount verification too) or increment, a timeout void of a capture, sale, refund or credit;
 * null when recovery resolves it through what it refers to (reversals, voids).
 */
export function resolutionFor(service: ServiceName): 'timeout-reversal' | 'timeout-void' | null {
  return timeoutRequestFor(service);
}

/** What undoes an approved original the customer cancelled while it was in flight, or an unwanted partial approval. */
export function compensationFor(service: ServiceName): 'reversal' | 'void-payment' | 'void-credit' | null {
  return COMPENSATION[service];
}
