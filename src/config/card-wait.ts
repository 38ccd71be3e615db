import type { Config } from './schema.js';

/** The longest wait one Activate command can ask the card reader for (ViVOtech2: one byte of seconds). */
export const MAX_ACTIVATE_SECONDS = 255;

/**
 * Seconds the reader's activation outlasts the question: the unanswered question, not the reader, ends the sale (the
 * host cancels it), whatever the delay between the screen and the Activate command.
 */
export const CARD_WAIT_MARGIN_SECONDS = 2;

/**
 * How long the card reader waits for a card after one Activate, seconds. WCAG 2.2.1 "Timing adjustable" applies to
 * every customer: the customer is given `reader.activateTimeoutSeconds`, then "Do you need more time?" with its answer
 * time (`customer.moreTimeSeconds`) while the reader still waits, both times `customer.accessibilityFactor` in
 * accessibility mode (times 1 otherwise): one activation covers both and {@link CARD_WAIT_MARGIN_SECONDS}, up to the
 * longest one Activate can ask for. A yes starts a fresh activation (src/host/inactivity.ts).
 */
export function cardWaitSeconds(config: Pick<Config, 'reader' | 'customer'>, accessible: boolean): number {
  const factor = accessible ? config.customer.accessibilityFactor : 1;
  const seconds = (config.reader.activateTimeoutSeconds + config.customer.moreTimeSeconds) * factor;
  return Math.min(MAX_ACTIVATE_SECONDS, Math.ceil(seconds) + CARD_WAIT_MARGIN_SECONDS);
}

/**
 * Milliseconds after the card is asked for by which the unanswered question has ended the sale: the reader's
 * activation ({@link cardWaitSeconds}) less {@link CARD_WAIT_MARGIN_SECONDS}.
 */
export function cardAnswerByMs(config: Pick<Config, 'reader' | 'customer'>, accessible: boolean): number {
  return (cardWaitSeconds(config, accessible) - CARD_WAIT_MARGIN_SECONDS) * 1000;
}
