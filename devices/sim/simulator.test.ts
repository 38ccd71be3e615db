import { describe, expect, it } from 'vitest';
import { bytesToHex, decodeTlv, encodeTlv, flattenTlv } from '../../src/emv/index.js';
import { buildActivateData, parseActivateReply } from '../vivotech2/commands.js';
import { encodeHostFrame, type RawFrame } from '../vivotech2/frame.js';
import { FrameParser } from '../vivotech2/parser.js';
import { errorForStatus } from '../vivotech2/status.js';
import { buildVirtualRead, VIRTUAL_CARD_NAMES, VIRTUAL_CARDS } from './cards.js';
import { RECEIVED_LIMIT, ReaderSimulator } from './simulator.js';

/** The simulator at the byte level: host frames in, reader frames out. */
function wire(sim: ReaderSimulator) {
  const parser = new FrameParser('reader-to-host');
  const replies: RawFrame[] = [];
  let unplugged = false;
  const endpoint = sim.attach({
    send: (bytes) => replies.push(...parser.push(bytes)),
    unplugged: () => {
      unplugged = true;
    },
  });
  const send = (cmd: number, sub: number, data?: Uint8Array): void =>
    endpoint.deliver(encodeHostFrame({ cmd, sub, ...(data ? { data } : {}) }));
  const until = async (n: number): Promise<RawFrame[]> => {
    while (replies.length < n) await new Promise((r) => setTimeout(r, 5));
    return replies;
  };
  return { send, until, replies, endpoint, isUnplugged: () => unplugged };
}

const ACTIVATE = buildActivateData({
  amountMinor: 1250,
  otherAmountMinor: 0,
  currencyNumeric: '826',
  countryNumeric: '826',
  transactionType: '00',
  timeoutSeconds: 5,
});

describe('ReaderSimulator', () => {
  it('answers Ping and its firmware version', async () => {
    const w = wire(new ReaderSimulator({ firmware: 'TEST FW 1' }));
    w.send(0x18, 0x01);
    w.send(0x29, 0x00);
    const [ping, fw] = await w.until(2);
    expect(ping).toMatchObject({ cmd: 0x18, code: 0x00 });
    expect(String.fromCharCode(...(fw?.data ?? []))).toBe('TEST FW 1');
  });

  it('answers nothing to a frame with a bad CRC', async () => {
    const sim = new ReaderSimulator();
    const w = wire(sim);
    const frame = encodeHostFrame({ cmd: 0x18, sub: 0x01 });
    frame[15] = (frame[15] as number) ^ 0xff;
    w.endpoint.deliver(frame);
    w.send(0x29, 0x00);
    const replies = await w.until(1);
    expect(replies.map((r) => r.cmd)).toEqual([0x29]);
    expect(sim.received).toEqual([{ cmd: 0x29, sub: 0x00 }]);
  });

  it('keeps only the most recent frames in `received`, so that a simulator pinged for days does not grow', async () => {
    const sim = new ReaderSimulator();
    const w = wire(sim);
    for (let i = 0; i < RECEIVED_LIMIT + 500; i++) w.send(0x18, 0x01);
    w.send(0x29, 0x00);
    await w.until(RECEIVED_LIMIT + 501);
    expect(sim.received).toHaveLength(RECEIVED_LIMIT);
    expect(sim.received.at(-1)).toEqual({ cmd: 0x29, sub: 0x00 });
  });

  it('answers unknown commands with 02 and unknown sub-commands with 03', async () => {
    const w = wire(new ReaderSimulator());
    w.send(0x77, 0x00);
    w.send(0x18, 0x09);
    expect((await w.until(2)).map((r) => r.code)).toEqual([0x02, 0x03]);
  });

  it('refuses any command but Cancel while an Activate is outstanding (status 0B)', async () => {
    const sim = new ReaderSimulator({ card: 'no-card' });
    const w = wire(sim);
    w.send(0x02, 0x01, ACTIVATE);
    w.send(0x18, 0x01);
    w.send(0x02, 0x01, ACTIVATE);
    expect((await w.until(2)).map((r) => [r.cmd, r.code])).toEqual([
      [0x18, 0x0b],
      [0x02, 0x0b],
    ]);
    expect(sim.refused).toBe(2);
    w.send(0x05, 0x01);
    expect((await w.until(3))[2]).toMatchObject({ cmd: 0x05, code: 0x00 });
  });

  it('refuses commands while it processes a Cancel, and never sends the cancelled result', async () => {
    const sim = new ReaderSimulator({ card: 'n2-contact', presentDelayMs: 0, cancelDelayMs: 30 });
    const w = wire(sim);
    w.send(0x02, 0x01, ACTIVATE);
    w.send(0x05, 0x01);
    w.send(0x18, 0x01);
    const replies = await w.until(2);
    expect(replies.map((r) => [r.cmd, r.code])).toEqual([
      [0x18, 0x0b],
      [0x05, 0x00],
    ]);
    await new Promise((r) => setTimeout(r, 100));
    expect(w.replies).toHaveLength(2);
  });

  it('reports a card, then the read with status 23 and the request echoed in DE055', async () => {
    const w = wire(new ReaderSimulator({ card: 'n1-contact', presentDelayMs: 0 }));
    w.send(0x02, 0x01, ACTIVATE);
    const [detected, result] = await w.until(2);
    expect(detected).toMatchObject({ cmd: 0x02, code: 0x0e, data: Uint8Array.of(0x01) });
    expect(result).toMatchObject({ cmd: 0x02, code: 0x23 });
  });

  it('says which interface failed: a failed tap with its RF state and track source, a failed chip without', async () => {
    const failure = async (card: string): Promise<ReturnType<typeof errorForStatus>> => {
      const w = wire(new ReaderSimulator({ card, presentDelayMs: 0 }));
      w.send(0x02, 0x01, ACTIVATE);
      const [, result] = await w.until(2);
      expect(result).toMatchObject({ cmd: 0x02, code: 0x0a });
      return errorForStatus('Activate', result?.code ?? 0, result?.data ?? new Uint8Array(0), true);
    };
    const tap = await failure('tap-fails-then-swiped');
    expect(tap).toMatchObject({ code: 'CARD_ERROR', detail: { activateErrorCode: 0x24, tapFailed: true } });
    expect(tap.detail).not.toHaveProperty('chipUnreadable');
    const chip = await failure('chip-fails-then-swiped');
    expect(chip).toMatchObject({
      code: 'CARD_ERROR',
      detail: { activateErrorCode: 0x24, chipUnreadable: true },
    });
    expect(chip.detail).not.toHaveProperty('tapFailed');
  });

  it('answers Activate with error 41 when the amount is missing and 03 when it is zero and zero amounts are not enabled', async () => {
    const w = wire(new ReaderSimulator({ acceptZeroAmount: false }));
    w.send(0x02, 0x01, Uint8Array.of(5));
    w.send(
      0x02,
      0x01,
      buildActivateData({
        amountMinor: 0,
        otherAmountMinor: 0,
        currencyNumeric: '826',
        countryNumeric: '826',
        transactionType: '00',
        timeoutSeconds: 5,
      }),
    );
    expect((await w.until(2)).map((r) => [r.code, r.data[0]])).toEqual([
      [0x0a, 0x41],
      [0x0a, 0x03],
    ]);
  });

  it('refuses with 05 an Activate whose amount, type, currency or country breaks its EMV format, starting no read', async () => {
    // The read echoes these values in DE055: a 3000-byte amount would make a reply no frame can carry.
    const request = (amount: Uint8Array): Uint8Array =>
      Uint8Array.from([
        5,
        ...encodeTlv([
          { tag: '9F02', length: amount.length, value: amount },
          { tag: '9C', length: 1, value: Uint8Array.of(0x00) },
          { tag: '5F2A', length: 2, value: Uint8Array.of(0x08, 0x26) },
        ]),
      ]);
    const w = wire(new ReaderSimulator({ presentDelayMs: 0 }));
    w.send(0x02, 0x01, request(new Uint8Array(3000)));
    w.send(0x02, 0x01, request(Uint8Array.of(0x00, 0x00, 0x00, 0x00, 0x12, 0x5a)));
    const [tooLong, notBcd] = await w.until(2);
    expect([tooLong?.code, notBcd?.code]).toEqual([0x05, 0x05]);
    // No read was started: the next command is answered, not refused as "transaction in progress" (0B).
    w.send(0x18, 0x01);
    expect((await w.until(3))[2]?.code).toBe(0x00);
  });

  it('dates the read (9A) by its clock in the terminal’s time zone, as a reader set to local time does', async () => {
    // 23:30 UTC on 24 November is already the 25th in Berlin.
    const now = (): Date => new Date(Date.UTC(2026, 10, 24, 23, 30));
    const dateOf = async (timeZone: string): Promise<string> => {
      const w = wire(new ReaderSimulator({ card: 'n2-contact', presentDelayMs: 0, now, timeZone }));
      w.send(0x02, 0x01, ACTIVATE);
      const [, result] = await w.until(2);
      const tag = parseActivateReply(result?.data ?? new Uint8Array()).tlvs.find((t) => t.tag === '9A');
      return bytesToHex(tag?.value ?? new Uint8Array());
    };
    expect(await dateOf('Europe/Berlin')).toBe('261125');
    expect(await dateOf('UTC')).toBe('261124');
    expect(await dateOf('America/New_York')).toBe('261124');
  });

  it('reads a card for a zero-amount purchase (account verification) when zero amounts are enabled', async () => {
    const w = wire(new ReaderSimulator({ presentDelayMs: 0 }));
    w.send(
      0x02,
      0x01,
      buildActivateData({
        amountMinor: 0,
        otherAmountMinor: 0,
        currencyNumeric: '826',
        countryNumeric: '826',
        transactionType: '00',
        timeoutSeconds: 5,
      }),
    );
    // 0E "card detected, transaction started", then 23 "request online authorization" with the card data.
    const replies = await w.until(2);
    expect(replies.map((r) => r.code)).toEqual([0x0e, 0x23]);
  });

  it('times out with status 08 when no card comes', async () => {
    const w = wire(new ReaderSimulator({ card: 'no-card' }));
    w.send(
      0x02,
      0x01,
      buildActivateData({
        amountMinor: 1,
        otherAmountMinor: 0,
        currencyNumeric: '826',
        countryNumeric: '826',
        transactionType: '00',
        timeoutSeconds: 1,
      }),
    );
    expect((await w.until(1))[0]).toMatchObject({ cmd: 0x02, code: 0x08 });
  });

  it('stores configuration TLVs and answers them back', async () => {
    const w = wire(new ReaderSimulator());
    w.send(0x04, 0x00, Uint8Array.of(0x9f, 0x1a, 0x02, 0x08, 0x26));
    w.send(0x03, 0x02);
    const [set, get] = await w.until(2);
    expect(set?.code).toBe(0x00);
    expect(bytesToHex(get?.data ?? new Uint8Array(0))).toBe('9F1A020826');
    w.send(0x04, 0x00, Uint8Array.of(0x9f));
    expect((await w.until(3))[2]?.code).toBe(0x07);
  });

  it('refuses with 0D (buffer overflow) a configuration too large to answer in one frame, and still answers Get', async () => {
    // 30 tags of 127 bytes fill one Set configuration frame (3900 bytes); two such frames hold more than one reply
    // frame can carry (MAX_DATA_LENGTH).
    const tlvs = (firstTag: number): Uint8Array =>
      Uint8Array.from(
        Array.from({ length: 30 }, (_, i) => [
          0xdf,
          firstTag + i,
          127,
          ...new Uint8Array(127).fill(i),
        ]).flat(),
      );
    const w = wire(new ReaderSimulator());
    w.send(0x04, 0x00, tlvs(0x01));
    w.send(0x04, 0x00, tlvs(0x21));
    expect(() => w.send(0x03, 0x02)).not.toThrow();
    const [first, second, get] = await w.until(3);
    expect(first?.code).toBe(0x00);
    expect(second?.code).toBe(0x0d);
    expect(get?.code).toBe(0x00);
    expect(get?.data.length).toBe(3900);
  });

  it('unplugs: the link learns it, and attaching fails until plugged', () => {
    const sim = new ReaderSimulator();
    const w = wire(sim);
    sim.unplug();
    expect(w.isUnplugged()).toBe(true);
    expect(() => sim.attach({ send: () => undefined, unplugged: () => undefined })).toThrow(/unplugged/);
    sim.plug();
    expect(() => sim.attach({ send: () => undefined, unplugged: () => undefined })).not.toThrow();
  });

  it('refuses an unknown virtual card', () => {
    expect(() => new ReaderSimulator().setCard('no-such-card')).toThrow(RangeError);
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      expect(() => new ReaderSimulator().setCard(name)).toThrow(RangeError);
      expect(() => new ReaderSimulator({ card: name })).toThrow(RangeError);
    }
  });
});

describe('virtual cards', () => {
  const request = new Map([['9F02', Uint8Array.of(0, 0, 0, 0, 0x12, 0x50)]]);
  it('lists every card once, by name', () => {
    expect(VIRTUAL_CARD_NAMES.length).toBeGreaterThanOrEqual(20);
    for (const name of VIRTUAL_CARD_NAMES) expect(VIRTUAL_CARDS[name]?.name).toBe(name);
  });

  it('builds chip reads whose TLVs decode, with the amount of the request', () => {
    for (const card of Object.values(VIRTUAL_CARDS)) {
      if (card.outcome.kind !== 'read') continue;
      const read = buildVirtualRead(card.outcome.card, card.outcome.entryMode, {
        request,
        date: '261122',
        sequence: 0,
      });
      const tags = flattenTlv(decodeTlv(read.tlvs));
      if (read.de055Present)
        expect(bytesToHex(tags.find((t) => t.tag === '9F02')?.value ?? new Uint8Array(0))).toBe(
          '000000001250',
        );
      else expect(read.track2).toMatch(/\d{16}=\d{7}/);
    }
  });

  it('changes the ATC and the cryptogram from one read to the next', () => {
    const outcome = VIRTUAL_CARDS['n2-contact']?.outcome;
    if (outcome?.kind !== 'read') throw new Error('n2-contact is a read');
    const tag = (seq: number, t: string): string =>
      bytesToHex(
        flattenTlv(
          decodeTlv(
            buildVirtualRead(outcome.card, 'contact', { request, date: '261122', sequence: seq }).tlvs,
          ),
        ).find((x) => x.tag === t)?.value ?? new Uint8Array(0),
      );
    expect(tag(0, '9F36')).not.toBe(tag(1, '9F36'));
    expect(tag(0, '9F26')).not.toBe(tag(1, '9F26'));
  });
});
