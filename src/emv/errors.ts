/**
 * The error hierarchy of the EMV boundary (DESIGN.md "Errors"). Callers branch on `code`, never on message text.
 * Messages never contain card data: they name tags, offsets and rules, not values.
 */

/** Stable codes of {@link TlvError}. */
export type TlvErrorCode =
  /** Hex text of odd length or with a character that is neither a hex digit nor whitespace. */
  | 'TLV_BAD_HEX'
  /** The input ends inside a tag (a multi-byte tag whose continuation bytes are missing). */
  | 'TLV_TRUNCATED_TAG'
  /** A tag longer than {@link MAX_TAG_BYTES} bytes. */
  | 'TLV_TAG_TOO_LONG'
  /** The input ends inside a length field (after the tag, or inside an `81`/`82`/`83` form). */
  | 'TLV_TRUNCATED_LENGTH'
  /** A length byte EMV does not allow: the indefinite form `80`, or `84` and above. */
  | 'TLV_BAD_LENGTH'
  /** The declared length runs past the end of the enclosing data (length overflow). */
  | 'TLV_TRUNCATED_VALUE'
  /** Bytes after the last complete object that cannot form one (a lone tag, a tag without its length). */
  | 'TLV_TRAILING_GARBAGE'
  /** Constructed objects nested deeper than `maxDepth`. */
  | 'TLV_TOO_DEEP'
  /** `encodeTlv` was given a node it cannot encode faithfully (bad tag text, value on a constructed tag, ...). */
  | 'TLV_BAD_NODE';

/** Multi-byte tags longer than this are refused (EMV uses at most 3 bytes; ISO 7816 room to spare). */
export const MAX_TAG_BYTES = 4;

/** A malformed BER-TLV input or node. `offset` locates the defect. */
export class TlvError extends Error {
  override readonly name = 'TlvError';
  constructor(
    /** Stable code, see {@link TlvErrorCode}. */
    readonly code: TlvErrorCode,
    message: string,
    /**
     * Byte offset of the defect in the decoded input (for `TLV_BAD_HEX`, the character index in the hex text; for
     * `TLV_BAD_NODE`, -1 since encoding works on nodes, not bytes).
     */
    readonly offset: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Stable codes of {@link EmvValueError}. */
export type EmvValueErrorCode =
  /** The value's length in bytes is outside the dictionary's range for the tag. */
  | 'EMV_BAD_LENGTH'
  /** The value does not match the tag's format (non-BCD digit in `n`, bad padding in `cn`, ...). */
  | 'EMV_BAD_FORMAT'
  /** A date tag (YYMMDD) that is not a calendar date. */
  | 'EMV_BAD_DATE'
  /** The tag is not in the dictionary. */
  | 'EMV_UNKNOWN_TAG';

/** A data object whose value breaks the dictionary's rules; names the tag, never shows the value. */
export class EmvValueError extends Error {
  override readonly name = 'EmvValueError';
  constructor(
    readonly code: EmvValueErrorCode,
    /** Upper-case hex tag. */
    readonly tag: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Stable codes of {@link CardDataError}. */
export type CardDataErrorCode =
  /** Track or tag 57 data that does not follow ISO 7813 / EMV layout (missing separator, bad characters...). */
  | 'CARD_BAD_TRACK'
  /** The track's LRC character does not match its content. */
  | 'CARD_BAD_LRC'
  /** A PAN that is not 12–19 digits. */
  | 'CARD_BAD_PAN'
  /** An expiry that is not YYMM with a month 01–12. */
  | 'CARD_BAD_EXPIRY'
  /** A service code that is not three digits. */
  | 'CARD_BAD_SERVICE_CODE';

/** Malformed card data (track 1, track 2, tag 57). The message never contains the data itself. */
export class CardDataError extends Error {
  override readonly name = 'CardDataError';
  constructor(
    readonly code: CardDataErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
