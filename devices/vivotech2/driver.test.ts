import { afterEach, describe, expect, it, vi } from 'vitest';
import { hexToBytes } from '../../src/emv/index.js';
import { ReaderError, type ActivateOptions, type ReaderHealth } from '../reader.js';
import type { Transport, TransportConnection, TransportEvents } from '../transports/transport.js';
import { encodeActivateReply } from './commands.js';
import { backoffDelay, INTER_BYTE_GAP_MS, ViVOtech2Reader, type DriverOptions } from './driver.js';
import {
  decodeFrame,
  encodeReaderFrame,
  FRAME_HEADER,
  FRAME_OVERHEAD,
  MAX_DATA_LENGTH,
  type DecodedFrame,
} from './frame.js';
import { xorshift32 } from '../../src/emv/testing/xorshift.js';
import { createLogger } from '../../src/log/index.js';

/** A scripted reader at the byte level: every host frame is decoded and handed to `answer`. */
class ScriptedTransport implements Transport {
  readonly description = 'scripted';
  readonly sent: DecodedFrame[] = [];
  events: TransportEvents | undefined;
  opens = 0;
  failOpen = false;
  /** Default: answer Ping and Set poll mode with OK; leave the rest to the test. */
  answer: (frame: DecodedFrame) => void = (f) => {
    if (f.cmd === 0x18 || f.cmd === 0x01) this.reply(f.cmd, 0);
    if (f.cmd === 0x29) this.reply(f.cmd, 0, Uint8Array.from([...'NEO v1.2\0'].map((c) => c.charCodeAt(0))));
  };

  open(events: TransportEvents): Promise<TransportConnection> {
    this.opens++;
    if (this.failOpen) return Promise.reject(new ReaderError('READER_UNAVAILABLE', 'no device'));
    this.events = events;
    return Promise.resolve({
      write: (bytes) => {
        const frame = decodeFrame(bytes, 'host-to-reader');
        this.sent.push(frame);
        setImmediate(() => this.answer(frame));
        return Promise.resolve();
      },
      close: () => {
        this.events = undefined;
        return Promise.resolve();
      },
    });
  }

  reply(cmd: number, status: number, data?: Uint8Array): void {
    this.events?.data(encodeReaderFrame({ cmd, status, ...(data ? { data } : {}) }));
  }

  unplug(): void {
    const events = this.events;
    this.events = undefined;
    events?.closed(new Error('gone'));
  }

  commands(): string[] {
    return this.sent.map(
      (f) => `${f.cmd.toString(16).padStart(2, '0')}-${f.code.toString(16).padStart(2, '0')}`,
    );
  }
}

const OPTIONS: DriverOptions = {
  commandTimeoutMs: 150,
  watchdogMs: 60_000,
  reconnectInitialMs: 10,
  reconnectMaxMs: 40,
  track3: 'auto',
};

const ACTIVATE: ActivateOptions = {
  amountMinor: 500,
  otherAmountMinor: 0,
  currencyNumeric: '978',
  countryNumeric: '276',
  transactionType: '00',
  timeoutSeconds: 1,
};

const CARD_READ = encodeActivateReply({
  track3Field: false,
  de055Present: true,
  tlvs: hexToBytes('5A084761739001010119 9F26081122334455667788 9F390105'),
});

const readers: ViVOtech2Reader[] = [];
async function connected(
  transport: ScriptedTransport,
  options: Partial<DriverOptions> = {},
): Promise<ViVOtech2Reader> {
  const reader = new ViVOtech2Reader(transport, { ...OPTIONS, ...options });
  readers.push(reader);
  await reader.connect();
  return reader;
}
const once = (reader: ViVOtech2Reader, event: 'reconnected' | 'card-detected'): Promise<void> =>
  new Promise((resolve) => reader.on(event, () => resolve()));

afterEach(async () => {
  await Promise.all(readers.splice(0).map((r) => r.close()));
});

describe('ViVOtech2Reader', () => {
  it('connects with Ping, Set poll mode (poll on demand) and Get firmware version', async () => {
    const t = new ScriptedTransport();
    const healths: ReaderHealth[] = [];
    const reader = new ViVOtech2Reader(t, OPTIONS);
    readers.push(reader);
    reader.on('health', (h) => healths.push(h));
    await reader.connect();
    expect(t.commands()).toEqual(['18-01', '01-01', '29-00']);
    expect(t.sent[1]?.data).toEqual(Uint8Array.of(0x01));
    expect(healths).toEqual(['connecting', 'ready']);
  });

  it('shares one connection attempt between concurrent connect calls', async () => {
    const t = new ScriptedTransport();
    const reader = new ViVOtech2Reader(t, OPTIONS);
    readers.push(reader);
    await Promise.all([reader.connect(), reader.connect()]);
    await reader.connect();
    expect(t.opens).toBe(1);
    expect(reader.health).toBe('ready');
  });

  it('refuses a command before connect with READER_NOT_CONNECTED', async () => {
    const reader = new ViVOtech2Reader(new ScriptedTransport(), OPTIONS);
    readers.push(reader);
    await expect(reader.ping()).rejects.toMatchObject({ code: 'READER_NOT_CONNECTED' });
  });

  it('answers the firmware version read at connect, as ASCII without trailing NULs, without a round trip', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    const sent = t.sent.length;
    await expect(reader.firmwareVersion()).resolves.toBe('NEO v1.2');
    expect(t.sent.length).toBe(sent);
  });

  it('connects when the reader cannot say its firmware, and asks again when asked', async () => {
    const t = new ScriptedTransport();
    const answer = t.answer;
    t.answer = (f) => (f.cmd === 0x29 ? t.reply(f.cmd, 0x02) : answer(f));
    const reader = await connected(t);
    expect(reader.health).toBe('ready');
    t.answer = answer;
    await expect(reader.firmwareVersion()).resolves.toBe('NEO v1.2');
  });

  it('makes a caller wait for its own watchdog ping instead of failing with READER_BUSY', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { watchdogMs: 10 });
    let answerPing: (() => void) | undefined;
    const watchdogSent = new Promise<void>((resolve) => {
      t.answer = (f) => {
        if (f.cmd === 0x18 && !answerPing) {
          answerPing = () => t.reply(0x18, 0);
          resolve();
        } else t.reply(f.cmd, 0x0a, Uint8Array.of(0x26, 0, 0, 0));
      };
    });
    await watchdogSent;
    const activate = reader.activate(ACTIVATE);
    answerPing?.();
    await expect(activate).rejects.toMatchObject({ code: 'CARD_EXPIRED' });
  });

  it('cancels an activate that is still waiting for the watchdog ping, sending nothing for it', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { watchdogMs: 10 });
    let answerPing: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      t.answer = (f) => {
        if (f.cmd === 0x18) {
          answerPing = () => t.reply(0x18, 0);
          resolve();
        }
      };
    });
    const activate = reader.activate(ACTIVATE);
    await reader.cancel();
    answerPing?.();
    await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    expect(t.commands()).not.toContain('02-01');
  });

  it('refuses an overlapping command with READER_BUSY and sends nothing for it', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = () => undefined;
    const activate = reader.activate(ACTIVATE);
    await expect(reader.ping()).rejects.toMatchObject({ code: 'READER_BUSY' });
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_BUSY' });
    expect(t.commands().filter((c) => c === '18-01')).toHaveLength(1);
    t.answer = (f) => t.reply(f.cmd, 0);
    await reader.cancel();
    await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
  });

  it('times out a command with no answer, resynchronises, and answers the next one', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => t.events?.data(encodeReaderFrame({ cmd: f.cmd, status: 0 }).subarray(0, 9));
    await expect(reader.ping()).rejects.toMatchObject({ code: 'READER_TIMEOUT' });
    t.answer = (f) => t.reply(f.cmd, 0);
    await expect(reader.ping()).resolves.toBeUndefined();
  });

  it('returns the card read and emits card-detected on status 0E', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => {
      if (f.cmd !== 0x02) return;
      t.reply(0x02, 0x0e, Uint8Array.of(0x01));
      t.reply(0x02, 0x23, CARD_READ);
    };
    const detected = once(reader, 'card-detected');
    const read = await reader.activate(ACTIVATE);
    await detected;
    expect(read).toMatchObject({
      entryMode: 'contact',
      maskedPan: '476173******0119',
      readerStatus: 'online-requested',
    });
    expect(reader.health).toBe('ready');
  });

  it('turns an Activate failure into the typed card error', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => t.reply(f.cmd, 0x0a, Uint8Array.of(0x21, 0, 0, 0));
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({
      code: 'CARD_COLLISION',
      detail: { activateErrorCode: 0x21 },
    });
  });

  it('turns a malformed card read into READER_PROTOCOL', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => t.reply(f.cmd, 0x23, hexToBytes('00 00 01 9F2608 11'));
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_PROTOCOL' });
  });

  it('sends Cancel, sends nothing else until the reader answers it, then rejects the activate as cancelled', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    let answerCancel: (() => void) | undefined;
    t.answer = (f) => {
      if (f.cmd === 0x05) answerCancel = () => t.reply(0x05, 0);
    };
    const activate = reader.activate(ACTIVATE);
    const cancelled = reader.cancel();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    await expect(reader.ping()).rejects.toMatchObject({ code: 'READER_BUSY' });
    expect(t.commands().slice(-2)).toEqual(['02-01', '05-01']);
    answerCancel?.();
    await cancelled;
    await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    t.answer = (f) => t.reply(f.cmd, 0);
    await expect(reader.ping()).resolves.toBeUndefined();
  });

  it('starts a read asked for while a cancel awaits its answer once the reader answers it, instead of failing busy', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    let answerCancel: (() => void) | undefined;
    t.answer = (f) => {
      if (f.cmd === 0x05) answerCancel = () => t.reply(0x05, 0);
      if (f.cmd === 0x02 && t.commands().filter((c) => c === '02-01').length === 2)
        t.reply(0x02, 0x23, CARD_READ);
    };
    const first = reader.activate(ACTIVATE);
    const cancelled = reader.cancel();
    await new Promise((r) => setImmediate(r));
    // The customer cancelled and presents the card again at once: the next read waits for the cancel's answer.
    const second = reader.activate(ACTIVATE);
    await new Promise((r) => setImmediate(r));
    expect(t.commands().slice(-2)).toEqual(['02-01', '05-01']);
    answerCancel?.();
    await cancelled;
    await expect(first).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    await expect(second).resolves.toMatchObject({ entryMode: expect.any(String) as string });
    expect(t.commands().slice(-3)).toEqual(['02-01', '05-01', '02-01']);
  });

  it('discards a card read that arrives after a cancel instead of giving it to the next activate', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => {
      // The reader had already read the card when the Cancel came: the late result precedes the Cancel's answer.
      if (f.cmd === 0x05) {
        t.reply(0x02, 0x23, CARD_READ);
        t.reply(0x05, 0);
      }
    };
    const first = reader.activate(ACTIVATE);
    await reader.cancel();
    await expect(first).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    t.answer = (f) => {
      if (f.cmd === 0x02) t.reply(0x02, 0x0a, Uint8Array.of(0x26, 0, 0, 0));
    };
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'CARD_EXPIRED' });
    expect(reader.discardedFrames).toBe(1);
  });

  it('stops the reader with Cancel when an activate times out, and discards its late read', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { commandTimeoutMs: 50 });
    let late: (() => void) | undefined;
    t.answer = (f) => {
      if (f.cmd === 0x05) t.reply(0x05, 0);
      if (f.cmd === 0x02) late = () => t.reply(0x02, 0x23, CARD_READ);
    };
    await expect(reader.activate({ ...ACTIVATE, timeoutSeconds: 1 })).rejects.toMatchObject({
      code: 'READER_TIMEOUT',
    });
    expect(t.commands().slice(-2)).toEqual(['02-01', '05-01']);
    late?.();
    t.answer = (f) => t.reply(f.cmd, 0);
    await expect(reader.ping()).resolves.toBeUndefined();
    expect(reader.discardedFrames).toBe(1);
  });

  it('tells no card presented (status 08) from a reader that did not answer, and logs only the reader fault', async () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    const t = new ScriptedTransport();
    const reader = new ViVOtech2Reader(t, { ...OPTIONS, commandTimeoutMs: 50 }, logger);
    readers.push(reader);
    await reader.connect();
    t.answer = (f) => {
      if (f.cmd === 0x02) t.reply(0x02, 0x08);
      else t.reply(f.cmd, 0);
    };
    await expect(reader.activate({ ...ACTIVATE, timeoutSeconds: 1 })).rejects.toMatchObject({
      code: 'CARD_NOT_PRESENTED',
      detail: { status: 0x08 },
    });
    // The reader ended the read itself: no Cancel, ready for the next, nothing for the operator.
    expect(t.commands().at(-1)).toBe('02-01');
    expect(reader.health).toBe('ready');
    expect(lines.filter((l) => l.includes('"level":40'))).toEqual([]);
    t.answer = (f) => {
      if (f.cmd === 0x05) t.reply(0x05, 0);
      else if (f.cmd !== 0x02) t.reply(f.cmd, 0);
    };
    await expect(reader.activate({ ...ACTIVATE, timeoutSeconds: 1 })).rejects.toMatchObject({
      code: 'READER_TIMEOUT',
    });
    expect(lines.filter((l) => l.includes('"level":40') && l.includes('READER_TIMEOUT'))).toHaveLength(1);
  });

  it('takes no card read from inside a reply whose CRC is wrong, and logs the rejected frame without its data', async () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    const t = new ScriptedTransport();
    const reader = new ViVOtech2Reader(t, { ...OPTIONS, commandTimeoutMs: 50 }, logger);
    readers.push(reader);
    await reader.connect();
    // A value the card chose (DF01) holds the bytes of a whole reply with a good CRC and another card number.
    const inner = encodeReaderFrame({
      cmd: 0x02,
      status: 0x23,
      data: encodeActivateReply({
        track3Field: false,
        de055Present: true,
        tlvs: hexToBytes('5A085555555555554444'),
      }),
    });
    const outer = encodeReaderFrame({
      cmd: 0x02,
      status: 0x23,
      data: encodeActivateReply({
        track3Field: false,
        de055Present: true,
        tlvs: hexToBytes(
          `DF01${inner.length.toString(16).padStart(2, '0')}${Buffer.from(inner).toString('hex')}5A084761739001010119`,
        ),
      }),
    });
    outer[outer.length - 4] = (outer[outer.length - 4] as number) ^ 0x01;
    t.answer = (f) => {
      if (f.cmd === 0x02) t.events?.data(outer);
      else t.reply(f.cmd, 0);
    };
    await expect(reader.activate({ ...ACTIVATE, timeoutSeconds: 1 })).rejects.toMatchObject({
      code: 'READER_TIMEOUT',
    });
    const rejected = lines.filter((l) => l.includes('FRAME_BAD_CRC'));
    expect(rejected).toHaveLength(1);
    expect(lines.join('\n')).not.toMatch(/4761|5555|4444|0119/);
  });

  /**
   * The first Cancel of a read: `unanswered` — the reader is stuck on the read, answers neither it nor the Cancel in
   * time, then wakes up and sends the read's result late; `refused` — the reader is in the middle of the card and
   * refuses the Cancel (status 0A), the read's result coming afterwards. Either way the next activate cancels again,
   * and the late read never reaches it.
   */
  for (const firstCancel of ['unanswered', 'refused'] as const)
    it(`cancels again before the next activate when a Cancel was ${firstCancel === 'unanswered' ? 'unanswered' : 'refused (status 0A)'}, so its late read never reaches it`, async () => {
      const t = new ScriptedTransport();
      const reader = await connected(t, firstCancel === 'unanswered' ? { commandTimeoutMs: 50 } : {});
      let activates = 0;
      let cancels = 0;
      let staleSent = false;
      const stale = (): void => {
        if (staleSent) return;
        staleSent = true;
        t.reply(0x02, 0x23, CARD_READ);
      };
      t.answer = (f) => {
        if (f.cmd === 0x05) {
          cancels += 1;
          if (firstCancel === 'refused' && cancels === 1) t.reply(0x05, 0x0a);
          else if (cancels >= 2) {
            stale();
            t.reply(0x05, 0);
          }
        }
        if (f.cmd === 0x02 && ++activates === 2) {
          stale();
          t.reply(0x02, 0x0a, Uint8Array.of(0x26, 0, 0, 0));
        }
      };
      const first = reader.activate(ACTIVATE);
      await new Promise((r) => setImmediate(r));
      await reader.cancel();
      await expect(first).rejects.toMatchObject({ code: 'READER_CANCELLED' });
      await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'CARD_EXPIRED' });
      expect(t.commands().slice(-4)).toEqual(['02-01', '05-01', '05-01', '02-01']);
      expect(reader.discardedFrames).toBe(1);
    });

  it('ends an activate cancelled while its repeated Cancel awaits the answer, sending no read', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { commandTimeoutMs: 50 });
    let cancels = 0;
    t.answer = (f) => {
      if (f.cmd === 0x05 && ++cancels >= 2) setTimeout(() => t.reply(0x05, 0), 10);
    };
    const first = reader.activate(ACTIVATE);
    await new Promise((r) => setImmediate(r));
    await reader.cancel();
    await expect(first).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    const second = reader.activate(ACTIVATE);
    await new Promise((r) => setImmediate(r));
    await reader.cancel();
    await expect(second).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    expect(t.commands().slice(-3)).toEqual(['02-01', '05-01', '05-01']);
    // Confirmed: the next read starts at once.
    t.answer = (f) => {
      if (f.cmd === 0x02) t.reply(0x02, 0x23, CARD_READ);
    };
    await expect(reader.activate(ACTIVATE)).resolves.toMatchObject({ maskedPan: '476173******0119' });
    expect(t.commands().slice(-1)).toEqual(['02-01']);
  });

  it('fails the next activate with READER_TIMEOUT, sending no read, while the reader still answers no Cancel', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { commandTimeoutMs: 50 });
    t.answer = () => undefined;
    const first = reader.activate(ACTIVATE);
    await new Promise((r) => setImmediate(r));
    await reader.cancel();
    await expect(first).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_TIMEOUT' });
    expect(t.commands().slice(-3)).toEqual(['02-01', '05-01', '05-01']);
  });

  it('treats an abort of the signal as a cancel', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => {
      if (f.cmd === 0x05) t.reply(0x05, 0);
    };
    const controller = new AbortController();
    const activate = reader.activate({ ...ACTIVATE, signal: controller.signal });
    controller.abort();
    await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
    expect(t.commands()).toContain('05-01');
  });

  it('fails the activate with READER_DISCONNECTED when the transport closes, then reconnects', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    const disconnected: ReaderError[] = [];
    reader.on('disconnected', (e) => disconnected.push(e));
    const errors: ReaderError[] = [];
    reader.on('error', (e) => errors.push(e));
    t.answer = (f) => {
      if (f.cmd === 0x02) {
        t.failOpen = true;
        t.unplug();
      }
    };
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_DISCONNECTED' });
    expect(disconnected.map((e) => e.code)).toEqual(['READER_DISCONNECTED']);
    expect(reader.health).toBe('reconnecting');
    await expect(reader.ping()).rejects.toMatchObject({ code: 'READER_NOT_CONNECTED' });
    // Let a few attempts fail, then plug back in.
    while (errors.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(errors.every((e) => e.code === 'READER_UNAVAILABLE')).toBe(true);
    const reconnected = once(reader, 'reconnected');
    t.answer = (f) => t.reply(f.cmd, 0);
    t.failOpen = false;
    await reconnected;
    expect(reader.health).toBe('ready');
    await expect(reader.ping()).resolves.toBeUndefined();
  });

  /**
   * A reader with its own power (RS-232, a powered hub) keeps the read it was in when the link went away, and sends
   * its result on the next link: the next activate cancels it first, so that this read never reaches it.
   */
  it('cancels the read a reader may still be in after the link went away mid-activate, so its late read never reaches the next one', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => {
      if (f.cmd === 0x02) t.unplug();
    };
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_DISCONNECTED' });
    const reconnected = once(reader, 'reconnected');
    let staleSent = false;
    const stale = (): void => {
      if (staleSent) return;
      staleSent = true;
      t.reply(0x02, 0x23, CARD_READ);
    };
    t.answer = (f) => {
      if (f.cmd === 0x18 || f.cmd === 0x01 || f.cmd === 0x29) t.reply(f.cmd, 0);
      if (f.cmd === 0x05) {
        stale();
        t.reply(0x05, 0);
      }
      if (f.cmd === 0x02) {
        stale();
        t.reply(0x02, 0x0a, Uint8Array.of(0x26, 0, 0, 0));
      }
    };
    await reconnected;
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'CARD_EXPIRED' });
    expect(t.commands().slice(-5)).toEqual(['05-01', '18-01', '01-01', '29-00', '02-01']);
    expect(reader.discardedFrames).toBe(1);
  });

  it('finds again a reader that stayed in the read the link lost, refusing all but Cancel, by cancelling it first', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    let inRead = false;
    t.answer = (f) => {
      if (f.cmd === 0x05) {
        inRead = false;
        t.reply(0x05, 0);
      } else if (inRead) t.reply(f.cmd, 0x0b);
      else if (f.cmd === 0x02) {
        inRead = true;
        t.unplug();
      } else t.reply(f.cmd, 0);
    };
    const errors: ReaderError[] = [];
    reader.on('error', (e) => errors.push(e));
    let reconnected = false;
    reader.on('reconnected', () => (reconnected = true));
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_DISCONNECTED' });
    while (!reconnected && errors.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(errors.map((e) => e.code)).toEqual([]);
    expect(reconnected).toBe(true);
    expect(t.commands().slice(-4)).toEqual(['05-01', '18-01', '01-01', '29-00']);
    await expect(reader.ping()).resolves.toBeUndefined();
  });

  it('cancels before the next activate when the reader refused one as not allowed (0B), so the read it was in never reaches it', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    let activates = 0;
    let staleSent = false;
    const stale = (): void => {
      if (staleSent) return;
      staleSent = true;
      t.reply(0x02, 0x23, CARD_READ);
    };
    t.answer = (f) => {
      if (f.cmd === 0x05) {
        stale();
        t.reply(0x05, 0);
      }
      if (f.cmd === 0x02 && ++activates === 1) t.reply(0x02, 0x0b);
      else if (f.cmd === 0x02) {
        stale();
        t.reply(0x02, 0x0a, Uint8Array.of(0x26, 0, 0, 0));
      }
    };
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({
      code: 'READER_PROTOCOL',
      detail: { status: 0x0b },
    });
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'CARD_EXPIRED' });
    expect(t.commands().slice(-3)).toEqual(['02-01', '05-01', '02-01']);
    expect(reader.discardedFrames).toBe(1);
  });

  it('sends no read into the handshake of a reconnect: an activate meanwhile fails READER_NOT_CONNECTED', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    // The link comes back, the reader behind it does not answer yet: each handshake's Ping waits out its timeout.
    t.answer = () => undefined;
    const before = t.sent.length;
    t.unplug();
    while (!t.sent.slice(before).some((f) => f.cmd === 0x18)) await new Promise((r) => setTimeout(r, 1));
    await expect(reader.activate(ACTIVATE)).rejects.toMatchObject({ code: 'READER_NOT_CONNECTED' });
    expect(t.commands().slice(before)).not.toContain('02-01');
  });

  it('keeps retrying in the background when the first connect fails', async () => {
    const t = new ScriptedTransport();
    t.failOpen = true;
    const reader = new ViVOtech2Reader(t, OPTIONS);
    readers.push(reader);
    await expect(reader.connect()).rejects.toMatchObject({ code: 'READER_UNAVAILABLE' });
    expect(reader.health).toBe('reconnecting');
    const reconnected = once(reader, 'reconnected');
    t.failOpen = false;
    await reconnected;
    expect(reader.health).toBe('ready');
  });

  it('pings while idle and reconnects a reader that stopped answering', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t, { watchdogMs: 20, commandTimeoutMs: 50 });
    const pingsBefore = t.commands().length;
    t.answer = () => undefined;
    const disconnected = new Promise<ReaderError>((resolve) => reader.on('disconnected', resolve));
    reader.on('error', () => undefined);
    const error = await disconnected;
    expect(error.code).toBe('READER_DISCONNECTED');
    expect(t.commands().length).toBeGreaterThan(pingsBefore);
    const reconnected = once(reader, 'reconnected');
    t.answer = (f) => t.reply(f.cmd, 0);
    await reconnected;
    expect(t.opens).toBeGreaterThanOrEqual(2);
  });

  it('rejects what is outstanding when closed, and stops reconnecting', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = () => undefined;
    const activate = reader.activate(ACTIVATE);
    await reader.close();
    await expect(activate).rejects.toMatchObject({ code: 'READER_DISCONNECTED' });
    expect(reader.health).toBe('disconnected');
  });
});

describe('backoffDelay', () => {
  it('doubles from the initial delay and never exceeds the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 60].map((n) => backoffDelay(n, 250, 3000))).toEqual([
      250, 500, 1000, 2000, 3000, 3000, 3000,
    ]);
  });
});

describe('ViVOtech2Reader on a noisy line (fixed seed)', () => {
  const concat = (parts: Uint8Array[]): Uint8Array => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };

  it('hands each command its own answer when replies are split at every byte boundary', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    let reply: Uint8Array = new Uint8Array(0);
    let cut = 0;
    t.answer = (f) => {
      if (f.cmd !== 0x02) return;
      // Card detected, then the read: two frames, cut into two reads at `cut`.
      reply = concat([
        encodeReaderFrame({ cmd: 0x02, status: 0x0e, data: Uint8Array.of(0x01) }),
        encodeReaderFrame({ cmd: 0x02, status: 0x23, data: CARD_READ }),
      ]);
      t.events?.data(reply.slice(0, cut));
      setImmediate(() => t.events?.data(reply.slice(cut)));
    };
    const total = FRAME_OVERHEAD * 2 + 1 + CARD_READ.length;
    for (cut = 0; cut <= total; cut++) {
      await expect(reader.activate(ACTIVATE)).resolves.toMatchObject({ maskedPan: '476173******0119' });
    }
    expect(reader.discardedFrames).toBe(0);
  });

  /** A card read whose card data (tag DF01) holds a whole card read of another card, with a good CRC. */
  const fake = encodeReaderFrame({
    cmd: 0x02,
    status: 0x23,
    data: encodeActivateReply({
      track3Field: false,
      de055Present: true,
      tlvs: hexToBytes('5A085555555555554444'),
    }),
  });
  const hidden = Uint8Array.from([0xdf, 0x01, fake.length, ...fake]);
  const CARRIER = encodeReaderFrame({
    cmd: 0x02,
    status: 0x23,
    data: encodeActivateReply({
      track3Field: false,
      de055Present: true,
      tlvs: Uint8Array.from([...hidden, ...hexToBytes('5A084761739001010119')]),
    }),
  });
  /** Where the first read ends: inside the outer frame, after the end of the hidden one. */
  const FIRST_READ = CARRIER.indexOf(0xdf) + hidden.length + 2;

  it('reads the card of a reply that arrives in two reads, not a reply hidden in its card data', async () => {
    const t = new ScriptedTransport();
    const reader = await connected(t);
    t.answer = (f) => {
      if (f.cmd !== 0x02) return;
      t.events?.data(CARRIER.slice(0, FIRST_READ));
      setImmediate(() => t.events?.data(CARRIER.slice(FIRST_READ)));
    };
    await expect(reader.activate(ACTIVATE)).resolves.toMatchObject({ maskedPan: '476173******0119' });
    expect(reader.rejectedFrames).toBe(0);
  });

  it('waits one more gap when the gap ran out while the event loop was held, so a reply in two reads is read whole', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const t = new ScriptedTransport();
      const reader = await connected(t);
      let firstRead = false;
      t.answer = (f) => {
        if (f.cmd !== 0x02) return;
        t.events?.data(CARRIER.slice(0, FIRST_READ));
        firstRead = true;
      };
      let result: unknown;
      reader.activate(ACTIVATE).then(
        (r) => (result = r.maskedPan),
        (e: unknown) => (result = e),
      );
      while (!firstRead) await new Promise((r) => setImmediate(r));
      // The event loop is held for five gaps: the gap timer runs late, before the rest of the reply, read meanwhile,
      // is delivered.
      vi.setSystemTime(Date.now() + 5 * INTER_BYTE_GAP_MS);
      await vi.advanceTimersByTimeAsync(INTER_BYTE_GAP_MS);
      expect(result).toBeUndefined();
      t.events?.data(CARRIER.slice(FIRST_READ));
      await new Promise((r) => setImmediate(r));
      expect(result).toBe('476173******0119');
      expect(reader.rejectedFrames).toBe(0);
      // A gap that runs on time after a frame cut short still frees the line.
      t.events?.data(CARRIER.slice(0, FIRST_READ));
      await vi.advanceTimersByTimeAsync(INTER_BYTE_GAP_MS);
      expect(reader.rejectedFrames).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('finds every answer behind garbage, bad CRCs, truncated frames and stray replies once the line goes quiet, and never hangs', async () => {
    // Only setTimeout and the clock are faked: the reader's bytes come in real turns of the event loop, and no time
    // passes but the inter-byte gap this test lets pass after each answer — on the reader's clock too, which judges a
    // gap timer that ran late (with the real clock, a machine busy for two gaps between a burst and the test's advance
    // made every such timer look late). The command timeout is far beyond it: an answer held back by a frame cut short
    // is found by the gap, or not at all.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const next = xorshift32(0x0ca7d00d);
    const t = new ScriptedTransport();
    const reader = await connected(t, { commandTimeoutMs: 600_000 });
    /** Frame starts cut short: their LEN is set once the bytes behind them are known. */
    const cut = new Set<Uint8Array>();
    const noise = (): Uint8Array[] => {
      const parts: Uint8Array[] = [];
      const kinds = next() % 5;
      for (let k = 0; k < kinds; k++) {
        switch (next() % 5) {
          case 0: {
            // Line noise, sometimes holding the start of a header.
            const g = Uint8Array.from({ length: 10 + (next() % 40) }, () => next() & 0xff);
            if (next() % 2 === 0) {
              const partial = FRAME_HEADER.subarray(0, 1 + (next() % 9));
              g.set(partial, next() % (g.length - partial.length + 1));
            }
            parts.push(g);
            break;
          }
          case 1: {
            // A reply to the same command with a wrong CRC: never accepted.
            const bad = encodeReaderFrame({ cmd: 0x02, status: 0x23, data: CARD_READ });
            bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ (1 + (next() % 255));
            parts.push(bad);
            break;
          }
          case 2: {
            // A frame cut short: its header and LEN, then nothing of its data before the frames behind it.
            const head = encodeReaderFrame({ cmd: 0x02, status: 0x00, data: new Uint8Array(0) }).slice(0, 14);
            cut.add(head);
            parts.push(head);
            break;
          }
          case 3:
            // An absurd LEN.
            parts.push(Uint8Array.from([...FRAME_HEADER, 0x02, 0x00, 0xff, 0xff]));
            break;
          default:
            // A reply to a command nobody sent.
            parts.push(encodeReaderFrame({ cmd: 0x29, status: 0x00, data: Uint8Array.of(0x41) }));
        }
      }
      return parts;
    };
    let wire: Uint8Array = new Uint8Array(0);
    let delivering = false;
    let bursts = 0;
    t.answer = (f) => {
      const answer =
        f.cmd === 0x02
          ? encodeReaderFrame({ cmd: 0x02, status: 0x23, data: CARD_READ })
          : encodeReaderFrame({ cmd: f.cmd, status: 0x00 });
      // Noise before the answer, and after it, then the line goes quiet.
      const parts = [...noise(), answer, ...noise()];
      // A frame cut short announces more data than the whole rest of the burst: it holds back everything behind it,
      // the answer too when it comes first, until the gap.
      let behind = 0;
      for (let k = parts.length - 1; k >= 0; k--) {
        const part = parts[k] as Uint8Array;
        if (cut.has(part)) {
          const len = Math.min(MAX_DATA_LENGTH, behind + 1 + (next() % 200));
          part[12] = len >> 8;
          part[13] = len & 0xff;
        }
        behind += part.length;
      }
      wire = concat([wire, concat(parts)]);
      bursts++;
      if (!delivering) deliver();
    };
    // Delivered in random reads, some in the same turn, some later.
    const deliver = (): void => {
      delivering = true;
      while (wire.length > 0) {
        const n = 1 + (next() % 64);
        const chunk = wire.slice(0, n);
        wire = wire.slice(n);
        t.events?.data(chunk);
        if (next() % 3 === 0) {
          setImmediate(deliver);
          return;
        }
      }
      delivering = false;
    };
    const turns = async (until: () => boolean): Promise<void> => {
      for (let n = 0; n < 10_000 && !until(); n++) await new Promise((r) => setImmediate(r));
    };
    let heldUntilGap = 0;
    try {
      for (let i = 0; i < 300; i++) {
        const ping = next() % 2 === 0;
        let result: unknown;
        let settled = false;
        const command: Promise<unknown> = ping
          ? reader.ping().then(() => 'pong')
          : reader.activate(ACTIVATE).then((r) => [r.maskedPan, r.readerStatus]);
        command.then(
          (v) => ((result = v), (settled = true)),
          (e: unknown) => ((result = e), (settled = true)),
        );
        // Every byte of the burst read, and the turns after it run: what is found without the gap is found by now.
        await turns(() => bursts === i + 1 && !delivering);
        await turns(() => settled);
        if (!settled) heldUntilGap++;
        await vi.advanceTimersByTimeAsync(INTER_BYTE_GAP_MS);
        await turns(() => settled);
        expect(result).toEqual(ping ? 'pong' : ['476173******0119', 'online-requested']);
      }
    } finally {
      vi.useRealTimers();
    }
    // Answers behind a frame cut short were found by the gap, and only by it.
    expect(heldUntilGap).toBeGreaterThan(30);
    expect(reader.health).toBe('ready');
  });
});
