/**
 * What a currency-conversion disclaimer (the offer answer's `disclaimer`, gateway.md §5: shown and printed without
 * modification) is to the terminal, written once: the gateway client takes an offer's disclaimer by it, and the
 * journal keeps with a converted payment's terms only a disclaimer of this shape (src/journal/authorization-data.ts).
 */

/** Longest disclaimer the terminal shows, prints and keeps (a gateway's is a sentence or two). */
export const MAX_DISCLAIMER = 2000;

/**
 * Whether `text` is a disclaimer the terminal can show and keep unchanged: a non-empty text of at most
 * {@link MAX_DISCLAIMER} characters. A longer one is not cut (it must not be modified): the offer is not shown.
 */
export function isDisclaimerText(text: unknown): text is string {
  return typeof text === 'string' && text.length > 0 && text.length <= MAX_DISCLAIMER;
}
