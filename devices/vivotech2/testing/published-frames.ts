/**
 * Frames published in reader-protocol.md (from the ID TECH NEO 2 Interface Developer's Guide), as hex with the
 * grouping of the document, for the tests (a `testing/` folder: not built, not packaged). They hold only the vendor's
 * test card.
 */

const asciiHex = (s: string): string =>
  [...s].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()).join('');

/** Ping (18-01), host to reader. */
export const PING_REQUEST = '56 69 56 4F 74 65 63 68 32 00 18 01 00 00 B3 CD';
/** A healthy reader's answer to Ping. */
export const PING_REPLY = '56 69 56 4F 74 65 63 68 32 00 18 00 00 00 FA 83';
/** Track 1 of the vendor's magnetic-stripe-mode tap (no sentinels). */
export const VENDOR_TRACK1 = 'B6279257749132343^TEST CARD/VIVOTECH^10128130072104350000';
/** Track 2 of the same tap. */
export const VENDOR_TRACK2 = '6279257749132343=10128130072104350000';
/** Data of the vendor's Get Transaction Result reply: tracks 1 and 2, DE055-present byte, TLVs. */
export const VENDOR_DATA = `39 ${asciiHex(VENDOR_TRACK1)} 25 ${asciiHex(VENDOR_TRACK2)} 00 9F3501 22 9F3901 07 FFEE01 04 DF3001 00 DFEE26 01 41`;
/** The whole reply frame, LEN 0x0076, CRC 6A44 (high byte first). */
export const VENDOR_REPLY = `56 69 56 4F 74 65 63 68 32 00 03 00 00 76 ${VENDOR_DATA} 6A 44`;
