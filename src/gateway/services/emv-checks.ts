import {
  bytesToHex,
  decodeTlv,
  flattenTlv,
  hexToBytes,
  isCanonicalHex,
  NEVER_SEND_TAGS,
  TlvError,
} from '../../emv/index.js';
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
  let entries;
  try {
    entries = flattenTlv(decodeTlv(hexToBytes(hex)));
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
  const tags = new Map<string, string>();
  for (const { tag, value } of entries) {
    if (NEVER_SEND_TAGS.has(tag)) {
      // The tag name only: the value is card data and must not reach a log through the error message.
      throw new GatewayInvalidRequestError(
        FIELD,
        'INVALID_DATA',
        `${FIELD} carries tag ${tag}, which is never sent`,
      );
    }
    // One value per tag: with two, the gateway and the checks of this module could each read a different one.
    if (tags.has(tag)) {
      throw new GatewayInvalidRequestError(
        FIELD,
        'INVALID_DATA',
        `${FIELD} carries tag ${tag} more than once`,
      );
    }
    tags.set(tag, bytesToHex(value));
  }
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
