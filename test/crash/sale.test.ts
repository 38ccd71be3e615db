import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { randomSalePoint, saleIteration, SALE_KILL_POINTS, seededRandom } from './harness.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox.close();
});

/** Where the money must be after recovery, per kill point: the gateway's view of the one sale attempted. */
const EXPECTED: Record<(typeof SALE_KILL_POINTS)[number], { standingSales: number; voidedSales: number }> = {
  // Nothing left the terminal: the timeout void finds no original, nothing is charged.
  'journal.begin': { standingSales: 0, voidedSales: 0 },
  'journal.sent': { standingSales: 0, voidedSales: 0 },
  // Charged, answer never journaled: the timeout void takes the charge back.
  'gateway.answered': { standingSales: 0, voidedSales: 1 },
  // Approval journaled before the crash: the sale stands, once.
  'journal.outcome': { standingSales: 1, voidedSales: 0 },
};

describe('crash: kiosk sale killed at every journal step', () => {
  it.each(SALE_KILL_POINTS)(
    'loses, duplicates and leaves nothing unresolved when killed at %s',
    async (point) => {
      const r = await saleIteration(sandbox, point);
      expect(r.killed).toBe(true);
      expect({
        lost: r.lost,
        duplicated: r.duplicated,
        unresolved: r.unresolved,
        problems: r.problems,
        clear: r.cardDataInClear,
      }).toEqual({
        lost: 0,
        duplicated: 0,
        unresolved: 0,
        problems: [],
        clear: false,
      });
      expect({ standingSales: r.standingSales, voidedSales: r.voidedSales }).toEqual(EXPECTED[point]);
    },
    120_000,
  );

  it('keeps an uninterrupted sale charged exactly once', async () => {
    const r = await saleIteration(sandbox, null);
    expect(r).toMatchObject({
      killed: false,
      screen: 'approved',
      standingSales: 1,
      voidedSales: 0,
      lost: 0,
      duplicated: 0,
      unresolved: 0,
      problems: [],
      cardDataInClear: false,
    });
  }, 120_000);

  it('survives a randomly chosen kill point (seed printed for replay)', async () => {
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
    process.stdout.write(`crash seed ${seed}\n`);
    const r = await saleIteration(sandbox, randomSalePoint(seededRandom(seed)));
    expect({
      lost: r.lost,
      duplicated: r.duplicated,
      unresolved: r.unresolved,
      problems: r.problems,
    }).toEqual({ lost: 0, duplicated: 0, unresolved: 0, problems: [] });
  }, 120_000);
});
