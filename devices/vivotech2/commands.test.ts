import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes, TlvError } from '../../src/emv/index.js';
import { ReaderError } from '../reader.js';
import {
  bcd,
  buildActivateData,
  encodeActivateReply,
  entryModeOf,
  parseActivateData,
  parseActivateReply,
  toCardRead,
} from './commands.js';
import { decodeFrame } from './frame.js';
import { VENDOR_DATA, VENDOR_REPLY, VENDOR_TRACK1, VENDOR_TRACK2 } from './testing/published-frames.js';
import { errorForStatus } from './status.js';

const activate = {
  amountMinor: 1250,
  otherAmountMinor: 0,
  currencyNumeric: '826',
  countryNumeric: '826',
  transactionType: '00',
  timeoutSeconds: 30,
} as const;

describe('Activate request', () => {
  it('puts the timeout byte first, then 9F02, 9F03, 9C, 5F2A, 9F1A in BCD', () => {
    expect(bytesToHex(buildActivateData(activate))).toBe(
      '1E' + '9F0206000000001250' + '9F0306000000000000' + '9C0100' + '5F2A020826' + '9F1A020826',
    );
  });

  it('reads back what it wrote', () => {
    const req = parseActivateData(buildActivateData({ ...activate, transactionType: '20' }));
    expect(req.timeoutSeconds).toBe(30);
    expect(req.tlvs.map((t) => t.tag)).toEqual(['9F02', '9F03', '9C', '5F2A', '9F1A']);
  });

  it.each([
    [{ amountMinor: -1 }],
    [{ amountMinor: 1.5 }],
    [{ amountMinor: 1e12 }],
    [{ currencyNumeric: 'GBP' }],
    [{ countryNumeric: '82' }],
    [{ timeoutSeconds: 0 }],
    [{ timeoutSeconds: 256 }],
  ])('refuses out-of-range options %j with READER_PROTOCOL', (bad) => {
    expect(() => buildActivateData({ ...activate, ...bad })).toThrow(ReaderError);
  });

  it('encodes BCD right-justified', () => {
    expect(bytesToHex(bcd(978, 2))).toBe('0978');
    expect(() => bcd('12345', 2)).toThrow(RangeError);
  });
});

describe('Activate reply', () => {
  it("parses the vendor's magnetic-stripe-mode tap (no track 3 field) with auto detection", () => {
    const frame = decodeFrame(hexToBytes(VENDOR_REPLY), 'reader-to-host');
    const reply = parseActivateReply(frame.data, 'auto');
    expect(reply).toMatchObject({
      track1: VENDOR_TRACK1,
      track2: VENDOR_TRACK2,
      de055Present: false,
      track3Field: false,
    });
    expect(reply.tlvs.map((t) => `${t.tag}=${bytesToHex(t.value)}`)).toEqual([
      '9F35=22',
      '9F39=07',
      'DF30=00',
      'DFEE26=41',
    ]);
    const read = toCardRead(reply, frame.code);
    expect(read).toMatchObject({
      entryMode: 'msd',
      maskedPan: '627925******2343',
      fallback: false,
      readerStatus: 'ok',
    });
  });

  it('refuses the vendor reply when configured for a track 3 field', () => {
    expect(() => parseActivateReply(hexToBytes(VENDOR_DATA), 'present')).toThrow(TlvError);
  });

  it('detects the NEO 2 layout with a track 3 field', () => {
    const data = encodeActivateReply({
      track3Field: true,
      track3: ';123?',
      de055Present: true,
      tlvs: hexToBytes('9F390105'),
    });
    expect(parseActivateReply(data, 'auto')).toMatchObject({
      track3: ';123?',
      track3Field: true,
      de055Present: true,
    });
    expect(parseActivateReply(data, 'present').track3).toBe(';123?');
  });

  it('reports truncated reply TLVs with the byte offset in the reply', () => {
    const data = hexToBytes('00 00 00 01 9F2608 1122');
    try {
      parseActivateReply(data, 'present');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TlvError);
      expect((e as TlvError).offset).toBeGreaterThanOrEqual(4);
    }
  });

  it('quotes no byte of the card data when the reply TLVs are malformed', () => {
    // 5A declares 2 bytes but carries the whole PAN 4761739001010119: the decoder then reads PAN bytes 73 and 90 as a
    // tag and a length form. The error (and every cause under it) must not repeat them.
    const data = hexToBytes('00 00 01 5A02 4761 7390 0101 0119');
    let error: unknown;
    try {
      parseActivateReply(data, 'absent');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TlvError);
    expect((error as TlvError).offset).toBe(8);
    const texts: string[] = [];
    for (let e: unknown = error; e instanceof Error; e = e.cause) texts.push(e.message);
    expect(texts.join(' | ')).not.toMatch(/\b(?:73|90)\b/);
  });

  it('flags a swiped chip card (service code 2xx) as fallback', () => {
    const reply = parseActivateReply(
      encodeActivateReply({
        track3Field: false,
        track2: '4761739001010119=30122011758928889',
        de055Present: false,
        tlvs: hexToBytes('FFEE0104DF30010C'),
      }),
    );
    expect(toCardRead(reply, 0)).toMatchObject({
      entryMode: 'swiped',
      fallback: true,
      maskedPan: '476173******0119',
    });
  });

  it('takes the PAN from tag 5A and names the entry mode from 9F39', () => {
    const reply = parseActivateReply(
      encodeActivateReply({
        track3Field: false,
        de055Present: true,
        tlvs: hexToBytes('5A085413339000001513 9F26080011223344556677 9F390105'),
      }),
    );
    expect(entryModeOf(reply)).toBe('contact');
    expect(toCardRead(reply, 0x23)).toMatchObject({
      maskedPan: '541333******1513',
      readerStatus: 'online-requested',
    });
  });

  it('refuses a read without any PAN', () => {
    const reply = parseActivateReply(
      encodeActivateReply({ track3Field: false, de055Present: true, tlvs: hexToBytes('9F390105') }),
    );
    expect(() => toCardRead(reply, 0)).toThrow(expect.objectContaining({ code: 'READER_PROTOCOL' }));
  });
});

describe('status and Activate error codes', () => {
  it.each([
    [0x21, 'CARD_COLLISION'],
    [0x26, 'CARD_EXPIRED'],
    [0x25, 'CARD_BLOCKED'],
    [0x27, 'CARD_UNSUPPORTED'],
    [0x42, 'CARD_DECLINED_OFFLINE'],
    [0x02, 'CARD_USE_CONTACT'],
    [0x30, 'CARD_REMOVED'],
    [0x24, 'CARD_ERROR'],
    [0x99, 'CARD_ERROR'],
  ])('maps activate error 0x%s to %s', (code, expected) => {
    const error = errorForStatus('Activate', 0x0a, Uint8Array.of(code, 0, 0, 0), true);
    expect(error).toMatchObject({ code: expected, detail: { status: 0x0a, activateErrorCode: code } });
  });

  it('says chipUnreadable only of a chip that could not be read (20, 24), never of one read that failed a step', () => {
    const detail = (code: number) =>
      errorForStatus('Activate', 0x0a, Uint8Array.of(code, 0, 0, 0), true).detail;
    for (const code of [0x20, 0x24])
      expect(detail(code), code.toString(16)).toMatchObject({ chipUnreadable: true });
    // Data authentication, processing restrictions, risk management, cardholder verification, online requested, a
    // generic error, an unknown code: the chip was read, or nothing says it could not be.
    for (const code of [0x23, 0x43, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x62, 0x99])
      expect(detail(code), code.toString(16)).not.toHaveProperty('chipUnreadable');
  });

  it('says chipUnreadable only of the contact chip: a failed tap (RF state, track source 00) says tapFailed instead', () => {
    const detail = (data: Uint8Array) => errorForStatus('Activate', 0x0a, data, true).detail;
    // Failure data: error code, SW1, SW2, RF state code, TLVs. A card communication error during the contactless
    // exchange (RF state 03, GPO) is a failed tap, whether or not the reader adds its track source (DF30 00).
    for (const data of [
      Uint8Array.of(0x24, 0, 0, 0x03),
      Uint8Array.of(0x20, 0x6f, 0x00, 0x04),
      Uint8Array.of(0x24, 0, 0, 0x00, ...hexToBytes('FFEE0104DF300100')),
      Uint8Array.of(0x24, 0, 0, 0x03, ...hexToBytes('FFEE0104DF300100')),
    ]) {
      const d = detail(data);
      expect(d, bytesToHex(data)).toMatchObject({ activateErrorCode: data[0], tapFailed: true });
      expect(d, bytesToHex(data)).not.toHaveProperty('chipUnreadable');
    }
    // No RF exchange (RF state 00) and nothing naming contactless: the contact chip failed.
    expect(detail(Uint8Array.of(0x24, 0, 0, 0))).toMatchObject({ chipUnreadable: true });
    expect(detail(Uint8Array.of(0x24, 0, 0, 0))).not.toHaveProperty('tapFailed');
    // No RF state code at all: nothing says which interface failed, so neither (no fallback on a guess).
    for (const data of [Uint8Array.of(0x24), Uint8Array.of(0x24, 0, 0)]) {
      expect(detail(data)).not.toHaveProperty('chipUnreadable');
      expect(detail(data)).not.toHaveProperty('tapFailed');
    }
    // Other errors during a tap are not a failed tap: their own codes say what happened.
    expect(detail(Uint8Array.of(0x50, 0, 0, 0x03))).not.toHaveProperty('tapFailed');
  });

  it('opens no fallback on TLVs it cannot read: RF state 00 with failure TLVs that do not decode says neither interface', () => {
    const detail = (data: Uint8Array) => errorForStatus('Activate', 0x0a, data, true).detail;
    // RF state 00 is no proof of the contact slot by itself (a tap may fail with RF state 00 and DF30 00): TLVs that
    // are cut short or malformed may have named contactless, so the stripe is not opened on them.
    for (const tlvs of ['FFEE01', 'FFEE0104DF30', 'FFEE0104DF3001', 'DF3005']) {
      const data = Uint8Array.of(0x24, 0, 0, 0x00, ...hexToBytes(tlvs));
      expect(detail(data), bytesToHex(data)).not.toHaveProperty('chipUnreadable');
      expect(detail(data), bytesToHex(data)).not.toHaveProperty('tapFailed');
      expect(detail(data), bytesToHex(data)).toMatchObject({ activateErrorCode: 0x24 });
    }
    // TLVs that decode and name no contactless exchange: still the contact chip.
    expect(detail(Uint8Array.of(0x24, 0, 0, 0x00, ...hexToBytes('DFEE260141')))).toMatchObject({
      chipUnreadable: true,
    });
  });

  it('maps status 08 to READER_TIMEOUT and other statuses to READER_PROTOCOL', () => {
    expect(errorForStatus('Ping', 0x08, new Uint8Array(0), false).code).toBe('READER_TIMEOUT');
    expect(errorForStatus('Ping', 0x0b, new Uint8Array(0), false)).toMatchObject({
      code: 'READER_PROTOCOL',
      detail: { status: 0x0b },
    });
  });

  it('maps status 08 of an Activate to CARD_NOT_PRESENTED: the reader answered that no card came in its wait', () => {
    expect(errorForStatus('Activate', 0x08, new Uint8Array(0), true)).toMatchObject({
      code: 'CARD_NOT_PRESENTED',
      detail: { status: 0x08 },
    });
  });
});
