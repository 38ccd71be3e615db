/** Data mapping rules: every JSON field with an EMV or track counterpart agrees with it. */
import {
  CardDataError,
  detectNetwork,
  parseTrack1,
  parseTrack2,
  type CardData,
} from '../../src/emv/index.js';
import type { Finding } from '../session.js';
import { finding, tagField } from './catalog.js';
import { isMasked, text, tagDigits, type MessageView } from './message.js';
import { POS_ENTRY_MODE, RID_CARD_TYPE } from './tables.js';

const TRACK = 'pointOfSaleInformation.trackData';

/** The tracks of trackData: track 1 (`%B…?`), track 2 (`;…?` or bare), or both one after the other. */
function parseTracks(track: string): CardData[] | undefined {
  const parts =
    track.startsWith('%') && track.includes('?;')
      ? [track.slice(0, track.indexOf('?;') + 1), track.slice(track.indexOf('?;') + 1)]
      : [track];
  const out: CardData[] = [];
  for (const part of parts) {
    try {
      out.push(part.startsWith('%') || part.includes('^') ? parseTrack1(part) : parseTrack2(part));
    } catch (e) {
      if (e instanceof CardDataError) return undefined;
      throw e;
    }
  }
  return out;
}

function panFinding(detected: string | null, cardType: string): Finding {
  return finding(
    'DM-TRACK-PAN',
    TRACK,
    `the PAN in ${TRACK} is ${detected === null ? 'of no parking card type' : `of card type ${detected}`}, not paymentInformation.card.type ${cardType}`,
  );
}

function maskedTrackData(track: string, cardType: string | undefined): Finding[] {
  const bin = /^(?:%?B|;)?(\d{6})/.exec(track)?.[1];
  if (bin === undefined || cardType === undefined) return [];
  const detected = detectNetwork(bin).cardType;
  return detected === cardType ? [] : [panFinding(detected, cardType)];
}

function trackData(view: MessageView): Finding[] {
  const body = view.message.body;
  const track = text(body, TRACK);
  if (track === undefined) return [];
  // Masked track data (captures keep no card data) is not read as a track; a PAN masked to its first 6 and last 4
  // digits still shows the BIN, the one thing the card type is compared with.
  if (isMasked(track)) return maskedTrackData(track, text(body, 'paymentInformation.card.type'));
  const cards = parseTracks(track);
  if (cards === undefined)
    return [finding('DE-TRACK-DATA', TRACK, `${TRACK} is not readable track 1 or 2 data`)];
  const out: Finding[] = [];
  const cardType = text(body, 'paymentInformation.card.type');
  const serviceCode = text(body, 'pointOfSaleInformation.serviceCode');
  for (const card of cards) {
    const detected = detectNetwork(card.pan).cardType;
    if (cardType !== undefined && detected !== cardType) out.push(panFinding(detected, cardType));
    if (serviceCode !== undefined && serviceCode !== card.serviceCode)
      out.push(
        finding(
          'DM-TRACK-SERVICE-CODE',
          'pointOfSaleInformation.serviceCode',
          `pointOfSaleInformation.serviceCode differs from the service code in ${TRACK}`,
        ),
      );
  }
  return out;
}

function application(view: MessageView): Finding[] {
  const cardType = text(view.message.body, 'paymentInformation.card.type');
  if (cardType === undefined || view.tags === undefined) return [];
  for (const tag of ['84', '4F']) {
    const aid = view.tags.get(tag);
    if (aid === undefined) continue;
    const rid = aid.slice(0, 10);
    const expected = RID_CARD_TYPE[rid];
    if (expected !== cardType)
      return [
        finding(
          'DM-AID-CARD-TYPE',
          tagField(tag),
          `the application in ${tag} is ${expected === undefined ? 'of no parking card type' : `of card type ${expected}`}, not paymentInformation.card.type ${cardType}`,
        ),
      ];
    return [];
  }
  return [];
}

function posEntryMode(view: MessageView): Finding[] {
  const value = tagDigits(view.tags, '9F39');
  const entryMode = text(view.message.body, 'pointOfSaleInformation.entryMode');
  if (value === undefined || entryMode === undefined) return [];
  const modes = POS_ENTRY_MODE[value];
  if (modes?.includes(entryMode)) return [];
  return [
    finding(
      'DM-9F39-ENTRY-MODE',
      tagField('9F39'),
      `9F39 ${value} does not agree with entryMode ${entryMode}`,
    ),
  ];
}

/** Every data mapping rule of one message. */
export function checkDataMapping(view: MessageView): Finding[] {
  return [...trackData(view), ...application(view), ...posEntryMode(view)];
}
