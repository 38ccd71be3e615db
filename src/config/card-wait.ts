import type { Config } from './schema.js';

/** The longest wait one Activate command can ask the card reader for (ViVOtech2: one byte of seconds). */
export const MAX_ACTIVATE_SECONDS = 255;

/**
 * Seconds the reader's activation outlasts the question in accessibility mode: the unanswered question, not the
 * reader, ends the sale (the host cancels it), whatever the delay between the screen and the Activate command.
 */
export const CARD_WAIT_MARGIN_SECONDS = 2;

/**
 * How long the card reader waits for a card after one Activate, seconds. Without accessibility mode it is
 * `reader.activateTimeoutSeconds`. In accessibility mode (WCAG 2.2.1 "Timing adjustable") the customer is given that
 * wait times `customer.accessibilityFactor`, then "Do you need more time?" with its answer time
 * (`customer.moreTimeSeconds` times the factor) while the reader still waits: one activation covers both and
 * {@link CARD_WAIT_MARGIN_SECONDS}, up to the longest one Activate can ask for. A yes starts a fresh activation
 * (src/host/inactivity.ts).
 */
export function cardWaitSeconds(config: Pick<Config, 'reader' | 'customer'>, accessible: boolean): number {
  if (!accessible) return config.reader.activateTimeoutSeconds;
  const factor = config.customer.accessibilityFactor;
  const seconds = (config.reader.activateTimeoutSeconds + config.customer.moreTimeSeconds) * factor;
  return Math.min(MAX_ACTIVATE_SECONDS, Math.ceil(seconds) + CARD_WAIT_MARGIN_SECONDS);
}

/**
 * In accessibility mode, milliseconds after the card is asked for by which the unanswered question has ended the sale:
 * the reader's activation less {@link CARD_WAIT_MARGIN_SECONDS}.
 */
export function cardAnswerByMs(config: Pick<Config, 'reader' | 'customer'>): number {
  return (cardWaitSeconds(config, true) - CARD_WAIT_MARGIN_SECONDS) * 1000;
}
