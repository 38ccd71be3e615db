import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openJournal } from '../../src/journal/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DRIVER = join(ROOT, 'test/crash/driver.ts');
const FORWARD_DRIVER = join(ROOT, 'test/crash/forward-driver.ts');

/** Where the terminal is killed: a failpoint of src/host/failpoints.ts, with `#N` for its N-th passage. */
export const SALE_KILL_POINTS = [
  'journal.begin',
  'journal.sent',
  'gateway.answered',
  'journal.outcome',
] as const;

export interface IterationResult {
  point: string | null;
  /** Whether the child died by SIGKILL (the failpoint was reached). */
  killed: boolean;
  /** An approved sale the journal knows of that the gateway no longer holds. */
  lost: number;
  /** Sales charged more than once in the iteration. */
  duplicated: number;
  /** Journal entries still in flight after recovery. */
  unresolved: number;
  /** Sandbox consistency problems (rule names). */
  problems: string[];
  /** Card data found in clear in the database files. */
  cardDataInClear: boolean;
  /** Sales the gateway holds at the end, and sales it voided. */
  standingSales: number;
  voidedSales: number;
  /** The last screen of an uninterrupted run. */
  screen?: string;
}

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  driver = DRIVER,
): Promise<{
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', driver, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Bounded: a terminal that neither finishes nor dies in 60 s is a failure, not a hang.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, 60_000);
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/**
 * One crash iteration of the kiosk sale: run the terminal, SIGKILL it at `point` (none = a clean run), start it again
 * so that recovery resolves what was left in flight, then check the sandbox ledger and the journal.
 */
export async function saleIteration(sandbox: Sandbox, point: string | null): Promise<IterationResult> {
  sandbox.reset();
  const dir = mkdtempSync(join(tmpdir(), 'crash-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.PARKING_TERMINAL_CRASH_AT;
    const first = await runChild(
      ['run', dir, sandbox.url],
      point ? { ...env, PARKING_TERMINAL_CRASH_AT: point } : env,
    );
    if (first.timedOut)
      throw new Error(`terminal hung (point ${point ?? 'none'}): ${first.stderr.slice(-2000)}`);
    const killed = first.signal === 'SIGKILL';
    if (!killed && first.code !== 0)
      throw new Error(`terminal failed (exit ${first.code}): ${first.stderr.slice(-2000)}`);
    const second = await runChild(['recover', dir, sandbox.url], env);
    if (second.code !== 0 || second.timedOut)
      throw new Error(`restart failed (exit ${second.code}): ${second.stderr.slice(-2000)}`);

    const journal = openJournal(join(dir, 'journal.db'));
    let unresolved: number;
    let approvedSales: string[];
    try {
      unresolved = journal.inFlight().length;
      approvedSales = journal
        .list({ limit: 1000 })
        .filter((e) => e.service === 'sale' && e.state === 'approved' && e.transactionId !== undefined)
        .map((e) => e.transactionId!);
    } finally {
      journal.close();
    }
    const ledger = sandbox.ledger();
    const standing = ledger.transactions.filter(
      (t) => t.kind === 'sale' && !t.voided && t.status !== 'DECLINED',
    );
    const byTx = new Map<string, number>();
    for (const t of standing) byTx.set(t.transactionId ?? t.id, (byTx.get(t.transactionId ?? t.id) ?? 0) + 1);
    const duplicated = Math.max(0, standing.length - 1) + [...byTx.values()].filter((n) => n > 1).length;
    const lost = approvedSales.filter((tx) => !standing.some((t) => t.transactionId === tx)).length;
    const consistency = sandbox.consistency();
    let cardDataInClear = false;
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      if (/4111111111111111|5555555555554444|2222420000001113|=\d{4}\d{3}/.test(bytes))
        cardDataInClear = true;
    }
    const last = first.stdout.trim().split('\n').pop() ?? '';
    const screen =
      killed || !last.startsWith('{') ? undefined : (JSON.parse(last) as { screen?: string }).screen;
    return {
      point,
      killed,
      lost,
      duplicated,
      unresolved,
      problems: consistency.problems.map((p) => p.rule),
      cardDataInClear,
      standingSales: standing.length,
      voidedSales: ledger.transactions.filter((t) => t.kind === 'sale' && t.voided).length,
      ...(screen !== undefined ? { screen } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A small seeded generator (mulberry32): the printed seed replays the same kill points. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A random kill point (or none) for a sale iteration. */
export function randomSalePoint(random: () => number): string | null {
  const i = Math.floor(random() * (SALE_KILL_POINTS.length + 1));
  return i === SALE_KILL_POINTS.length ? null : SALE_KILL_POINTS[i]!;
}

/** Kill points of the offline forward (test/crash/forward-driver.ts), on the 2nd of 5 payments. */
export const FORWARD_KILL_POINTS = ['before-send#2', 'answered#2'] as const;

export interface ForwardIterationResult {
  killed: boolean;
  /** Payments the queue holds as approved that the gateway does not hold. */
  lost: number;
  /** Payments the gateway recorded more than once (forwarded twice). */
  duplicated: number;
  /** Journal entries in flight, or payments still waiting, after the restart. */
  unresolved: number;
  /** Payments whose forward was answered but the answer lost: voided by timeout recovery and reported. */
  voidedAfterUnknown: number;
  standingSales: number;
  problems: string[];
}

/**
 * One crash iteration of offline store-and-forward: store 5 payments, forward them, SIGKILL at `killAt`, restart
 * (recovery, reconciliation, forwarding again), then check the ledger: each payment forwarded at most once.
 */
export async function forwardIteration(
  sandbox: Sandbox,
  killAt: string | null,
): Promise<ForwardIterationResult> {
  sandbox.reset();
  const dir = mkdtempSync(join(tmpdir(), 'crash-forward-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    const first = await runChild(['run', dir, sandbox.url, ...(killAt ? [killAt] : [])], env, FORWARD_DRIVER);
    if (first.timedOut) throw new Error(`forwarder hung: ${first.stderr.slice(-2000)}`);
    const killed = first.signal === 'SIGKILL';
    if (!killed && first.code !== 0)
      throw new Error(`forwarder failed (exit ${first.code}): ${first.stderr.slice(-2000)}`);
    if (killed) {
      const second = await runChild(['recover', dir, sandbox.url], env, FORWARD_DRIVER);
      if (second.code !== 0 || second.timedOut)
        throw new Error(`restart failed (exit ${second.code}): ${second.stderr.slice(-2000)}`);
    }
    const journal = openJournal(join(dir, 'journal.db'));
    let payments: { transaction_id: string; state: string }[];
    let inFlight: number;
    try {
      inFlight = journal.inFlight().length;
      payments = journal.db
        .prepare<[], { transaction_id: string; state: string }>(
          'SELECT transaction_id, state FROM offline_payments',
        )
        .all();
    } finally {
      journal.close();
    }
    const sales = sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    const standing = sales.filter((t) => !t.voided && t.status !== 'DECLINED');
    let duplicated = 0;
    let lost = 0;
    for (const p of payments) {
      if (sales.filter((t) => t.transactionId === p.transaction_id).length > 1) duplicated += 1;
      if (p.state === 'approved' && !standing.some((t) => t.transactionId === p.transaction_id)) lost += 1;
    }
    const waiting = payments.filter((p) => p.state === 'stored' || p.state === 'forwarding').length;
    return {
      killed,
      lost,
      duplicated,
      unresolved: inFlight + waiting,
      voidedAfterUnknown: payments.filter((p) => p.state === 'unknown').length,
      standingSales: standing.length,
      problems: sandbox.consistency().problems.map((p) => p.rule),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
