/**
 * The tag-set builder: from the reader's TLVs and the transaction context, the `pointOfSaleInformation.emv.tags`
 * hex of one gateway message and its `cardSequenceNumber`, following spec 001 "Card-present parking" → "EMV tags"
 * (the table in networks.ts) and gateway.md §3 (the never-send list). Pure: no I/O, randomness injected.
 */
import { randomBytes } from 'node:crypto';
import { bcdToDigits, digitsToBcd, isValidYymmdd, validateTagValue } from './dictionary.js';
import { EmvValueError } from './errors.js';
import { bytesToHex, hexToBytes } from './hex.js';
import {
  NETWORK_BY_CARD_TYPE,
  NETWORK_TAG_TABLE,
  NEVER_SEND_TAGS,
  presenceOf,
  type CardType,
  type NetworkName,
  type Presence,
  type TagSetService,
} from './networks.js';
import { encodeTlv, type TlvNode } from './tlv.js';

/** The transaction facts the terminal itself contributes to the tag set; they must equal the message's JSON fields. */
export interface TagSetContext {
  /** `paymentInformation.card.type`: `001` (N2) or `002` (N1). */
  cardType: CardType;
  /** The gateway service the tags are for; the 9F6E rule of N1 depends on it. */
  service: TagSetService;
  /** 9F02: `orderInformation.amountDetails.totalAmount` in minor units; integer 0 – 999 999 999 999. */
  amountMinor: number;
  /** 9F03 in minor units (0 when there is none); integer 0 – 999 999 999 999. */
  otherAmountMinor: number;
  /** 5F2A: ISO 4217 numeric code of `orderInformation.amountDetails.currency`, three digits, e.g. `"826"`. */
  currencyNumeric: string;
  /** 9F1A: ISO 3166 numeric country code of the terminal, three digits, e.g. `"826"`. */
  countryNumeric: string;
  /** 9A: YYMMDD, the date part of `merchantInformation.transactionLocalDateTime`. */
  transactionDate: string;
  /** 9C: `00` goods and services, `20` refund (refund and credit services), `30` balance inquiry. */
  transactionType: '00' | '20' | '30';
  /** How the card was read. A swipe carries no EMV data: building a tag set for it is an error. */
  entryMode: 'contact' | 'contactless' | 'swiped' | 'msd';
  /**
   * 9F33 as 6 hex digits. Default: the reader's 9F33 when it sent one, else {@link DEFAULT_TERMINAL_CAPABILITIES}
   * for the entry mode. When both this and the reader's 9F33 are given they must agree.
   */
  terminalCapabilities?: string;
  /**
   * 9F35 as 2 digits (e.g. `"25"` unattended, merchant-operated, online only). Checked against the reader's 9F35
   * when both exist; spec 001's table does not list 9F35, so it is not emitted.
   */
  terminalType?: string;
  /** CSPRNG for 9F37 when the reader gave none; must return exactly `n` bytes. Default `crypto.randomBytes`. */
  random?: (n: number) => Uint8Array;
}

/** Why a tag the reader supplied is not in the tag set. */
export type DropReason = 'prohibited' | 'never-send' | 'not-in-table';

/** The result of {@link buildTagSet}. */
export interface TagSet {
  /** `pointOfSaleInformation.emv.tags`: the tags below as one flat BER-TLV list, upper-case hex. */
  tagsHex: string;
  /** The same tags in spec 001 table order, values as upper-case hex. */
  tags: Array<{ tag: string; value: string }>;
  /** `pointOfSaleInformation.emv.cardSequenceNumber`: the digits of 5F34, present exactly when the chip gave 5F34. */
  cardSequenceNumber?: string;
  /** Reader tags left out, and why (tags only, never values). */
  dropped: Array<{ tag: string; why: DropReason }>;
}

/** Stable codes of {@link TagSetError}. */
export type TagSetErrorCode =
  /** A tag the network marks M is neither on the card/reader nor terminal-sourced. */
  | 'TAG_MISSING'
  /** A value that breaks the dictionary (length, BCD, date), or a context field that cannot become its tag. */
  | 'TAG_INVALID'
  /** The reader's value of a terminal-sourced tag differs from the context (the cryptogram covers the reader's). */
  | 'TAG_MISMATCH'
  /** The reader supplied the same tag twice with different values. */
  | 'TAG_DUPLICATE'
  /** The service and transaction type (9C) contradict each other. */
  | 'SERVICE_MISMATCH'
  /** A swiped card carries no EMV data; the message sends trackData instead. */
  | 'NOT_EMV';

/** A tag set that cannot be built. Names the tag, the network and the rule; never carries a value. */
export class TagSetError extends Error {
  override readonly name = 'TagSetError';
  constructor(
    readonly code: TagSetErrorCode,
    /** Upper-case hex tag concerned (`""` when the error is about the whole set). */
    readonly tag: string,
    /** Network of the card type: N1 (`002`) or N2 (`001`). */
    readonly network: NetworkName,
    /** The rule broken, citing its source. */
    readonly rule: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * 9F33 when neither the context nor the reader gives one (EMV Book 4, Annex A2). Byte 1 card data input: contact
 * modes `60` = magnetic stripe + IC with contacts; contactless-only gates `00` (contactless is not a 9F33 bit).
 * Byte 2 CVM: `08` = no CVM required (unattended parking takes no PIN or signature). Byte 3 security: `C8` = SDA, DDA,
 * CDA.
 */
export const DEFAULT_TERMINAL_CAPABILITIES: Readonly<Record<TagSetContext['entryMode'], string>> = {
  contact: '6008C8',
  swiped: '6008C8',
  contactless: '0008C8',
  msd: '0008C8',
};

const MAX_N12 = 999_999_999_999;

/** The tags of spec 001's table: a reader tag outside it is dropped. */
const TABLE_TAGS: ReadonlySet<string> = new Set(NETWORK_TAG_TABLE.map((r) => r.tag));

/** Builds the tag set; see {@link TagSetContext} and {@link TagSet}. Throws {@link TagSetError} only. */
export function buildTagSet(
  readerTlvs: ReadonlyArray<{ tag: string; value: Uint8Array }>,
  ctx: TagSetContext,
): TagSet {
  const network = NETWORK_BY_CARD_TYPE[ctx.cardType];
  const fail = (
    code: TagSetErrorCode,
    tag: string,
    rule: string,
    message: string,
    cause?: unknown,
  ): never => {
    throw new TagSetError(code, tag, network, rule, message, cause === undefined ? undefined : { cause });
  };

  if (ctx.entryMode === 'swiped')
    fail('NOT_EMV', '', 'gateway.md §3: a swipe sends trackData', 'a swiped card carries no EMV tags');
  const refundLike = ctx.service === 'refund' || ctx.service === 'credit';
  if (refundLike !== (ctx.transactionType === '20'))
    fail(
      'SERVICE_MISMATCH',
      '9C',
      'reference/emv.md: 9C 20 is a refund',
      `service ${ctx.service} cannot carry transaction type ${ctx.transactionType}`,
    );

  // Reader tags, de-duplicated; never-send tags are dropped before anything can look at them.
  const dropped: TagSet['dropped'] = [];
  const fromReader = new Map<string, Uint8Array>();
  for (const { tag, value } of readerTlvs) {
    const t = tag.toUpperCase();
    if (NEVER_SEND_TAGS.has(t)) {
      if (!dropped.some((d) => d.tag === t)) dropped.push({ tag: t, why: 'never-send' });
      continue;
    }
    const seen = fromReader.get(t);
    if (seen !== undefined && bytesToHex(seen) !== bytesToHex(value))
      fail('TAG_DUPLICATE', t, 'one value per tag', `tag ${t} was read twice with different values`);
    fromReader.set(t, value);
  }
  for (const t of fromReader.keys()) if (!TABLE_TAGS.has(t)) dropped.push({ tag: t, why: 'not-in-table' });

  const terminal = terminalValues(ctx, fromReader, fail);

  const tags: TagSet['tags'] = [];
  const nodes: TlvNode[] = [];
  for (const row of NETWORK_TAG_TABLE) {
    const presence: Presence = presenceOf(row, ctx.cardType, ctx.service);
    const own = terminal.get(row.tag);
    const read = fromReader.get(row.tag);
    if (own !== undefined && read !== undefined && bytesToHex(own) !== bytesToHex(read))
      fail(
        'TAG_MISMATCH',
        row.tag,
        `the ${row.tag} the card saw must equal the message's field`,
        `tag ${row.tag} from the reader differs from the transaction's`,
      );
    const value = own ?? read;
    switch (presence) {
      case 'P':
        if (read !== undefined) dropped.push({ tag: row.tag, why: 'prohibited' });
        continue;
      case 'M':
        if (value === undefined)
          fail('TAG_MISSING', row.tag, tableRule(row, presence, ctx), `mandatory tag ${row.tag} is missing`);
        break;
      case 'O':
      case 'C':
        if (value === undefined) continue;
        break;
    }
    if (value === undefined) continue;
    try {
      validateTagValue(row.tag, value);
    } catch (e) {
      if (e instanceof EmvValueError)
        fail('TAG_INVALID', row.tag, tableRule(row, presence, ctx), e.message, e);
      throw e;
    }
    // Per-network value lengths stricter than the dictionary (the table's `lengths`: 9F6E).
    const range = row.lengths?.[ctx.cardType];
    if (range && (value.length < range[0] || value.length > range[1]))
      fail(
        'TAG_INVALID',
        row.tag,
        `reference/emv.md: ${row.tag} is ${range[0]}-${range[1]} bytes for card type ${ctx.cardType}`,
        `tag ${row.tag} must be ${range[0]}-${range[1]} bytes for ${network}, got ${value.length}`,
      );
    tags.push({ tag: row.tag, value: bytesToHex(value) });
    nodes.push({ tag: row.tag, length: value.length, value });
  }

  const result: TagSet = { tagsHex: bytesToHex(encodeTlv(nodes)), tags, dropped };
  // Spec 001: cardSequenceNumber is required when tag 5F34 is on the chip; gateway.md §3: it is 5F34's value.
  const psn = fromReader.get('5F34');
  if (psn !== undefined) {
    const digits = bcdToDigits(psn);
    if (digits === undefined || psn.length !== 1)
      fail('TAG_INVALID', '5F34', 'reference/emv.md: 5F34 is n2', 'tag 5F34 is not two BCD digits');
    else result.cardSequenceNumber = digits;
  }
  return result;
}

/** The table's rule a tag broke, for its error (spelled out only then: it would cost more than the tag's checks). */
function tableRule(row: (typeof NETWORK_TAG_TABLE)[number], presence: Presence, ctx: TagSetContext): string {
  return `spec 001 EMV tags: ${row.tag} (${row.element}) is ${presence} for ${NETWORK_BY_CARD_TYPE[ctx.cardType]} (card type ${ctx.cardType}) in ${ctx.service}`;
}

/** The terminal-sourced tags, from the context (validated here, so that a bad context names its tag). */
function terminalValues(
  ctx: TagSetContext,
  fromReader: ReadonlyMap<string, Uint8Array>,
  fail: (code: TagSetErrorCode, tag: string, rule: string, message: string) => never,
): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const amount = (tag: string, minor: number, field: string): void => {
    if (!Number.isSafeInteger(minor) || minor < 0 || minor > MAX_N12)
      fail(
        'TAG_INVALID',
        tag,
        'reference/emv.md: n12',
        `${field} must be an integer 0-${MAX_N12} minor units`,
      );
    out.set(tag, digitsToBcd(String(minor), 6));
  };
  amount('9F02', ctx.amountMinor, 'amountMinor');
  amount('9F03', ctx.otherAmountMinor, 'otherAmountMinor');
  const numeric3 = (tag: string, value: string, field: string): void => {
    if (!/^\d{3}$/.test(value))
      fail('TAG_INVALID', tag, 'reference/emv.md: n3', `${field} must be three digits`);
    out.set(tag, digitsToBcd(value, 2));
  };
  numeric3('5F2A', ctx.currencyNumeric, 'currencyNumeric');
  numeric3('9F1A', ctx.countryNumeric, 'countryNumeric');
  if (!isValidYymmdd(ctx.transactionDate))
    fail(
      'TAG_INVALID',
      '9A',
      'reference/emv.md: 9A is YYMMDD',
      'transactionDate must be a valid YYMMDD date',
    );
  out.set('9A', digitsToBcd(ctx.transactionDate, 3));
  out.set('9C', digitsToBcd(ctx.transactionType, 1));

  if (ctx.terminalCapabilities !== undefined) {
    if (!/^[0-9A-Fa-f]{6}$/.test(ctx.terminalCapabilities))
      fail(
        'TAG_INVALID',
        '9F33',
        'reference/emv.md: 9F33 is b3',
        'terminalCapabilities must be 6 hex digits',
      );
    out.set('9F33', hexToBytes(ctx.terminalCapabilities));
  } else if (!fromReader.has('9F33')) {
    out.set('9F33', hexToBytes(DEFAULT_TERMINAL_CAPABILITIES[ctx.entryMode]));
  }

  if (ctx.terminalType !== undefined) {
    if (!/^\d{2}$/.test(ctx.terminalType))
      fail('TAG_INVALID', '9F35', 'reference/emv.md: 9F35 is n2', 'terminalType must be two digits');
    const read = fromReader.get('9F35');
    if (read !== undefined && bytesToHex(read) !== ctx.terminalType)
      fail('TAG_MISMATCH', '9F35', 'the 9F35 the card saw must equal the terminal type', 'tag 9F35 differs');
  }

  // 9F37 is the reader's when it gave one (the cryptogram covers it); otherwise fresh CSPRNG bytes.
  if (!fromReader.has('9F37')) {
    const un = (ctx.random ?? randomBytes)(4);
    if (!(un instanceof Uint8Array) || un.length !== 4)
      fail('TAG_INVALID', '9F37', 'reference/emv.md: 9F37 is b4', 'the random source must return 4 bytes');
    out.set('9F37', Uint8Array.from(un));
  }
  return out;
}
