#!/usr/bin/env node
// `npm run test:crash -- --runs N [--seed S]`: N crash iterations of the terminal (child processes killed with
// SIGKILL at seeded random journal steps or moments of the kiosk sale, meter pre-authorization + capture, incremental
// authorization, refund, offline store and host forwarding flows, and the offline queue's forward driver; restarted,
// checked against a standalone sandbox and scanned for card data in clear). Prints the seed and one line per run on
// stderr and the summary {"runs","lost","duplicated","unresolved"} as the last stdout line; exit 1 on any finding.
import { parseArgs } from 'node:util';
import { register } from 'tsx/esm/api';

register();
const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, seed: { type: 'string' } },
  strict: true,
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || runs > 10_000 || !Number.isInteger(seed)) {
  process.stdout.write(
    `${JSON.stringify({ error: { code: 'BAD_ARGUMENTS', message: '--runs 1..10000, --seed integer' } })}\n`,
  );
  process.exit(2);
}
const { flowIteration, forwardIteration, randomPlan, planName, seededRandom, FORWARD_KILL_POINTS } =
  await import('../test/crash/harness.ts');
const { knownBugOf } = await import('../test/crash/cases.ts');
const { startSandbox } = await import('../src/sandbox/index.ts');

process.stderr.write(`crash seed ${seed}\n`);
const random = seededRandom(seed);
const sandbox = await startSandbox({ port: 0 });
const total = { runs: 0, lost: 0, duplicated: 0, unresolved: 0 };
let problems = 0;
try {
  for (let i = 0; i < runs; i++) {
    // The terminal's flows (test/crash/driver.ts) and the offline queue's own forward driver.
    let r;
    if (random() < 0.15) {
      const point = FORWARD_KILL_POINTS[Math.floor(random() * (FORWARD_KILL_POINTS.length + 1))] ?? null;
      r = {
        flow: 'offline-forward',
        plan: point ?? 'uninterrupted',
        ...(await forwardIteration(sandbox, point)),
      };
    } else {
      const plan = randomPlan(random);
      const knownBug = knownBugOf(plan);
      try {
        // A known bug may hang a restart: bounded so that the run reports it and goes on.
        const result = await flowIteration(sandbox, plan, knownBug ? { childTimeoutMs: 10_000 } : {});
        r = { flow: plan.flow, ...result, ...(knownBug ? { knownBug } : {}) };
      } catch (e) {
        // A terminal that hung or failed: its in-flight work is unresolved, and the error says which and why.
        r = {
          flow: plan.flow,
          plan: planName(plan),
          lost: 0,
          duplicated: 0,
          unresolved: 1,
          problems: [],
          cardData: [],
          error: e instanceof Error ? e.message.slice(0, 2000) : String(e),
          ...(knownBug ? { knownBug } : {}),
        };
      }
    }
    total.runs += 1;
    total.lost += r.lost;
    total.duplicated += r.duplicated;
    total.unresolved += r.unresolved;
    problems += r.problems.length + r.cardData.length;
    const { scanned: _scanned, ...line } = r;
    process.stderr.write(`${JSON.stringify({ run: i + 1, ...line })}\n`);
  }
} finally {
  await sandbox.close();
}
process.stdout.write(`${JSON.stringify(total)}\n`);
process.exitCode = total.lost + total.duplicated + total.unresolved + problems === 0 ? 0 : 1;
