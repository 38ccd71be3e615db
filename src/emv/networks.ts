/**
 * The per-network EMV tag tables of spec 001, "Card-present parking" → "EMV tags", as ONE data table: each row
 * gives the presence rule per network, and a rule that depends on the service (9F6E for N1) is written per service.
 * Nothing here branches on a tag in code.
 */

/** Card type codes of the parking section (spec 001): `001` and `002`. */
export type CardType = '001' | '002';

/** Network names of spec 001: N1 = card type `002`, N2 = card type `001`. */
export type NetworkName = 'N1' | 'N2';

/** The gateway services a tag set is built for. */
export type TagSetService = 'authorization' | 'refund' | 'credit' | 'capture' | 'reversal';

/** Every service, in a fixed order (for tables and tests). */
export const TAG_SET_SERVICES: readonly TagSetService[] = [
  'authorization',
  'capture',
  'reversal',
  'refund',
  'credit',
];

/**
 * Spec 001: M mandatory, O optional, P prohibited, C conditional ("send when present on card and terminal").
 * The builder sends O and C tags exactly when they are present and refuses to build without an M tag.
 */
export type Presence = 'M' | 'O' | 'P' | 'C';

/** A presence rule: the same for every service, or one per service. */
export type PresenceRule = Presence | Readonly<Record<TagSetService, Presence>>;

/** A value length in bytes: smallest and largest. */
export type LengthRange = readonly [min: number, max: number];

/** One row of the table. */
export interface NetworkTagRow {
  /** Element name as spec 001 writes it. */
  readonly element: string;
  /** Upper-case hex tag. */
  readonly tag: string;
  /** Rule per card type. */
  readonly rules: Readonly<Record<CardType, PresenceRule>>;
  /** The value's length per card type, where the networks define it more strictly than the dictionary. */
  readonly lengths?: Readonly<Record<CardType, LengthRange>>;
}

export const NETWORK_BY_CARD_TYPE: Readonly<Record<CardType, NetworkName>> = { '001': 'N2', '002': 'N1' };

/**
 * 9F6E for N1: spec 001 writes "O (authorization), P (refund)". A sale and the follow-ons of an authorization
 * (capture, reversal) carry the authorization's tags, so they follow the authorization; a standalone credit moves
 * money to the card like a refund (transaction type 20), so it follows the refund (gateway.md §7: "A Mastercard
 * refund must not carry tag 9F6E").
 */
const N1_FORM_FACTOR: Readonly<Record<TagSetService, Presence>> = {
  authorization: 'O',
  capture: 'O',
  reversal: 'O',
  refund: 'P',
  credit: 'P',
};

/** Spec 001 "EMV tags", row for row, in its order. */
export const NETWORK_TAG_TABLE: readonly NetworkTagRow[] = [
  { element: 'Transaction Date', tag: '9A', rules: { '002': 'M', '001': 'M' } },
  { element: 'Transaction Type', tag: '9C', rules: { '002': 'M', '001': 'M' } },
  { element: 'Transaction Currency Code', tag: '5F2A', rules: { '002': 'M', '001': 'M' } },
  { element: 'Terminal Country Code', tag: '9F1A', rules: { '002': 'M', '001': 'M' } },
  { element: 'Amount Authorized', tag: '9F02', rules: { '002': 'M', '001': 'M' } },
  { element: 'Amount Other', tag: '9F03', rules: { '002': 'M', '001': 'M' } },
  { element: 'Application PAN Sequence Number', tag: '5F34', rules: { '002': 'C', '001': 'O' } },
  { element: 'Application Transaction Counter', tag: '9F36', rules: { '002': 'M', '001': 'M' } },
  { element: 'Application Interchange Profile', tag: '82', rules: { '002': 'M', '001': 'M' } },
  { element: 'Dedicated File Name', tag: '84', rules: { '002': 'M', '001': 'M' } },
  { element: 'Terminal Verification Results', tag: '95', rules: { '002': 'M', '001': 'M' } },
  { element: 'Issuer Application Data', tag: '9F10', rules: { '002': 'M', '001': 'M' } },
  { element: 'Application Cryptogram', tag: '9F26', rules: { '002': 'M', '001': 'M' } },
  { element: 'Cryptogram Information Data', tag: '9F27', rules: { '002': 'M', '001': 'O' } },
  { element: 'Terminal Capabilities', tag: '9F33', rules: { '002': 'M', '001': 'M' } },
  { element: 'CVM Results', tag: '9F34', rules: { '002': 'M', '001': 'O' } },
  { element: 'Unpredictable Number', tag: '9F37', rules: { '002': 'M', '001': 'M' } },
  // reference/emv.md: 9F6E is Visa's 4-byte Form Factor Indicator (001) but Mastercard's 5-32-byte Third Party Data
  // (002), where the dictionary allows 4-32 bytes for both.
  {
    element: 'Form Factor Indicator',
    tag: '9F6E',
    rules: { '002': N1_FORM_FACTOR, '001': 'C' },
    lengths: { '001': [4, 4], '002': [5, 32] },
  },
];

/**
 * Tags that must never appear in `pointOfSaleInformation.emv.tags` (gateway.md §3): card data and names travel in
 * their own fields or not at all.
 */
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
 * Tags whose values are card data, for anything the terminal shows or writes (certification evidence, `tlv decode`):
 * the never-send list and, on top of it, Visa's track 2 data (9F6B), the track 1/2 discretionary data (9F1F, 9F20
 * without the never-send rule's reasons) and the service code (5F30).
 */
export const CARD_DATA_TAGS: ReadonlySet<string> = new Set([
  ...NEVER_SEND_TAGS,
  '9F6B',
  '9F1F',
  '9F20',
  '5F30',
]);

/** The presence of a row's tag for a card type and service. */
export function presenceOf(row: NetworkTagRow, cardType: CardType, service: TagSetService): Presence {
  const rule = row.rules[cardType];
  return typeof rule === 'string' ? rule : rule[service];
}

/** The rule as spec 001 writes it, e.g. `"M"` or `"O (authorization, capture, reversal), P (refund, credit)"`. */
export function describeRule(rule: PresenceRule): string {
  if (typeof rule === 'string') return rule;
  const byPresence = new Map<Presence, TagSetService[]>();
  for (const service of TAG_SET_SERVICES) {
    const p = rule[service];
    byPresence.set(p, [...(byPresence.get(p) ?? []), service]);
  }
  return [...byPresence].map(([p, services]) => `${p} (${services.join(', ')})`).join(', ');
}
