import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openJournal, type JournalEntry } from '../../src/journal/index.js';
import type { LedgerTransaction, Sandbox } from '../../src/sandbox/index.js';
import { scanForCardData, type CardDataFinding } from './card-scan.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DRIVER = join(ROOT, 'test/crash/driver.ts');
const FORWARD_DRIVER = join(ROOT, 'test/crash/forward-driver.ts');
/** A terminal that neither finishes nor dies in this time is a failure, not a hang. */
const CHILD_TIMEOUT_MS = 45_000;
/** Restarts after the first run before the harness gives up (each may be killed by its own failpoint). */
const MAX_RESTARTS = 4;

/** The flows test/crash/driver.ts plays (see its header). */
export type Flow = 'sale' | 'meter' | 'meter-extend' | 'refund' | 'offline' | 'queued';
export const FLOW_NAMES: readonly Flow[] = ['sale', 'meter', 'meter-extend', 'refund', 'offline', 'queued'];

/** Where the terminal is killed: a failpoint of src/host/failpoints.ts, with `#N` for its N-th passage. */
export const SALE_KILL_POINTS = [
  'journal.begin',
  'journal.sent',
  'gateway.answered',
  'journal.outcome',
] as const;

/**
 * One crash scenario: the failpoint of the first run, the failpoints of the restarts that follow (each restart runs
 * recovery and forwarding; a failpoint there kills it and the next restart resumes), or a kill at a random moment.
 */
export interface CrashPlan {
  flow: Flow;
  run?: string;
  recover?: string[];
  /** SIGKILL this many milliseconds after the flow starts (randomised kill points), wherever the terminal is. */
  killAfterMs?: number;
}

/** A readable name of a plan: `meter gateway.answered#2 → recovery.sent`. */
export function planName(p: CrashPlan): string {
  const parts = [
    p.flow,
    p.run ?? (p.killAfterMs !== undefined ? `after ${p.killAfterMs} ms` : 'uninterrupted'),
  ];
  if (p.recover?.length) parts.push(`→ ${p.recover.join(' → ')}`);
  return parts.join(' ');
}

/** How many times each flow sends through the journal, in order (for `#N` kill points). */
const FLOW_REQUESTS: Record<Exclude<Flow, 'offline' | 'queued'>, number> = {
  sale: 1,
  // pre-authorization, capture
  meter: 2,
  // pre-authorization, incremental authorization, capture
  'meter-extend': 3,
  // sale, refund
  refund: 2,
};

/**
 * The systematic plans of a flow: SIGKILL at every journal step of every request it sends, a kill during the timeout
 * reversal/void that recovery sends after an answer was lost (`recovery.sent`), and an uninterrupted run. Offline:
 * kills when each payment is stored and when the host's forwarding has each answer in hand.
 */
export function systematicPlans(flow: Flow): CrashPlan[] {
  if (flow === 'offline')
    return [
      { flow },
      { flow, run: 'offline.stored#1' },
      { flow, run: 'offline.stored#2' },
      { flow, recover: ['offline.forwarded#1'] },
      { flow, recover: ['offline.forwarded#2'] },
    ];
  if (flow === 'queued')
    return [
      { flow },
      { flow, recover: ['offline.forwarded#1'] },
      { flow, recover: ['offline.forwarded#2'] },
      { flow, recover: ['offline.forwarded#3', 'offline.forwarded#1'] },
    ];
  const n = FLOW_REQUESTS[flow];
  const plans: CrashPlan[] = [{ flow }];
  for (let i = 1; i <= n; i++)
    for (const point of SALE_KILL_POINTS) plans.push({ flow, run: n === 1 ? point : `${point}#${i}` });
  for (let i = 1; i <= n; i++)
    plans.push({
      flow,
      run: n === 1 ? 'gateway.answered' : `gateway.answered#${i}`,
      recover: ['recovery.sent'],
    });
  return plans;
}

/** Plans a seeded random draw chooses from: the systematic ones of the flow and kills at a random moment. */
export function randomPlan(random: () => number, flow?: Flow): CrashPlan {
  const f = flow ?? FLOW_NAMES[Math.floor(random() * FLOW_NAMES.length)]!;
  if (random() < 0.35) {
    // A moment of the flow (sending, journaling, the reader, SQLite mid-write), not a named step.
    const window = f === 'queued' ? 40 : f === 'meter-extend' || f === 'offline' ? 300 : 200;
    const killAfterMs = Math.floor(random() * window);
    return { flow: f, killAfterMs };
  }
  const plans = systematicPlans(f);
  return plans[Math.floor(random() * plans.length)]!;
}

interface ChildResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { driver?: string; killAfterMs?: number; timeoutMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', options.driver ?? DRIVER, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      // Randomised kill: the clock starts when the terminal is up and the flow begins.
      if (options.killAfterMs !== undefined && killTimer === undefined && stdout.includes('"phase":"flow"'))
        killTimer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? CHILD_TIMEOUT_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      fail(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      done({ code, signal, stdout, stderr, timedOut });
    });
  });
}

function lastJson<T>(stdout: string): T | undefined {
  const last = stdout.trim().split('\n').pop() ?? '';
  if (!last.startsWith('{')) return undefined;
  return JSON.parse(last) as T;
}

/** A local port nothing listens on: the gateway is unreachable (connection refused, provably nothing sent). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

export interface IterationResult {
  plan: string;
  /** Failpoints (or the random kill) that did kill a terminal, in order. */
  killedAt: string[];
  /** Approved charges (sale, capture, refund) the journal or the queue recorded that the gateway no longer holds. */
  lost: number;
  /** Charges the gateway holds more than once (one order sold, one authorization captured, one refund made twice). */
  duplicated: number;
  /** Entries in flight, stored payments not forwarded, unknown outcomes the gateway still holds, open holds nobody watches. */
  unresolved: number;
  /** Sandbox consistency problems (rule names), open holds the terminal legitimately keeps excepted. */
  problems: string[];
  /**
   * Authorizations the gateway still holds and the restarted terminal legitimately keeps: a meter pre-authorization
   * approved and journaled before the crash, whose session died with the process; the host reverses it when the
   * capture window ends (tariff.captureWindowMinutes; watchOrphanedAuthorizations).
   */
  openHolds: string[];
  /** Card data in clear in the iteration's database, WAL, key-adjacent and log files. */
  cardData: CardDataFinding[];
  /** Files scanned (relative names). */
  scanned: string[];
  /** The money at the gateway after recovery. */
  money: MoneyPicture;
  /** Screens of the first run when it was not killed. */
  screens?: string[];
}

/** The gateway's view of one iteration, in counts and minor units. */
export interface MoneyPicture {
  /** Sales / captures / refunds standing (not voided, not declined). */
  sales: number;
  captures: number;
  refunds: number;
  /** Voided ones (a timeout void after a lost answer). */
  voided: number;
  /** Authorizations fully released (reversed, timeout-reversed, or captured less and the rest released). */
  released: number;
  /** What the customer pays in the end: standing sales and captures minus standing refunds. */
  chargedMinor: number;
  /** Payments in the offline queue (any state), and those approved after forwarding. */
  stored: number;
  forwardedApproved: number;
}

const CHARGES = new Set(['sale', 'capture', 'refund-payment', 'refund-capture']);

function standing(t: LedgerTransaction): boolean {
  return !t.voided && t.status !== 'DECLINED' && t.status !== 'FAILED';
}

/**
 * Judges the gateway's ledger against the terminal's journal after recovery has finished.
 */
function judge(
  entries: JournalEntry[],
  inFlight: number,
  offline: { transaction_id: string; state: string }[],
  ledger: LedgerTransaction[],
  problems: { rule: string; transactionId?: string }[],
  orphanWatch: string[],
): Pick<IterationResult, 'lost' | 'duplicated' | 'unresolved' | 'problems' | 'openHolds' | 'money'> {
  const byGatewayId = new Map(ledger.map((t) => [t.id, t]));
  let lost = 0;
  for (const e of entries) {
    if (e.state !== 'approved' || !CHARGES.has(e.service)) continue;
    const tx = e.gatewayId ? byGatewayId.get(e.gatewayId) : undefined;
    // Voided is acceptable only when the terminal itself journaled the void of that charge.
    const voidedByTerminal = entries.some(
      (v) =>
        (v.service.startsWith('void-') || v.service === 'timeout-void') &&
        (v.state === 'approved' || v.state === 'resolved') &&
        (v.referencedTransactionId === e.transactionId || v.parentGatewayId === e.gatewayId),
    );
    if (!tx || (tx.voided && !voidedByTerminal)) lost += 1;
  }
  const sales = ledger.filter((t) => t.kind === 'sale');
  for (const p of offline)
    if (p.state === 'approved' && !sales.some((t) => t.transactionId === p.transaction_id && standing(t)))
      lost += 1;

  let duplicated = 0;
  const count = <K>(keys: K[]): number => {
    const seen = new Map<K, number>();
    for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
    return [...seen.values()].reduce((s, n) => s + Math.max(0, n - 1), 0);
  };
  // One order sold once: by transactionId (a resend), and by the terminal's order reference.
  duplicated += count(sales.filter((t) => t.transactionId !== undefined).map((t) => t.transactionId));
  duplicated += count(sales.filter(standing).map((t) => t.code ?? t.id));
  // One authorization captured once, one charge refunded once (each flow refunds at most once).
  duplicated += count(ledger.filter((t) => t.kind === 'capture' && standing(t)).map((t) => t.parentId));
  duplicated += count(ledger.filter((t) => t.kind === 'refund' && standing(t)).map((t) => t.parentId));
  duplicated += problems.filter((p) => p.rule === 'CHARGED_TWICE' || p.rule === 'CAPTURED_TWICE').length;

  const openHolds = problems
    .filter(
      (p) => p.rule === 'OPEN_AUTHORIZATION' && p.transactionId && orphanWatch.includes(p.transactionId),
    )
    .map((p) => p.transactionId!);
  const rest = problems.filter(
    (p) => !(p.rule === 'OPEN_AUTHORIZATION' && openHolds.includes(p.transactionId!)),
  );
  const waiting = offline.filter((p) => p.state === 'stored' || p.state === 'forwarding').length;
  const unresolvedRules = new Set([
    'OPEN_AUTHORIZATION',
    'UNKNOWN_AUTHORIZATION_NOT_REVERSED',
    'UNKNOWN_CHARGE_NOT_VOIDED',
    'UNKNOWN_CREDIT_NOT_VOIDED',
    'TIMEOUT_REVERSAL_UNMATCHED',
  ]);
  const unresolved = inFlight + waiting + rest.filter((p) => unresolvedRules.has(p.rule)).length;

  const ofKind = (kind: string): LedgerTransaction[] => ledger.filter((t) => t.kind === kind && standing(t));
  const chargedMinor =
    [...ofKind('sale'), ...ofKind('capture')].reduce((s, t) => s + t.amounts.captured, 0) -
    ofKind('refund').reduce((s, t) => s + t.amounts.requested, 0);
  const money: MoneyPicture = {
    sales: ofKind('sale').length,
    captures: ofKind('capture').length,
    refunds: ofKind('refund').length,
    voided: ledger.filter((t) => ['sale', 'capture', 'refund'].includes(t.kind) && t.voided).length,
    released: ledger.filter(
      (t) =>
        t.kind === 'authorization' &&
        t.amounts.authorized > 0 &&
        t.amounts.captured + t.amounts.reversed >= t.amounts.authorized,
    ).length,
    chargedMinor,
    stored: offline.length,
    forwardedApproved: offline.filter((p) => p.state === 'approved').length,
  };
  return { lost, duplicated, unresolved, problems: rest.map((p) => p.rule), openHolds, money };
}

/**
 * One crash iteration: run the flow in a terminal process, SIGKILL it where the plan says, start it again (recovery
 * runs to completion inside createTerminalHost, then forwarding) until a start completes, then judge the sandbox
 * ledger against the journal and scan every file the terminals wrote for card data in clear.
 */
export async function flowIteration(
  sandbox: Sandbox,
  plan: CrashPlan,
  options: { childTimeoutMs?: number } = {},
): Promise<IterationResult> {
  const timeoutMs = options.childTimeoutMs ?? CHILD_TIMEOUT_MS;
  sandbox.reset();
  const dir = mkdtempSync(join(tmpdir(), `crash-${plan.flow}-`));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.PARKING_TERMINAL_CRASH_AT;
    const withPoint = (point: string | undefined): NodeJS.ProcessEnv =>
      point ? { ...env, PARKING_TERMINAL_CRASH_AT: point } : env;
    const killedAt: string[] = [];
    // The offline flow takes its payments while the gateway cannot be reached.
    const firstUrl = plan.flow === 'offline' || plan.flow === 'queued' ? await closedPortUrl() : sandbox.url;
    const first = await runChild(['run', plan.flow, dir, firstUrl], withPoint(plan.run), {
      timeoutMs,
      ...(plan.killAfterMs !== undefined ? { killAfterMs: plan.killAfterMs } : {}),
    });
    if (first.timedOut) throw new Error(`terminal hung (${planName(plan)}): ${first.stderr.slice(-3000)}`);
    if (first.signal === 'SIGKILL') killedAt.push(plan.run ?? `after ${plan.killAfterMs ?? '?'} ms`);
    else if (first.code !== 0)
      throw new Error(
        `terminal failed (${planName(plan)}, exit ${first.code}): ${first.stderr.slice(-3000)}`,
      );
    const screens =
      first.signal === 'SIGKILL' ? undefined : lastJson<{ screens: string[] }>(first.stdout)?.screens;

    let report: { inFlight: number; orphanWatch: string[]; offlineDepth: number } | undefined;
    for (let i = 0; i <= MAX_RESTARTS && report === undefined; i++) {
      const point = plan.recover?.[i];
      const r = await runChild(['recover', plan.flow, dir, sandbox.url], withPoint(point), { timeoutMs });
      if (r.timedOut) throw new Error(`restart ${i + 1} hung (${planName(plan)}): ${r.stderr.slice(-3000)}`);
      if (r.signal === 'SIGKILL' && point) {
        killedAt.push(point);
        continue;
      }
      if (r.code !== 0)
        throw new Error(
          `restart ${i + 1} failed (${planName(plan)}, exit ${r.code}): ${r.stderr.slice(-3000)}`,
        );
      report = lastJson(r.stdout);
    }
    if (!report) throw new Error(`no restart completed (${planName(plan)})`);

    const journal = openJournal(join(dir, 'journal.db'));
    let entries: JournalEntry[];
    let inFlight: number;
    let offline: { transaction_id: string; state: string }[];
    try {
      inFlight = journal.inFlight().length;
      entries = journal.list({ limit: 100_000 });
      offline = journal.db
        .prepare<[], { transaction_id: string; state: string }>(
          'SELECT transaction_id, state FROM offline_payments',
        )
        .all();
    } finally {
      journal.close();
    }
    const verdict = judge(
      entries,
      inFlight,
      offline,
      sandbox.ledger().transactions,
      sandbox.consistency({ requireResolved: true }).problems,
      report.orphanWatch,
    );
    const scan = scanForCardData(dir);
    return {
      plan: planName(plan),
      killedAt,
      ...verdict,
      cardData: scan.findings,
      scanned: scan.files,
      ...(screens ? { screens } : {}),
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
  /** Card data in clear in the database, WAL, key and log files. */
  cardData: CardDataFinding[];
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
    delete env.PARKING_TERMINAL_CRASH_AT;
    const first = await runChild(['run', dir, sandbox.url, ...(killAt ? [killAt] : [])], env, {
      driver: FORWARD_DRIVER,
    });
    if (first.timedOut) throw new Error(`forwarder hung: ${first.stderr.slice(-3000)}`);
    const killed = first.signal === 'SIGKILL';
    if (!killed && first.code !== 0)
      throw new Error(`forwarder failed (exit ${first.code}): ${first.stderr.slice(-3000)}`);
    if (killed) {
      const second = await runChild(['recover', dir, sandbox.url], env, { driver: FORWARD_DRIVER });
      if (second.code !== 0 || second.timedOut)
        throw new Error(`restart failed (exit ${second.code}): ${second.stderr.slice(-3000)}`);
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
    const standingSales = sales.filter(standing);
    let duplicated = 0;
    let lost = 0;
    for (const p of payments) {
      if (sales.filter((t) => t.transactionId === p.transaction_id).length > 1) duplicated += 1;
      if (p.state === 'approved' && !standingSales.some((t) => t.transactionId === p.transaction_id))
        lost += 1;
    }
    const waiting = payments.filter((p) => p.state === 'stored' || p.state === 'forwarding').length;
    return {
      killed,
      lost,
      duplicated,
      unresolved: inFlight + waiting,
      voidedAfterUnknown: payments.filter((p) => p.state === 'unknown').length,
      standingSales: standingSales.length,
      problems: sandbox.consistency({ requireResolved: true }).problems.map((p) => p.rule),
      cardData: scanForCardData(dir).findings,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
