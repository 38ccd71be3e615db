import { createHmac, randomBytes } from 'node:crypto';
import { ReaderError, type CardRead } from '../../devices/reader.js';
import {
  bytesToHex,
  CardDataError,
  detectNetwork,
  interpretServiceCode,
  maskPan,
  parseTag57,
  parseTrack1,
  parseTrack2,
  type CardData,
  type CardType,
} from '../emv/index.js';
import type { CardSummary } from '../flows/effects.js';

/** A card read the host keeps for the follow-ons of a flow. Card data: memory only, never logged, wiped on release. */
export interface HeldCard {
  readonly ref: string;
  readonly read: CardRead;
  readonly summary: CardSummary;
  /** PAN, expiry and service code from 5A/57/tracks; undefined when the read carried none. */
  readonly data?: CardData;
}

function panFrom5A(read: CardRead): string | undefined {
  const v = read.tlvs.find((t) => t.tag === '5A')?.value;
  if (!v) return undefined;
  const digits = bytesToHex(v).replace(/F+$/, '');
  return /^\d{12,19}$/.test(digits) ? digits : undefined;
}

/**
 * PAN, expiry and service code of a read, from the most reliable source present: tag 57, track 2, track 1.
 * @throws ReaderError CARD_ERROR when tag 5A names another card than that source: a read mixing two cards is corrupt,
 *   and neither its PAN with the other's expiry nor track data built from the mix may reach the gateway.
 */
export function cardDataOf(read: CardRead): CardData | undefined {
  const sources: Array<() => CardData> = [];
  const t57 = read.tlvs.find((t) => t.tag === '57')?.value;
  if (t57) sources.push(() => parseTag57(t57));
  if (read.track2) sources.push(() => parseTrack2(read.track2 ?? ''));
  if (read.track1) sources.push(() => parseTrack1(read.track1 ?? ''));
  for (const parse of sources) {
    let d: CardData;
    try {
      d = parse();
    } catch (e) {
      if (!(e instanceof CardDataError)) throw e;
      continue;
    }
    const pan5A = panFrom5A(read);
    if (pan5A !== undefined && pan5A !== d.pan) {
      // No digit of either PAN in the message: it reaches the log.
      throw new ReaderError('CARD_ERROR', 'the card read is inconsistent: tag 5A and the track data differ');
    }
    return d;
  }
  return undefined;
}

/**
 * Holds card reads in memory under opaque references (src/flows/effects.ts: the machines only ever see the
 * summary). The fingerprint is an HMAC of PAN and expiry under a secret of this terminal, so tap-and-go can match
 * entry and exit without keeping or comparing PANs.
 */
export class CardStore {
  private readonly cards = new Map<string, HeldCard>();

  constructor(private readonly fingerprintKey: Buffer) {}

  /** Keeps a read and returns its summary for the machines. */
  hold(read: CardRead): HeldCard {
    const ref = `card_${randomBytes(9).toString('base64url')}`;
    let data: CardData | undefined;
    try {
      data = cardDataOf(read);
    } catch (e) {
      // A read refused is not kept: its card data is wiped now, as a released one is.
      for (const t of read.tlvs) t.value.fill(0);
      throw e;
    }
    const cardType: CardType | null = data ? detectNetwork(data.pan).cardType : null;
    const chip = read.entryMode === 'contact' || read.entryMode === 'contactless';
    const fingerprint = data
      ? createHmac('sha256', this.fingerprintKey).update(`${data.pan}|${data.expiry}`).digest('base64url')
      : createHmac('sha256', this.fingerprintKey).update(ref).digest('base64url');
    const summary: CardSummary = {
      cardRef: ref,
      entryMode: read.entryMode,
      cardType,
      maskedPan: data ? maskPan(data.pan) : read.maskedPan,
      fingerprint,
      fallback:
        read.fallback ||
        (read.entryMode === 'swiped' && data !== undefined && interpretServiceCode(data.serviceCode).chip),
      chip,
    };
    const held: HeldCard = { ref, read, summary, ...(data ? { data } : {}) };
    this.cards.set(ref, held);
    return held;
  }

  get(ref: string): HeldCard | undefined {
    return this.cards.get(ref);
  }

  /** Zeroes the read's TLV values and forgets it (DESIGN.md, money safety rule 4). */
  release(ref: string): void {
    const held = this.cards.get(ref);
    if (!held) return;
    for (const t of held.read.tlvs) t.value.fill(0);
    this.cards.delete(ref);
  }

  get size(): number {
    return this.cards.size;
  }
}
