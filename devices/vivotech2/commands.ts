import { decodeTlv, encodeTlv, flattenTlv, maskPan, TlvError, type TlvNode } from '../../src/emv/index.js';
import { ReaderError, type ActivateOptions, type CardRead, type CardTlv, type EntryMode } from '../reader.js';
import { STATUS } from './status.js';

/** A command: CMD and SUBCMD bytes (reader-protocol.md, Commands the terminal needs). */
export interface CommandId {
  readonly cmd: number;
  readonly sub: number;
  readonly name: string;
}

export const COMMANDS = {
  ping: { cmd: 0x18, sub: 0x01, name: 'Ping' },
  firmwareVersion: { cmd: 0x29, sub: 0x00, name: 'Get firmware version' },
  setPollMode: { cmd: 0x01, sub: 0x01, name: 'Set poll mode' },
  activate: { cmd: 0x02, sub: 0x01, name: 'Activate transaction' },
  getResult: { cmd: 0x03, sub: 0x00, name: 'Get transaction result' },
  getResultWithStatus: { cmd: 0x03, sub: 0x40, name: 'Get transaction result' },
  cancel: { cmd: 0x05, sub: 0x01, name: 'Cancel transaction' },
  getConfiguration: { cmd: 0x03, sub: 0x02, name: 'Get configuration' },
  setConfiguration: { cmd: 0x04, sub: 0x00, name: 'Set configuration' },
} as const satisfies Record<string, CommandId>;

/** Set poll mode data: `00` auto-poll, `01` poll on demand. */
export const POLL_MODE = { auto: 0x00, onDemand: 0x01 } as const;

/** Whether the Activate reply carries a track 3 field: NEO 2 readers do, older NEO readers do not; `auto` detects. */
export type Track3Layout = 'auto' | 'present' | 'absent';

/** Right-justified BCD of `digits` decimal digits (EMV format n). */
export function bcd(value: number | string, bytes: number): Uint8Array {
  const text = typeof value === 'number' ? String(value) : value;
  if (!/^\d+$/.test(text) || text.length > bytes * 2)
    throw new RangeError(`"${text}" does not fit n${bytes * 2}`);
  const padded = text.padStart(bytes * 2, '0');
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Number.parseInt(padded.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Data of Activate Transaction (02-01): the timeout byte, then 9F02, 9F03, 9C, 5F2A, 9F1A. Transaction date and time
 * (9A/9F21) are deprecated in SRED readers and not sent (reader-protocol.md).
 * @throws ReaderError READER_PROTOCOL when an option is outside its range (nothing is sent then).
 */
export function buildActivateData(options: ActivateOptions): Uint8Array {
  const { amountMinor, otherAmountMinor, currencyNumeric, countryNumeric, transactionType, timeoutSeconds } =
    options;
  const bad = (what: string): ReaderError => new ReaderError('READER_PROTOCOL', `activate: ${what}`);
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0 || amountMinor > 999_999_999_999)
    throw bad('amountMinor must be an integer 0-999999999999');
  if (!Number.isSafeInteger(otherAmountMinor) || otherAmountMinor < 0 || otherAmountMinor > 999_999_999_999)
    throw bad('otherAmountMinor must be an integer 0-999999999999');
  if (!/^\d{3}$/.test(currencyNumeric)) throw bad('currencyNumeric must be 3 digits');
  if (!/^\d{3}$/.test(countryNumeric)) throw bad('countryNumeric must be 3 digits');
  if (!['00', '20', '30'].includes(transactionType)) throw bad('transactionType must be 00, 20 or 30');
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 255)
    throw bad('timeoutSeconds must be an integer 1-255');
  const tlvs = encodeTlv([
    { tag: '9F02', length: 6, value: bcd(amountMinor, 6) },
    { tag: '9F03', length: 6, value: bcd(otherAmountMinor, 6) },
    { tag: '9C', length: 1, value: bcd(transactionType, 1) },
    { tag: '5F2A', length: 2, value: bcd(currencyNumeric, 2) },
    { tag: '9F1A', length: 2, value: bcd(countryNumeric, 2) },
  ]);
  const out = new Uint8Array(1 + tlvs.length);
  out[0] = timeoutSeconds;
  out.set(tlvs, 1);
  return out;
}

/** The Activate request as the reader (or the simulator) reads it back. */
export interface ActivateRequest {
  readonly timeoutSeconds: number;
  readonly tlvs: readonly CardTlv[];
}

/** Parses Activate data (the reader's side). @throws TlvError when the TLVs are malformed. */
export function parseActivateData(data: Uint8Array): ActivateRequest {
  if (data.length < 1) throw new TlvError('TLV_TRUNCATED_TAG', 'activate data has no timeout byte', 0);
  return { timeoutSeconds: data[0] as number, tlvs: flattenTlv(decodeTlv(data.subarray(1))) };
}

/** The fields of an Activate / Get Transaction Result reply with status 00 or 23. */
export interface ActivateReply {
  readonly track1?: string;
  readonly track2?: string;
  readonly track3?: string;
  /** Whether the reply said DE055 (the EMV data) is present. */
  readonly de055Present: boolean;
  /** Whether the layout with a track 3 field was used (decided by the configuration or detected). */
  readonly track3Field: boolean;
  /** The TLVs in order, constructed groups (FFEE01, the E1 clearing record) flattened. */
  readonly tlvs: readonly CardTlv[];
}

const ascii = (b: Uint8Array): string => String.fromCharCode(...b);

function tryLayout(data: Uint8Array, withTrack3: boolean): ActivateReply | TlvError {
  let at = 0;
  const tracks: (string | undefined)[] = [];
  for (let t = 0; t < (withTrack3 ? 3 : 2); t++) {
    const len = data[at];
    if (len === undefined)
      return new TlvError('TLV_TRUNCATED_LENGTH', `reply ends before track ${t + 1} length`, at);
    if (at + 1 + len > data.length)
      return new TlvError('TLV_TRUNCATED_VALUE', `track ${t + 1} runs past the reply`, at);
    tracks.push(len > 0 ? ascii(data.subarray(at + 1, at + 1 + len)) : undefined);
    at += 1 + len;
  }
  const de055 = data[at];
  if (de055 === undefined)
    return new TlvError('TLV_TRUNCATED_VALUE', 'reply ends before the DE055-present byte', at);
  if (de055 > 1) return new TlvError('TLV_BAD_NODE', 'DE055-present byte is neither 00 nor 01', at);
  at += 1;
  let nodes: TlvNode[];
  try {
    nodes = decodeTlv(data.subarray(at));
  } catch (e) {
    // The code and the offset in the reply (the decoder counts from the start of the TLVs). Neither message names a
    // byte of the reply: in a malformed card-data reply a short length makes the decoder read the PAN or track data as
    // tags and lengths (tlv.ts; DESIGN.md: no card data in logs).
    if (e instanceof TlvError)
      return new TlvError(e.code, `reply TLVs do not decode (${e.code})`, at + e.offset);
    throw e;
  }
  const [track1, track2, track3] = tracks;
  return {
    ...(track1 !== undefined ? { track1 } : {}),
    ...(track2 !== undefined ? { track2 } : {}),
    ...(track3 !== undefined ? { track3 } : {}),
    de055Present: de055 === 1,
    track3Field: withTrack3,
    tlvs: flattenTlv(nodes).map((n) => ({ tag: n.tag, value: n.value })),
  };
}

/**
 * Parses the data of a successful Activate reply: track 1, track 2, [track 3], the DE055-present byte, then TLVs
 * (the clearing record E1 and the FFEE01 group included, flattened). With `auto`, the NEO 2 layout (track 3 field) is
 * tried first and kept only when its DE055 byte is 00/01 and its TLVs decode; otherwise the older layout is used.
 * @throws TlvError (with the byte offset in `data`) when no layout fits.
 */
export function parseActivateReply(data: Uint8Array, layout: Track3Layout = 'auto'): ActivateReply {
  const first = tryLayout(data, layout !== 'absent');
  if (!(first instanceof TlvError)) return first;
  if (layout !== 'auto') throw first;
  const second = tryLayout(data, false);
  if (second instanceof TlvError) throw second;
  return second;
}

/** Encodes reply data in the layout `parseActivateReply` reads (used by the simulator). */
export function encodeActivateReply(reply: {
  track1?: string;
  track2?: string;
  track3?: string;
  track3Field: boolean;
  de055Present: boolean;
  tlvs: Uint8Array;
}): Uint8Array {
  const parts: number[] = [];
  const track = (t: string | undefined): void => {
    const bytes = [...(t ?? '')].map((c) => c.charCodeAt(0) & 0xff);
    if (bytes.length > 255) throw new RangeError('track longer than 255 bytes');
    parts.push(bytes.length, ...bytes);
  };
  track(reply.track1);
  track(reply.track2);
  if (reply.track3Field) track(reply.track3);
  parts.push(reply.de055Present ? 1 : 0);
  const out = new Uint8Array(parts.length + reply.tlvs.length);
  out.set(parts, 0);
  out.set(reply.tlvs, parts.length);
  return out;
}

const hexOf = (b: Uint8Array | undefined): string =>
  b === undefined
    ? ''
    : [...b]
        .map((x) => x.toString(16).padStart(2, '0'))
        .join('')
        .toUpperCase();

/** PAN from tag 5A, else tag 57, else track 2, else track 1 (digits only). */
function panOf(reply: ActivateReply): string | undefined {
  const tag = (t: string): Uint8Array | undefined => reply.tlvs.find((x) => x.tag === t)?.value;
  const fromNibbles = (b: Uint8Array | undefined): string | undefined => {
    const m = /^(\d{8,19})/.exec(hexOf(b));
    return m?.[1];
  };
  return (
    fromNibbles(tag('5A')) ??
    fromNibbles(tag('57')) ??
    /^;?(\d{8,19})=/.exec(reply.track2 ?? '')?.[1] ??
    /^%?B(\d{8,19})\^/.exec(reply.track1 ?? '')?.[1]
  );
}

/** Service code from tag 57 or track 2 / track 1. */
function serviceCodeOf(reply: ActivateReply): string | undefined {
  const t57 = reply.tlvs.find((x) => x.tag === '57')?.value;
  return (
    /D\d{4}(\d{3})/.exec(hexOf(t57))?.[1] ??
    /=\d{4}(\d{3})/.exec(reply.track2 ?? '')?.[1] ??
    /\^[^^]*\^\d{4}(\d{3})/.exec(reply.track1 ?? '')?.[1]
  );
}

/**
 * How the card was read. DF30 (track source, reader-private) says `0C` swipe; a contactless read without a
 * cryptogram (9F26) is magnetic-stripe mode; 9F39 (POS entry mode) distinguishes 05 contact, 07 contactless,
 * 91 contactless magnetic-stripe, 80/90/02 swiped.
 */
export function entryModeOf(reply: ActivateReply): EntryMode {
  const tag = (t: string): Uint8Array | undefined => reply.tlvs.find((x) => x.tag === t)?.value;
  const df30 = tag('DF30')?.[0];
  const posEntry = tag('9F39')?.[0];
  const hasCryptogram = tag('9F26') !== undefined;
  if (df30 === 0x0c || posEntry === 0x90 || posEntry === 0x80 || posEntry === 0x02) return 'swiped';
  if (posEntry === 0x91) return 'msd';
  if (posEntry === 0x05) return 'contact';
  if (df30 === 0x00 || posEntry === 0x07) return hasCryptogram ? 'contactless' : 'msd';
  if (hasCryptogram) return 'contact';
  return reply.track1 !== undefined || reply.track2 !== undefined ? 'swiped' : 'contact';
}

/**
 * Builds the CardRead of a successful reply. `fallback` is set when a chip card (service code 2xx or 6xx) was swiped.
 * @throws ReaderError READER_PROTOCOL when the reply holds no PAN at all.
 */
export function toCardRead(reply: ActivateReply, status: number): CardRead {
  const pan = panOf(reply);
  if (pan === undefined)
    throw new ReaderError('READER_PROTOCOL', 'card read without a PAN (no 5A, 57 or track)');
  const entryMode = entryModeOf(reply);
  const serviceCode = serviceCodeOf(reply);
  return {
    entryMode,
    tlvs: reply.tlvs,
    ...(reply.track1 !== undefined ? { track1: reply.track1 } : {}),
    ...(reply.track2 !== undefined ? { track2: reply.track2 } : {}),
    ...(reply.track3 !== undefined ? { track3: reply.track3 } : {}),
    maskedPan: maskPan(pan),
    fallback: entryMode === 'swiped' && serviceCode !== undefined && /^[26]/.test(serviceCode),
    readerStatus: status === STATUS.REQUEST_ONLINE_AUTHORIZATION ? 'online-requested' : 'ok',
  };
}
