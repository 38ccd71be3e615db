import { isCanonicalHex, NEVER_SEND_TAGS, TlvError, visitTlvPrimitives } from '../../emv/index.js';
import { GatewayInvalidRequestError } from '../errors.js';

/**
 * Tags that must never leave the terminal in `pointOfSaleInformation.emv.tags` (reference/gateway.md §3): the list
 * of src/emv, which the tag-set builder also applies; checked again here, at the last point before the wire.
 */
export { NEVER_SEND_TAGS };

/** Tags a capture or credit after an EMV contact read must carry (reference/gateway.md §7). */
export const CONTACT_FOLLOW_ON_TAGS: readonly string[] = ['95', '9F10', '9F26'];

const FIELD = 'pointOfSaleInformation.emv.tags';

/**
 * Decodes the hex TLV string of `emv.tags` and returns its primitive tags (upper-case hex tag → upper-case hex
 * value). Refuses, with a typed error naming the field, anything malformed, any tag of {@link NEVER_SEND_TAGS}, and
 * a tag that occurs twice (templates read flat): the check sits in the client so that no builder, caller or
 * configuration can send card data in this field, nor two values of one tag.
 */
export function inspectEmvTags(hex: string): Map<string, string> {
  if (!isCanonicalHex(hex)) {
    throw new GatewayInvalidRequestError(FIELD, 'INVALID_DATA', `${FIELD} is not an even-length hex string`);
  }
  // Canonical hex: two characters per byte, so each value's hex is the matching slice of the text (upper-cased).
  const upper = hex.toUpperCase();
  const tags = new Map<string, string>();
  // The first tag refused, in wire order; thrown once the whole field has decoded, so that malformed BER-TLV is
  // reported as such wherever it lies.
  let refused: GatewayInvalidRequestError | undefined;
  try {
    visitTlvPrimitives(Buffer.from(hex, 'hex'), (tag, start, end) => {
      if (refused !== undefined) return;
      if (NEVER_SEND_TAGS.has(tag)) {
        // The tag name only: the value is card data and must not reach a log through the error message.
        refused = new GatewayInvalidRequestError(
          FIELD,
          'INVALID_DATA',
          `${FIELD} carries tag ${tag}, which is never sent`,
        );
      } else if (tags.has(tag)) {
        // One value per tag: with two, the gateway and the checks of this module could each read a different one.
        refused = new GatewayInvalidRequestError(
          FIELD,
          'INVALID_DATA',
          `${FIELD} carries tag ${tag} more than once`,
        );
      } else tags.set(tag, upper.slice(2 * start, 2 * end));
    });
  } catch (e) {
    // The decoder's code and offset only; no byte of the field (in a misaligned read the decoder's "tag" and "length"
    // are bytes of a value, which is why its own messages name none either: tlv.ts).
    if (!(e instanceof TlvError)) throw e;
    throw new GatewayInvalidRequestError(
      FIELD,
      'INVALID_DATA',
      `${FIELD} is not valid BER-TLV (${e.code} at offset ${e.offset})`,
    );
  }
  if (refused !== undefined) throw refused;
  return tags;
}

/** Throws when one of `required` is absent from the inspected tags. */
export function requireTags(
  tags: ReadonlyMap<string, string>,
  required: readonly string[],
  why: string,
): void {
  const missing = required.filter((t) => !tags.has(t));
  if (missing.length > 0) {
    throw new GatewayInvalidRequestError(
      FIELD,
      'INVALID_DATA',
      `${FIELD} lacks ${missing.join(', ')} (${why})`,
    );
  }
}

/** Throws when `tag` is present (a prohibited tag for this network and service). */
export function prohibitTag(tags: ReadonlyMap<string, string>, tag: string, why: string): void {
  if (tags.has(tag)) {
    throw new GatewayInvalidRequestError(FIELD, 'INVALID_DATA', `${FIELD} must not carry ${tag} (${why})`);
  }
}
