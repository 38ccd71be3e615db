#!/usr/bin/env node
// `npm run test:crash -- --runs N [--seed S]`: N crash iterations of the terminal (child processes killed with
// SIGKILL at seeded random journal steps, restarted, checked against a standalone sandbox). Prints one line per run
// on stderr and the summary {"runs","lost","duplicated","unresolved"} as the last stdout line; exit 1 on any loss.
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
const { saleIteration, forwardIteration, randomSalePoint, seededRandom, FORWARD_KILL_POINTS } =
  await import('../test/crash/harness.ts');
const { startSandbox } = await import('../src/sandbox/index.ts');

process.stderr.write(`crash seed ${seed}\n`);
const random = seededRandom(seed);
const sandbox = await startSandbox({ port: 0 });
const total = { runs: 0, lost: 0, duplicated: 0, unresolved: 0 };
let problems = 0;
try {
  for (let i = 0; i < runs; i++) {
    // Two flows: the kiosk sale (terminal process) and offline store-and-forward; kill points chosen by the seed.
    const forward = random() < 0.3;
    const point = forward
      ? (FORWARD_KILL_POINTS[Math.floor(random() * FORWARD_KILL_POINTS.length)] ?? null)
      : randomSalePoint(random);
    const r = forward
      ? { flow: 'offline-forward', point, ...(await forwardIteration(sandbox, point)) }
      : { flow: 'sale', ...(await saleIteration(sandbox, point)) };
    total.runs += 1;
    total.lost += r.lost;
    total.duplicated += r.duplicated;
    total.unresolved += r.unresolved;
    problems += r.problems.length + ('cardDataInClear' in r && r.cardDataInClear ? 1 : 0);
    process.stderr.write(`${JSON.stringify({ run: i + 1, ...r })}\n`);
  }
} finally {
  await sandbox.close();
}
process.stdout.write(`${JSON.stringify(total)}\n`);
process.exitCode = total.lost + total.duplicated + total.unresolved + problems === 0 ? 0 : 1;
