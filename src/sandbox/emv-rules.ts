/**
 * The sandbox's own copy of the per-network EMV tag table of spec 001 ("Card-present parking", EMV tags), with the
 * per-network value length of reference/emv.md where a tag has one, and the never-send list of reference/gateway.md §3. Kept here as data, separate from the client's table in src/emv, so
 * that a mistake in one table cannot hide on both sides of the wire.
 */
import { bytesToHex, decodeTlv, flattenTlv, hexToBytes, TlvError } from '../emv/index.js';

/** M mandatory, O optional, P prohibited, C conditional (send when present on card and terminal). */
export type TagRule = 'M' | 'O' | 'P' | 'C';

/** Whether the message moves money to (refund, credit) or from (authorization, sale) the cardholder. */
export type EmvContext = 'authorization' | 'refund';

/** A value length in bytes, smallest and largest. */
type LengthRange = readonly [number, number];

interface TableRow {
  tag: string;
  name: string;
  /** Card type `002` (spec 001: N1). */
  n1: TagRule | { authorization: TagRule; refund: TagRule };
  /** Card type `001` (spec 001: N2). */
  n2: TagRule | { authorization: TagRule; refund: TagRule };
  /** The value's length where it differs per network (reference/emv.md), for card type `002` and `001`. */
  lengths?: { n1: LengthRange; n2: LengthRange };
}

/** Spec 001, "EMV tags", row by row. */
export const PARKING_EMV_TABLE: readonly TableRow[] = [
  { tag: '9A', name: 'Transaction Date', n1: 'M', n2: 'M' },
  { tag: '9C', name: 'Transaction Type', n1: 'M', n2: 'M' },
  { tag: '5F2A', name: 'Transaction Currency Code', n1: 'M', n2: 'M' },
  { tag: '9F1A', name: 'Terminal Country Code', n1: 'M', n2: 'M' },
  { tag: '9F02', name: 'Amount Authorized', n1: 'M', n2: 'M' },
  { tag: '9F03', name: 'Amount Other', n1: 'M', n2: 'M' },
  { tag: '5F34', name: 'Application PAN Sequence Number', n1: 'C', n2: 'O' },
  { tag: '9F36', name: 'Application Transaction Counter', n1: 'M', n2: 'M' },
  { tag: '82', name: 'Application Interchange Profile', n1: 'M', n2: 'M' },
  { tag: '84', name: 'Dedicated File Name', n1: 'M', n2: 'M' },
  { tag: '95', name: 'Terminal Verification Results', n1: 'M', n2: 'M' },
  { tag: '9F10', name: 'Issuer Application Data', n1: 'M', n2: 'M' },
  { tag: '9F26', name: 'Application Cryptogram', n1: 'M', n2: 'M' },
  { tag: '9F27', name: 'Cryptogram Information Data', n1: 'M', n2: 'O' },
  { tag: '9F33', name: 'Terminal Capabilities', n1: 'M', n2: 'M' },
  { tag: '9F34', name: 'CVM Results', n1: 'M', n2: 'O' },
  { tag: '9F37', name: 'Unpredictable Number', n1: 'M', n2: 'M' },
  // reference/emv.md: 9F6E is Visa's 4-byte Form Factor Indicator (001) but Mastercard's 5-32-byte Third Party Data
  // (002).
  {
    tag: '9F6E',
    name: 'Form Factor Indicator',
    n1: { authorization: 'O', refund: 'P' },
    n2: 'C',
    lengths: { n1: [5, 32], n2: [4, 4] },
  },
];

/** Tags that must never leave the terminal (reference/gateway.md §3): card data and names. */
export const NEVER_SEND_TAGS: ReadonlySet<string> = new Set([
  '56',
  '57',
  '5A',
  '5F20',
  '5F24',
  '99',
  '9F0B',
  '9F1F',
  '9F20',
]);

/**
 * Fixed value lengths in bytes (reference/emv.md dictionary) for the tags whose length never varies. A map: a decoded
 * tag is a fresh string, a slow key for an object.
 */
const FIXED_LENGTH: ReadonlyMap<string, number> = new Map([
  ['9A', 3],
  ['9C', 1],
  ['5F2A', 2],
  ['9F1A', 2],
  ['9F02', 6],
  ['9F03', 6],
  ['5F34', 1],
  ['9F36', 2],
  ['82', 2],
  ['95', 5],
  ['9F26', 8],
  ['9F27', 1],
  ['9F33', 3],
  ['9F34', 3],
  ['9F37', 4],
]);

/** One decoded primitive tag as the ledger shows it. Values of never-send tags are never kept. */
export interface DecodedTag {
  tag: string;
  /** Upper-case hex of the value, or `"[REDACTED]"` for a tag on the never-send list. */
  value: string;
}

/** The result of decoding `pointOfSaleInformation.emv.tags`. */
export type DecodeResult = { ok: true; tags: DecodedTag[] } | { ok: false; message: string };

/** Decodes the hex TLV string of `emv.tags`; malformed input is a result, never a throw. */
export function decodeEmvTags(hex: string): DecodeResult {
  try {
    if (!/^[0-9A-Fa-f]*$/.test(hex) || hex.length === 0)
      return { ok: false, message: 'emv.tags must be non-empty hex without spaces' };
    const entries = flattenTlv(decodeTlv(hexToBytes(hex)));
    return {
      ok: true,
      tags: entries.map((e) => ({
        tag: e.tag,
        value: NEVER_SEND_TAGS.has(e.tag) ? '[REDACTED]' : bytesToHex(e.value),
      })),
    };
  } catch (e) {
    if (e instanceof TlvError)
      return { ok: false, message: `emv.tags is not valid BER-TLV (${e.code} at ${e.offset})` };
    throw e;
  }
}

/** What the card-present message says about the card and amounts, to check the tags against. */
export interface EmvCheckInput {
  cardType: '001' | '002';
  context: EmvContext;
  /** Amount in minor units that tag 9F02 must carry, when the message states one in the tag's currency. */
  amountMinor?: number;
  /** ISO 4217 numeric code tag 5F2A must carry. */
  currencyNumeric?: string;
  /** Value of `emv.cardSequenceNumber`, when sent. */
  cardSequenceNumber?: string;
  /** Expected tag 9C values for this service (e.g. `00` purchase, `20` refund). */
  transactionTypes?: readonly string[];
}

/** The table's rule of `row` for a card type and a context (`n1` is card type 002's column, `n2` 001's). */
function ruleOf(
  row: (typeof PARKING_EMV_TABLE)[number],
  cardType: '001' | '002',
  context: EmvContext,
): TagRule {
  const cell = cardType === '002' ? row.n1 : row.n2;
  return typeof cell === 'string' ? cell : cell[context];
}

/**
 * The tags the table prohibits for a card type in a context (e.g. 9F6E on a refund of card type 002): what a follow-on
 * that repeats a card's tags rather than a full card-present message must still leave out.
 */
export function prohibitedTags(cardType: '001' | '002', context: EmvContext): string[] {
  return PARKING_EMV_TABLE.filter((row) => ruleOf(row, cardType, context) === 'P').map((row) => row.tag);
}

/** Every rule a tag set breaks, one message per problem; empty when the set is acceptable. */
export function checkEmvTags(tags: readonly DecodedTag[], input: EmvCheckInput): string[] {
  const problems: string[] = [];
  const present = new Map<string, string>();
  for (const t of tags) {
    if (present.has(t.tag)) problems.push(`tag ${t.tag} appears twice`);
    present.set(t.tag, t.value);
  }
  for (const tag of present.keys()) {
    if (NEVER_SEND_TAGS.has(tag)) problems.push(`tag ${tag} must never be sent (card data)`);
  }
  for (const row of PARKING_EMV_TABLE) {
    const rule = ruleOf(row, input.cardType, input.context);
    const value = present.get(row.tag);
    const has = value !== undefined;
    const range = row.lengths && (input.cardType === '002' ? row.lengths.n1 : row.lengths.n2);
    if (range && has && (value.length < range[0] * 2 || value.length > range[1] * 2))
      problems.push(
        `tag ${row.tag} must be ${range[0] === range[1] ? range[0] : `${range[0]}-${range[1]}`} bytes for card type ${input.cardType}`,
      );
    switch (rule) {
      case 'M':
        if (!has) problems.push(`mandatory tag ${row.tag} (${row.name}) is missing`);
        break;
      case 'P':
        if (has) problems.push(`tag ${row.tag} (${row.name}) is prohibited here`);
        break;
      case 'C':
        // Spec 001: send when present on card and terminal. The card sequence number field tells us it is.
        if (row.tag === '5F34' && input.cardSequenceNumber !== undefined && !has)
          problems.push('tag 5F34 is missing while emv.cardSequenceNumber is sent');
        break;
      case 'O':
        break;
    }
  }
  for (const [tag, value] of present) {
    const len = FIXED_LENGTH.get(tag);
    if (len !== undefined && value.length !== len * 2) problems.push(`tag ${tag} must be ${len} bytes`);
  }
  const amount = present.get('9F02');
  if (amount !== undefined && input.amountMinor !== undefined && amount.length === 12) {
    if (!/^\d{12}$/.test(amount)) problems.push('tag 9F02 is not BCD');
    else if (Number(amount) !== input.amountMinor)
      problems.push('tag 9F02 does not equal orderInformation.amountDetails.totalAmount');
  }
  const currency = present.get('5F2A');
  if (currency !== undefined && input.currencyNumeric !== undefined && currency.length === 4) {
    if (currency !== input.currencyNumeric.padStart(4, '0'))
      problems.push('tag 5F2A does not equal orderInformation.amountDetails.currency');
  }
  const psn = present.get('5F34');
  if (psn !== undefined && input.cardSequenceNumber !== undefined) {
    // 5F34 is n2 (BCD): its hex text is its decimal digits.
    if (!/^\d{2}$/.test(psn) || Number(psn) !== Number(input.cardSequenceNumber))
      problems.push('emv.cardSequenceNumber does not equal tag 5F34');
  }
  const type = present.get('9C');
  if (type !== undefined && input.transactionTypes !== undefined && !input.transactionTypes.includes(type))
    problems.push(`tag 9C must be ${input.transactionTypes.join(' or ')} for this service`);
  return problems;
}
