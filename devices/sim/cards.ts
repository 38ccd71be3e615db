import { createHash } from 'node:crypto';
import { encodeTlv, hexToBytes, type TlvNode } from '../../src/emv/index.js';
import type { EntryMode } from '../reader.js';

/**
 * The simulator's virtual cards. Test PANs are the networks' published test numbers (Luhn-valid). Chip reads carry
 * every tag spec 001 ("EMV tags", M/O/C per network) needs for their network, and also the card data tags the gateway
 * must never receive (gateway.md §3: 56, 57, 5A, 5F20, 5F24, 9F1F …) so that the terminal's filtering is exercised.
 */

/** Card network as spec 001 names them: N1 = card type 002 (Mastercard), N2 = card type 001 (Visa). */
export type VirtualNetwork = 'N1' | 'N2' | 'other';

/** What is on the card. */
export interface VirtualCardData {
  readonly network: VirtualNetwork;
  readonly pan: string;
  /** YYMM. */
  readonly expiry: string;
  /** ISO 7813 service code: 101 magnetic stripe only, 201 chip card. */
  readonly serviceCode: string;
  /** Track 1 name field, e.g. "CARDHOLDER/VISA". */
  readonly name: string;
  /** Application identifier (4F / 84), hex. */
  readonly aid: string;
  /** Application label (50), ASCII. */
  readonly label: string;
  /** PAN sequence number (5F34), two digits; absent on cards that have none. */
  readonly panSequence?: string;
  /** Application interchange profile (82), hex, per interface. */
  readonly aipContact: string;
  readonly aipContactless: string;
  /** Issuer application data (9F10), hex. */
  readonly iad: string;
  /** Application transaction counter (9F36) at the first read, hex. */
  readonly atc: string;
  /** Form factor indicator (9F6E), hex; Visa contactless cards carry it. */
  readonly formFactor?: string;
  /** Track discretionary data. */
  readonly discretionary: string;
}

/** What the simulated reader does when this card is presented once. */
export type VirtualPresentation =
  /** The card is read; Activate answers status 23 (chip: online authorization requested) or 00 (stripe). */
  | { readonly kind: 'read'; readonly entryMode: EntryMode; readonly card: VirtualCardData }
  /**
   * The reader answers status 0A with this Activate error code (reader-protocol.md). `contactless`: the card failed
   * during a tap — the failure data carries a non-zero RF state code (03, GPO) and the track source DF30 00; otherwise
   * RF state 00 and no TLVs, as when the card in the contact slot (or no card's exchange at all) failed.
   */
  | { readonly kind: 'error'; readonly activateErrorCode: number; readonly contactless?: true }
  /** No card comes: the reader answers status 08 when the Activate timeout ends. */
  | { readonly kind: 'no-card' }
  /** The reader is unplugged after it detected the card. */
  | { readonly kind: 'unplug' }
  /** The reader answers with a reply whose CRC is wrong, and nothing else. */
  | { readonly kind: 'bad-crc'; readonly card: VirtualCardData }
  /** The reader sends line noise, then the correct reply: the driver must resynchronise on the header. */
  | { readonly kind: 'garbage'; readonly card: VirtualCardData };

/**
 * What the simulated reader does when this card is presented: one presentation, or `sequence`, one after the other
 * at successive Activates and then from the first again (the next customer's card of that kind), e.g. a chip that
 * cannot be read and then the card swiped.
 */
export type VirtualOutcome =
  | VirtualPresentation
  | { readonly kind: 'sequence'; readonly steps: readonly [VirtualPresentation, ...VirtualPresentation[]] };

export interface VirtualCard {
  readonly name: string;
  readonly description: string;
  /** Whether the reader first reports "card detected" (status 0E, data 01). */
  readonly detected: boolean;
  /** Milliseconds between the card being detected and the reader's answer. */
  readonly readMs: number;
  readonly outcome: VirtualOutcome;
}

const N2_VISA: VirtualCardData = {
  network: 'N2',
  pan: '4761739001010119',
  expiry: '3012',
  serviceCode: '201',
  name: 'CARDHOLDER/VISA',
  aid: 'A0000000031010',
  label: 'VISA CREDIT',
  panSequence: '01',
  aipContact: '5C00',
  aipContactless: '2000',
  iad: '06010A03A00000',
  atc: '0027',
  formFactor: '20700000',
  discretionary: '1758928889',
};

const N1_MASTERCARD: VirtualCardData = {
  network: 'N1',
  pan: '5413339000001513',
  expiry: '3012',
  serviceCode: '201',
  name: 'CARDHOLDER/MASTERCARD',
  aid: 'A0000000041010',
  label: 'MASTERCARD',
  panSequence: '01',
  aipContact: '3900',
  aipContactless: '1980',
  iad: '0110A00001220000000000000000000000FF',
  atc: '0101',
  discretionary: '0000000000',
};

const JCB: VirtualCardData = {
  network: 'other',
  pan: '3566002020360505',
  expiry: '3012',
  serviceCode: '201',
  name: 'CARDHOLDER/JCB',
  aid: 'A0000000651010',
  label: 'JCB',
  panSequence: '00',
  aipContact: '3800',
  aipContactless: '1980',
  iad: '0105A00003000000',
  atc: '0011',
  discretionary: '1234567890',
};

const withoutSequence = (card: VirtualCardData): VirtualCardData => {
  const { panSequence: _omitted, ...rest } = card;
  return rest;
};

const card = (
  name: string,
  description: string,
  outcome: VirtualOutcome,
  extra: { detected?: boolean; readMs?: number } = {},
): VirtualCard => ({
  name,
  description,
  outcome,
  detected: extra.detected ?? true,
  readMs: extra.readMs ?? 60,
});

/** A table by name without a prototype: a name an object inherits (`constructor`, `toString`) is not in it. */
function tableOf<T>(entries: Iterable<readonly [string, T]>): Readonly<Record<string, T>> {
  return Object.assign(Object.create(null) as Record<string, T>, Object.fromEntries(entries));
}

/**
 * Every virtual card by name. `setCard(name)` of the simulator control takes these names; `name in VIRTUAL_CARDS` and
 * `VIRTUAL_CARDS[name]` see only the table.
 */
export const VIRTUAL_CARDS: Readonly<Record<string, VirtualCard>> = tableOf(
  [
    card('n2-contact', 'N2 (Visa 4761739001010119, card type 001) contact chip with 5F34', {
      kind: 'read',
      entryMode: 'contact',
      card: N2_VISA,
    }),
    card('n2-no-5f34', 'N2 contact chip without a PAN sequence number', {
      kind: 'read',
      entryMode: 'contact',
      card: withoutSequence(N2_VISA),
    }),
    card('n2-online-only', 'N2 contact chip whose service code (221) requires online authorization', {
      kind: 'read',
      entryMode: 'contact',
      card: { ...N2_VISA, serviceCode: '221' },
    }),
    card('n2-contactless', 'N2 contactless chip (qVSDC, form factor 9F6E)', {
      kind: 'read',
      entryMode: 'contactless',
      card: N2_VISA,
    }),
    card('n2-msd', 'N2 contactless magnetic-stripe mode (tracks, no cryptogram)', {
      kind: 'read',
      entryMode: 'msd',
      card: N2_VISA,
    }),
    card('n2-swipe', 'N2 magnetic-stripe-only card swiped (service code 101)', {
      kind: 'read',
      entryMode: 'swiped',
      card: { ...N2_VISA, serviceCode: '101' },
    }),
    card('n1-contact', 'N1 (Mastercard 5413339000001513, card type 002) contact chip with 5F34', {
      kind: 'read',
      entryMode: 'contact',
      card: N1_MASTERCARD,
    }),
    card('n1-no-5f34', 'N1 contact chip without a PAN sequence number', {
      kind: 'read',
      entryMode: 'contact',
      card: withoutSequence(N1_MASTERCARD),
    }),
    card('n1-contactless', 'N1 contactless chip', {
      kind: 'read',
      entryMode: 'contactless',
      card: N1_MASTERCARD,
    }),
    card('n1-msd', 'N1 contactless magnetic-stripe mode', {
      kind: 'read',
      entryMode: 'msd',
      card: N1_MASTERCARD,
    }),
    card('n1-swipe', 'N1 magnetic-stripe-only card swiped, tracks with sentinels', {
      kind: 'read',
      entryMode: 'swiped',
      card: { ...N1_MASTERCARD, serviceCode: '101' },
    }),
    card('chip-swiped-fallback', 'N2 chip card (service code 201) swiped, its chip not tried: refused', {
      kind: 'read',
      entryMode: 'swiped',
      card: N2_VISA,
    }),
    card(
      'chip-fails-then-swiped',
      'N2 chip card whose chip cannot be read (error 24, card communication error), then swiped: an EMV fallback',
      {
        kind: 'sequence',
        steps: [
          { kind: 'error', activateErrorCode: 0x24 },
          { kind: 'read', entryMode: 'swiped', card: N2_VISA },
        ],
      },
    ),
    card(
      'tap-fails-then-swiped',
      'N2 chip card whose tap fails (error 24, card communication error, during the contactless exchange), then swiped, then inserted: no fallback after a tap, the swipe is refused as its chip not tried, the chip read is sent',
      {
        kind: 'sequence',
        steps: [
          { kind: 'error', activateErrorCode: 0x24, contactless: true },
          { kind: 'read', entryMode: 'swiped', card: N2_VISA },
          { kind: 'read', entryMode: 'contact', card: N2_VISA },
        ],
      },
    ),
    card('unsupported-network', 'JCB contact chip: read fine, a network the terminal does not accept', {
      kind: 'read',
      entryMode: 'contact',
      card: JCB,
    }),
    card('expired', 'the reader reports the card expired (error 26)', {
      kind: 'error',
      activateErrorCode: 0x26,
    }),
    card('unsupported-card', 'the reader does not support the card (error 27)', {
      kind: 'error',
      activateErrorCode: 0x27,
    }),
    card('blocked', 'the card is blocked (error 25)', { kind: 'error', activateErrorCode: 0x25 }),
    card('declined-offline', 'the card generated an AAC (error 42)', {
      kind: 'error',
      activateErrorCode: 0x42,
    }),
    card('use-contact', 'contactless refused: insert the card (error 02)', {
      kind: 'error',
      activateErrorCode: 0x02,
    }),
    card('removed', 'the card leaves mid-read (error 30, card did not respond)', {
      kind: 'error',
      activateErrorCode: 0x30,
    }),
    card(
      'collision',
      'two cards in the field (error 21)',
      { kind: 'error', activateErrorCode: 0x21 },
      { detected: false },
    ),
    card(
      'slow',
      'N2 contactless card that takes 1.5 s to read',
      { kind: 'read', entryMode: 'contactless', card: N2_VISA },
      { readMs: 1500 },
    ),
    card(
      'no-card',
      'nobody presents a card: the reader times out (status 08)',
      { kind: 'no-card' },
      { detected: false },
    ),
    card('unplugged', 'the reader is unplugged after detecting the card', { kind: 'unplug' }),
    card('garbage', 'line noise before the reply of an N2 contact read', { kind: 'garbage', card: N2_VISA }),
    card('bad-crc', 'the reply of an N2 contact read arrives with a wrong CRC, and nothing else', {
      kind: 'bad-crc',
      card: N2_VISA,
    }),
  ].map((c) => [c.name, c] as const),
);

/** Names of every virtual card, in table order. */
export const VIRTUAL_CARD_NAMES: readonly string[] = Object.keys(VIRTUAL_CARDS);

/** Terminal-side values the reader echoes in DE055, taken from the Activate request. */
export interface ReadContext {
  /** Activate TLVs by tag (9F02, 9F03, 9C, 5F2A, 9F1A). */
  readonly request: ReadonlyMap<string, Uint8Array>;
  /** Transaction date, YYMMDD. */
  readonly date: string;
  /** Reads so far, added to the ATC. */
  readonly sequence: number;
}

/** The data of an Activate reply for a card read, ready for `encodeActivateReply`. */
export interface VirtualRead {
  readonly track1?: string;
  readonly track2?: string;
  readonly de055Present: boolean;
  readonly tlvs: Uint8Array;
}

const ascii = (s: string): Uint8Array => Uint8Array.from([...s].map((c) => c.charCodeAt(0)));
const tlv = (tag: string, hex: string): TlvNode => {
  const value = hexToBytes(hex);
  return { tag, length: value.length, value };
};
const tlvAscii = (tag: string, text: string): TlvNode => ({ tag, length: text.length, value: ascii(text) });
const padF = (digits: string): string => (digits.length % 2 === 0 ? digits : `${digits}F`);

/** Deterministic "random" bytes so that a given read is reproducible. */
function derived(seed: string, bytes: number): string {
  return createHash('sha256')
    .update(seed)
    .digest('hex')
    .slice(0, bytes * 2)
    .toUpperCase();
}

/** Builds the reply of a successful read of `data` in `entryMode`. */
export function buildVirtualRead(data: VirtualCardData, entryMode: EntryMode, ctx: ReadContext): VirtualRead {
  const req = (tag: string, fallback: string): string => {
    const v = ctx.request.get(tag);
    return v === undefined
      ? fallback
      : [...v]
          .map((b) => b.toString(16).padStart(2, '0'))
          .join('')
          .toUpperCase();
  };
  const track1 = `B${data.pan}^${data.name}^${data.expiry}${data.serviceCode}${data.discretionary}`;
  const track2 = `${data.pan}=${data.expiry}${data.serviceCode}${data.discretionary}`;
  // Unattended parking terminal: terminal type 25 (unattended, online with offline capability).
  const terminalType = tlv('9F35', '25');
  switch (entryMode) {
    case 'swiped': {
      // Stripe-only readers keep the sentinels on N1 here and strip them on N2, as both happen in the field.
      const sentinels = data.network === 'N1';
      return {
        track1: sentinels ? `%${track1}?` : track1,
        track2: sentinels ? `;${track2}?` : track2,
        de055Present: false,
        tlvs: encodeTlv([
          terminalType,
          tlv('9F39', '90'),
          { tag: 'FFEE01', length: 0, children: [tlv('DF30', '0C')] },
          tlv('DFEE26', '00'),
        ]),
      };
    }
    case 'msd':
      return {
        track1,
        track2,
        de055Present: false,
        tlvs: encodeTlv([
          tlvAscii('50', data.label),
          terminalType,
          // N1 readers report POS entry mode 91; the vendor's N2 sample says 07 with track source DF30 = 00.
          tlv('9F39', data.network === 'N1' ? '91' : '07'),
          { tag: 'FFEE01', length: 0, children: [tlv('DF30', '00')] },
          tlv('DFEE26', '00'),
        ]),
      };
    case 'contact':
    case 'contactless': {
      const contact = entryMode === 'contact';
      const atc = (Number.parseInt(data.atc, 16) + ctx.sequence).toString(16).padStart(4, '0').toUpperCase();
      const un = derived(`${data.pan}:un:${ctx.sequence}:${ctx.date}`, 4);
      const amount = req('9F02', '000000000000');
      const nodes: TlvNode[] = [
        tlv('4F', data.aid),
        tlvAscii('50', data.label),
        tlv('57', padF(`${data.pan}D${data.expiry}${data.serviceCode}${data.discretionary}`)),
        tlv('5A', padF(data.pan)),
        tlvAscii('5F20', data.name),
        tlv('5F24', `${data.expiry}31`),
        tlv('5F2A', req('5F2A', '0826')),
        ...(data.panSequence !== undefined ? [tlv('5F34', data.panSequence)] : []),
        tlv('82', contact ? data.aipContact : data.aipContactless),
        tlv('84', data.aid),
        tlv('95', contact ? '0000008000' : '0000000000'),
        tlv('9A', ctx.date),
        tlv('9C', req('9C', '00')),
        tlv('9F02', amount),
        tlv('9F03', req('9F03', '000000000000')),
        tlv('9F10', data.iad),
        tlv('9F1A', req('9F1A', '0826')),
        tlvAscii('9F1F', data.discretionary),
        tlv('9F26', derived(`${data.pan}:ac:${atc}:${amount}:${un}`, 8)),
        // 80: ARQC, the card asks to go online.
        tlv('9F27', '80'),
        tlv('9F33', contact ? 'E028C8' : '0028C8'),
        // 1F0302: no CVM required, successful (unattended parking below the CVM limit).
        tlv('9F34', '1F0302'),
        terminalType,
        tlv('9F36', atc),
        tlv('9F37', un),
        tlv('9F39', contact ? '05' : '07'),
        ...(!contact && data.formFactor !== undefined ? [tlv('9F6E', data.formFactor)] : []),
        ...(!contact ? [{ tag: 'FFEE01', length: 0, children: [tlv('DF30', '00')] }] : []),
        tlv('DFEE26', '00'),
      ];
      return { de055Present: true, tlvs: encodeTlv(nodes) };
    }
  }
}
