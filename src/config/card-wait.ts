import type { Config } from './schema.js';

/** The longest wait one Activate command can ask the card reader for (ViVOtech2: one byte of seconds). */
export const MAX_ACTIVATE_SECONDS = 255;

/**
 * How long the card reader waits for a card after one Activate, seconds. Without accessibility mode it is
 * `reader.activateTimeoutSeconds`. In accessibility mode (WCAG 2.2.1 "Timing adjustable") the customer is given that
 * wait times `customer.accessibilityFactor`, then "Do you need more time?" with its answer time
 * (`customer.moreTimeSeconds` times the factor) while the reader still waits: one activation covers both, up to the
 * longest one Activate can ask for. A yes starts a fresh activation (src/host/inactivity.ts).
 */
export function cardWaitSeconds(config: Pick<Config, 'reader' | 'customer'>, accessible: boolean): number {
  if (!accessible) return config.reader.activateTimeoutSeconds;
  const factor = config.customer.accessibilityFactor;
  const seconds = (config.reader.activateTimeoutSeconds + config.customer.moreTimeSeconds) * factor;
  return Math.min(MAX_ACTIVATE_SECONDS, Math.ceil(seconds));
}
