import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReader, DEFAULT_READER_OPTIONS, getSimulatorControl, type ReaderOptions } from './index.js';
import type { ActivateOptions, CardReader, CardRead, EntryMode } from './reader.js';
import { VIRTUAL_CARDS } from './sim/cards.js';
import type { SimulatedReaderControl } from './sim/simulator.js';

/**
 * The CardReader contract suite (reader.ts): one suite, run against the simulator over every transport and against a
 * real reader when TEST_READER_PORT names one (design rule "one contract suite, two targets"). The first part needs
 * no card and holds for any reader; the second steers the simulator's virtual cards and is skipped for real readers.
 */

/** One reader under test, made fresh for each test. */
export interface ContractTarget {
  readonly reader: CardReader;
  /** Present for simulated readers: the simulator behind `reader`. */
  readonly control?: SimulatedReaderControl;
}

export const CONTRACT_ACTIVATE: ActivateOptions = {
  amountMinor: 1250,
  otherAmountMinor: 0,
  currencyNumeric: '826',
  countryNumeric: '826',
  transactionType: '00',
  timeoutSeconds: 5,
};

/** Tags spec 001 ("EMV tags") marks mandatory on both networks, plus 9F27 and 9F34 (mandatory for N1). */
const MANDATORY_CHIP_TAGS = [
  '9A',
  '9C',
  '5F2A',
  '9F1A',
  '9F02',
  '9F03',
  '9F36',
  '82',
  '84',
  '95',
  '9F10',
  '9F26',
  '9F27',
  '9F33',
  '9F34',
  '9F37',
];
/** Card data the gateway must never receive (gateway.md §3); the reader delivers them and the terminal filters them. */
const CARD_DATA_TAGS = ['5A', '57', '5F24', '5F20', '9F1F'];

const tagsOf = (read: CardRead): string[] => read.tlvs.map((t) => t.tag);
const nextEvent = (
  reader: CardReader,
  event: 'reconnected' | 'disconnected' | 'card-detected',
): Promise<void> =>
  new Promise((resolve) => {
    const listener = (): void => {
      reader.off(event, listener);
      resolve();
    };
    reader.on(event, listener);
  });

/**
 * Registers the suite. `simulated`: the target comes with a simulator control, and the virtual-card half runs;
 * otherwise that half is reported as skipped (a real reader needs a person to present cards).
 */
export function describeReaderContract(
  name: string,
  create: () => Promise<ContractTarget>,
  simulated: boolean,
): void {
  describe(`CardReader contract: ${name}`, () => {
    let target: ContractTarget;
    beforeEach(async () => {
      target = await create();
      await target.reader.connect();
    });
    afterEach(async () => {
      await target.reader.close();
    });

    it('is ready after connect and answers Ping and firmware version', async () => {
      expect(target.reader.health).toBe('ready');
      await target.reader.ping();
      expect(await target.reader.firmwareVersion()).toMatch(/\S/);
    });

    it('refuses a command while an activate is outstanding, then cancels it', async () => {
      target.control?.setCard('no-card');
      const activate = target.reader.activate(CONTRACT_ACTIVATE);
      await expect(target.reader.ping()).rejects.toMatchObject({ code: 'READER_BUSY' });
      expect(target.reader.health).toBe('busy');
      await target.reader.cancel();
      await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
      expect(target.reader.health).toBe('ready');
      await target.reader.ping();
    });

    it('treats cancel as a no-op when idle', async () => {
      await target.reader.cancel();
      await target.reader.ping();
    });

    it('ends an activate when its abort signal fires', async () => {
      target.control?.setCard('no-card');
      const controller = new AbortController();
      const activate = target.reader.activate({ ...CONTRACT_ACTIVATE, signal: controller.signal });
      controller.abort();
      await expect(activate).rejects.toMatchObject({ code: 'READER_CANCELLED' });
      await target.reader.ping();
    });

    it('rejects an already aborted activate without starting it', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(
        target.reader.activate({ ...CONTRACT_ACTIVATE, signal: controller.signal }),
      ).rejects.toMatchObject({ code: 'READER_CANCELLED' });
      await target.reader.ping();
    });

    describe.skipIf(!simulated)('with virtual cards (simulator only)', () => {
      const sim = (): SimulatedReaderControl => {
        if (!target.control) throw new Error('not a simulated reader');
        return target.control;
      };
      const read = (card: string): Promise<CardRead> => {
        sim().setCard(card);
        return target.reader.activate(CONTRACT_ACTIVATE);
      };

      it.each([
        ['n2-contact', 'contact', '476173******0119', false],
        ['n1-contact', 'contact', '541333******1513', false],
        ['n2-contactless', 'contactless', '476173******0119', false],
        ['n1-contactless', 'contactless', '541333******1513', false],
        ['n2-msd', 'msd', '476173******0119', false],
        ['n1-msd', 'msd', '541333******1513', false],
        ['n2-swipe', 'swiped', '476173******0119', false],
        ['n1-swipe', 'swiped', '541333******1513', false],
        ['chip-swiped-fallback', 'swiped', '476173******0119', true],
        ['unsupported-network', 'contact', '356600******0505', false],
        ['garbage', 'contact', '476173******0119', false],
      ] as const)('reads %s as %s, PAN masked', async (card, entryMode: EntryMode, maskedPan, fallback) => {
        const detected = nextEvent(target.reader, 'card-detected');
        const result = await read(card);
        await detected;
        expect(result).toMatchObject({ entryMode, maskedPan, fallback });
      });

      it.each(['n2-contact', 'n1-contact', 'n1-no-5f34', 'n2-no-5f34'])(
        'delivers the chip tags spec 001 requires, and the card data tags, for %s',
        async (card) => {
          const result = await read(card);
          expect(result.readerStatus).toBe('online-requested');
          const tags = tagsOf(result);
          for (const tag of [...MANDATORY_CHIP_TAGS, ...CARD_DATA_TAGS]) expect(tags).toContain(tag);
          expect(tags.includes('5F34')).toBe(!card.includes('no-5f34'));
        },
      );

      it('fails the chip of chip-fails-then-swiped (card error), then reads its swipe as a fallback', async () => {
        await expect(read('chip-fails-then-swiped')).rejects.toMatchObject({
          code: 'CARD_ERROR',
          detail: { activateErrorCode: 0x24 },
        });
        expect(target.reader.health).toBe('ready');
        await expect(target.reader.activate(CONTRACT_ACTIVATE)).resolves.toMatchObject({
          entryMode: 'swiped',
          maskedPan: '476173******0119',
          fallback: true,
        });
        // The next customer's card of that kind, the simulator left as it is: its chip fails first again.
        await expect(target.reader.activate(CONTRACT_ACTIVATE)).rejects.toMatchObject({ code: 'CARD_ERROR' });
        // Presented anew, the card's chip fails again first.
        await expect(read('chip-fails-then-swiped')).rejects.toMatchObject({ code: 'CARD_ERROR' });
      });

      it.each([
        ['expired', 'CARD_EXPIRED'],
        ['unsupported-card', 'CARD_UNSUPPORTED'],
        ['blocked', 'CARD_BLOCKED'],
        ['declined-offline', 'CARD_DECLINED_OFFLINE'],
        ['use-contact', 'CARD_USE_CONTACT'],
        ['removed', 'CARD_REMOVED'],
        ['collision', 'CARD_COLLISION'],
      ])('fails %s with %s and stays ready', async (card, code) => {
        await expect(read(card)).rejects.toMatchObject({ code });
        expect(target.reader.health).toBe('ready');
        await target.reader.ping();
      });

      it('completes a slow card read', async () => {
        await expect(read('slow')).resolves.toMatchObject({ entryMode: 'contactless' });
      });

      it('answers CARD_NOT_PRESENTED when no card comes within timeoutSeconds, and stays ready', async () => {
        sim().setCard('no-card');
        await expect(
          target.reader.activate({ ...CONTRACT_ACTIVATE, timeoutSeconds: 1 }),
        ).rejects.toMatchObject({ code: 'CARD_NOT_PRESENTED' });
        expect(target.reader.health).toBe('ready');
        await expect(read('n2-contact')).resolves.toMatchObject({ entryMode: 'contact' });
      });

      it('times out when the reply CRC is wrong, resynchronises, and reads the next card', async () => {
        sim().setCard('bad-crc');
        await expect(
          target.reader.activate({ ...CONTRACT_ACTIVATE, timeoutSeconds: 1 }),
        ).rejects.toMatchObject({
          code: 'READER_TIMEOUT',
        });
        await expect(read('n2-contact')).resolves.toMatchObject({ entryMode: 'contact' });
      });

      it('answers READER_TIMEOUT when the reader hangs, and works again when it answers', async () => {
        sim().setUnresponsive(true);
        await expect(target.reader.ping()).rejects.toMatchObject({ code: 'READER_TIMEOUT' });
        sim().setUnresponsive(false);
        await target.reader.ping();
      });

      it('ignores line noise between commands', async () => {
        sim().injectGarbage();
        await target.reader.ping();
        await expect(read('n1-contact')).resolves.toMatchObject({ entryMode: 'contact' });
      });

      it('fails a transaction when the reader is unplugged mid-read, and is ready again after replug', async () => {
        const errors: unknown[] = [];
        target.reader.on('error', (e) => errors.push(e));
        const disconnected = nextEvent(target.reader, 'disconnected');
        await expect(read('unplugged')).rejects.toMatchObject({ code: 'READER_DISCONNECTED' });
        await disconnected;
        expect(target.reader.health).toBe('reconnecting');
        await expect(target.reader.ping()).rejects.toMatchObject({ code: 'READER_NOT_CONNECTED' });
        // Wait for at least one failed attempt while unplugged, then plug back in.
        while (errors.length === 0) await new Promise((r) => setTimeout(r, 10));
        const failedWhileUnplugged = errors.length;
        const reconnected = nextEvent(target.reader, 'reconnected');
        sim().plug();
        await reconnected;
        // The first attempt after the replug succeeded: no restart, and no attempt failed once plugged.
        expect(errors.length).toBe(failedWhileUnplugged);
        expect(target.reader.health).toBe('ready');
        await expect(read('n2-contact')).resolves.toMatchObject({ maskedPan: '476173******0119' });
      });
    });
  });
}

/** Every virtual card name the suite exercises is in VIRTUAL_CARDS (a typo must not silently skip a case). */
export const CONTRACT_CARDS_EXIST = (): boolean =>
  [
    'n2-contact',
    'n1-contact',
    'n2-contactless',
    'n1-contactless',
    'n2-msd',
    'n1-msd',
    'n2-swipe',
    'n1-swipe',
    'chip-swiped-fallback',
    'chip-fails-then-swiped',
    'unsupported-network',
    'garbage',
    'n1-no-5f34',
    'n2-no-5f34',
    'expired',
    'unsupported-card',
    'blocked',
    'declined-offline',
    'use-contact',
    'removed',
    'collision',
    'slow',
    'bad-crc',
    'unplugged',
    'no-card',
  ].every((n) => n in VIRTUAL_CARDS);

/** Fast timings for the simulated targets: short command timeout and backoff, no idle watchdog during a test. */
export const CONTRACT_SIM_OPTIONS: ReaderOptions = {
  ...DEFAULT_READER_OPTIONS,
  commandTimeoutMs: 400,
  watchdogMs: 60_000,
  reconnectInitialMs: 20,
  reconnectMaxMs: 200,
};

/** A factory of simulated targets over `transport`, for {@link describeReaderContract}. */
export function simulatedTarget(transport: ReaderOptions['sim']['transport']): () => Promise<ContractTarget> {
  return () => {
    const reader = createReader({
      ...CONTRACT_SIM_OPTIONS,
      sim: { card: 'n2-contact', transport, presentDelayMs: 20 },
    });
    const control = getSimulatorControl(reader);
    return Promise.resolve(control ? { reader, control } : { reader });
  };
}
