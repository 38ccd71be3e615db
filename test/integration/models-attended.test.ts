import { afterAll, describe, expect, it } from 'vitest';
import { attendedMachine } from '../../src/flows/attended.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  chargedByModel,
  finishScreens,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  pathName,
  replayPath,
  settingsOf,
  startModelHost,
  type ModelEvent,
} from './models-harness.js';

/**
 * Attended mobile (spec 001: sale with catLevel 6, standalone credit): every shortest path of the attended machine
 * over the attendant's events, with amounts the sandbox approves (12.50), declines (12.02: INSUFFICIENT_FUND) and
 * approves in part (12.21: the sale is voided), replayed on a real host against the embedded sandbox.
 */

const config = modelConfig('attended');

const USER_EVENTS: ModelEvent[] = [
  { type: 'START' },
  { type: 'CREDIT' },
  { type: 'ENTER_AMOUNT', minor: 1_250 },
  { type: 'ENTER_AMOUNT', minor: 1_202 },
  { type: 'ENTER_AMOUNT', minor: 1_221 },
  { type: 'CONFIRM' },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

const paths = modelPaths({
  machine: attendedMachine,
  settings: settingsOf(config),
  userEvents: USER_EVENTS,
  outcomes: { faultable: ['paying'] },
  distinguish: (c) => [c['reason'], c['mode'], c['amountMinor']],
});

describe('attended model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('generates paths through every kind of transaction outcome', () => {
    const names = paths.map(pathName);
    for (const outcome of [
      'approved',
      'declined:INSUFFICIENT_FUND',
      'declined:PARTIAL_APPROVAL',
      'unknown',
      'card-error:CARD_NOT_SUPPORTED',
      'cancelled',
    ])
      expect(
        names.some((n) => n.includes(`> ${outcome}`)),
        outcome,
      ).toBe(true);
    expect(names.some((n) => n.startsWith('CREDIT'))).toBe(true);
  });

  paths.forEach((path, index) => {
    it(`replays ${pathName(path)}`, async () => {
      const m = await startModelHost(config);
      closing.push(m.close);
      await replayPath(m, path, { card: APPROVING_CARDS[index % APPROVING_CARDS.length]! });
      const verdict = await ledgerVerdict(m, path, () => [], finishScreens);
      expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
      await m.close();
    });
  });
});
