/**
 * What a currency-conversion disclaimer (the offer answer's `disclaimer`, gateway.md §5: shown and printed without
 * modification) is to the terminal, written once: the gateway client takes an offer's disclaimer by it, and the
 * journal keeps with a converted payment's terms only a disclaimer of this shape (src/journal/authorization-data.ts).
 */

import { showsSomething } from './printed-text.js';

/** Longest disclaimer the terminal shows, prints and keeps (a gateway's is a sentence or two). */
export const MAX_DISCLAIMER = 2000;

/**
 * Whether `text` is a disclaimer the terminal can show and keep unchanged: a text of at most {@link MAX_DISCLAIMER}
 * characters that shows as something ({@link showsSomething}). A longer one is not cut (it must not be modified), and
 * one of blanks or control characters only would reach the customer as nothing: either way the offer is not shown.
 */
export function isDisclaimerText(text: unknown): text is string {
  return typeof text === 'string' && text.length <= MAX_DISCLAIMER && showsSomething(text);
}
