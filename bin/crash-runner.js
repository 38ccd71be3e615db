#!/usr/bin/env node
// `npm run test:crash -- --runs N [--seed S]`: N crash iterations of the terminal (child processes killed with
// SIGKILL at seeded random journal steps or random moments of the kiosk sale, meter pre-authorization + capture,
// incremental authorization, operator refund and void, meter capture void, offline store and host forwarding,
// tap-and-go (capture, and the exit paid by phone) flows, and of the restarts that recover and forward; restarted,
// judged against a standalone sandbox's ledger and against what the customer and the operator were told, and
// scanned for card data in clear). Every plan of every flow is among its draws. Prints the seed and one line
// per run on stderr and the summary {"runs","lost","duplicated","unresolved","problems","cardData"} (counts) as the
// last stdout line; exit 1 when any count but runs is non-zero.
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
const { flowIteration, randomPlan, planName, seededRandom, startCrashSandbox } =
  await import('../test/crash/harness.ts');
const { knownBugOf, expectedOf, picture } = await import('../test/crash/cases.ts');

process.stderr.write(`crash seed ${seed}\n`);
const random = seededRandom(seed);
const sandbox = await startCrashSandbox();
const total = { runs: 0, lost: 0, duplicated: 0, unresolved: 0, problems: 0, cardData: 0 };
try {
  for (let i = 0; i < runs; i++) {
    const plan = randomPlan(random);
    const knownBug = knownBugOf(plan);
    let r;
    try {
      // A known bug may hang a restart: bounded so that the run reports it and goes on.
      const result = await flowIteration(sandbox, plan, knownBug ? { childTimeoutMs: 10_000 } : {});
      const { scanned: _scanned, told, offlineStates, ...rest } = result;
      const problems = [...rest.problems];
      // A named plan (no random moment) must also leave its known money picture at the gateway.
      const expected = expectedOf(plan);
      if (plan.killAfterMs === undefined && plan.restartKillAfterMs === undefined) {
        const got = picture(result);
        if (!expected) problems.push('NO_EXPECTED_PICTURE');
        else if (JSON.stringify(got) !== JSON.stringify(expected))
          problems.push(`PICTURE(expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)})`);
      }
      // A run with problems carries what explains them: the offline queue's end states and what each was told.
      const detail = problems.length > 0 ? { offlineStates, told } : {};
      r = { flow: plan.flow, ...rest, problems, ...detail, ...(knownBug ? { knownBug } : {}) };
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
    total.runs += 1;
    total.lost += r.lost;
    total.duplicated += r.duplicated;
    total.unresolved += r.unresolved;
    total.problems += r.problems.length;
    total.cardData += r.cardData.length;
    process.stderr.write(`${JSON.stringify({ run: i + 1, ...r })}\n`);
  }
} finally {
  await sandbox.close();
}
process.stdout.write(`${JSON.stringify(total)}\n`);
const { runs: _runs, ...counts } = total;
process.exitCode = Object.values(counts).every((n) => n === 0) ? 0 : 1;
