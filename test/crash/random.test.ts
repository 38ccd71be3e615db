import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { CLEAN, knownBugOf, verdict } from './cases.js';
import { FLOW_NAMES, flowIteration, planName, randomPlan, seededRandom, type CrashPlan } from './harness.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox.close();
});

const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
process.stdout.write(`crash seed ${seed} (CRASH_SEED=${seed} replays it)\n`);
const random = seededRandom(seed);

/** A seeded draw for the flow: a kill at a random moment or a random systematic plan; known bugs drawn again. */
function draw(flow: (typeof FLOW_NAMES)[number]): CrashPlan {
  for (;;) {
    const plan = randomPlan(random, flow);
    if (!knownBugOf(plan)) return plan;
  }
}

describe('crash: randomised kill points (seed printed)', () => {
  for (const flow of FLOW_NAMES) {
    const plan = draw(flow);
    it(`${flow}: ${planName(plan)} (seed ${seed})`, async () => {
      const r = await flowIteration(sandbox, plan, { childTimeoutMs: 20_000 });
      expect(verdict(r)).toEqual(CLEAN);
    }, 60_000);
  }
});
