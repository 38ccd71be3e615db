import { describe, expect, it } from 'vitest';
import type { CardRead } from '../../devices/reader.js';
import { ReaderError } from '../../devices/reader.js';
import { hexToBytes } from '../emv/index.js';
import { CardStore } from './card-store.js';

/** A contact read of the reference card (emv.md): 5A and 57 as `pan5A` and `tag57` say. */
function contactRead(pan5A: string, tag57: string): CardRead {
  return {
    entryMode: 'contact',
    tlvs: [
      { tag: '5A', value: hexToBytes(pan5A) },
      { tag: '57', value: hexToBytes(tag57) },
    ],
    maskedPan: '476173******0119',
    fallback: false,
    readerStatus: 'ok',
  };
}

const TAG57 = '4761739001010119D22122011758928889';

describe('CardStore', () => {
  it('keeps a read whose 5A and 57 name the same card, with the PAN masked in its summary', () => {
    const store = new CardStore(Buffer.alloc(32, 7));
    const held = store.hold(contactRead('4761739001010119', TAG57));
    expect(held.data?.pan).toBe('4761739001010119');
    expect(held.summary).toMatchObject({ maskedPan: '476173******0119', cardType: '001', chip: true });
    expect(store.size).toBe(1);
  });

  it('refuses a read whose 5A and 57 name different cards: typed, no card data in the message, nothing kept', () => {
    const store = new CardStore(Buffer.alloc(32, 7));
    const read = contactRead('4111111111111111', TAG57);
    let error: unknown;
    try {
      store.hold(read);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ReaderError);
    expect(error).toMatchObject({ code: 'CARD_ERROR' });
    expect((error as Error).message).not.toMatch(/\d{6,}/);
    expect(store.size).toBe(0);
    // The refused read's card data is wiped, as a released one is.
    expect(read.tlvs.every((t) => t.value.every((b) => b === 0))).toBe(true);
  });
});
