/**
 * What an issuer's approval code (`processorInformation.approvalCode`, ISO 8583 field 38: six characters) is to the
 * terminal, written once: the gateway client reads an answer's code by it, the journal keeps and the receipt prints
 * only a code of this shape.
 */

/** Printable ASCII without spaces, as an approval code is. */
const APPROVAL_CODE = /^[\x21-\x7e]{1,32}$/;

/** A run of digits as long as the shortest card number: no text with one is kept in a clear column. */
export const CARD_NUMBER_LONG = /\d{12}/;

/**
 * The approval code of an answer as the terminal keeps it: printable ASCII without spaces, at most 32 characters, and
 * no run of digits as long as a card number; undefined otherwise (the receipt leaves the line out rather than the
 * outcome being refused).
 */
export function approvalCodeOf(code: unknown): string | undefined {
  return typeof code === 'string' && APPROVAL_CODE.test(code) && !CARD_NUMBER_LONG.test(code)
    ? code
    : undefined;
}
