import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { buildSync } from 'esbuild';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openJournal, type JournalEntry } from '../../src/journal/index.js';
import { startSandbox, type LedgerTransaction, type Sandbox } from '../../src/sandbox/index.js';
import { closedPort } from '../integration/down-gateway.js';
import { scanForCardData, type CardDataFinding } from './card-scan.js';
import { readTold, type Told } from './told.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DRIVER = join(ROOT, 'test/crash/driver.ts');
/** Beside the packages the bundle leaves external, so that it resolves them as the sources do. */
const BUNDLE_DIR = join(ROOT, 'node_modules/.cache/parking-terminal-crash');
/** A terminal that neither finishes nor dies in this time is a failure, not a hang. */
const CHILD_TIMEOUT_MS = 45_000;
/** Restarts after the first run before the harness gives up (each may be killed by its own failpoint). */
const MAX_RESTARTS = 4;

export { FLOW_NAMES, type Flow } from './flow-names.js';
import { FLOW_NAMES, type Flow } from './flow-names.js';

/** Where the terminal is killed: a failpoint of src/host/failpoints.ts, with `#N` for its N-th passage. */
export const SALE_KILL_POINTS = [
  'journal.begin',
  'journal.sent',
  'gateway.answered',
  'journal.outcome',
] as const;

/**
 * One crash scenario: the failpoint of the first run, the failpoints of the restarts that follow (each restart runs
 * recovery and forwarding; a failpoint there kills it and the next restart resumes), or a kill at a random moment of
 * the first run or of the first restart.
 */
export interface CrashPlan {
  flow: Flow;
  run?: string;
  recover?: string[];
  /** SIGKILL this many milliseconds after the flow starts (randomised kill points), wherever the terminal is. */
  killAfterMs?: number;
  /**
   * SIGKILL the first restart this many milliseconds after it begins to start (recovery, orphan settlement,
   * forwarding run there), wherever it is. Only when `recover` names no failpoint for that restart.
   */
  restartKillAfterMs?: number;
}

/** A readable name of a plan: `meter gateway.answered#2 → recovery.sent#1`. */
export function planName(p: CrashPlan): string {
  const parts = [
    p.flow,
    p.run ?? (p.killAfterMs !== undefined ? `after ${p.killAfterMs} ms` : 'uninterrupted'),
  ];
  if (p.recover?.length) parts.push(`→ ${p.recover.join(' → ')}`);
  if (p.restartKillAfterMs !== undefined) parts.push(`→ restart after ${p.restartKillAfterMs} ms`);
  return parts.join(' ');
}

/** How many times each flow sends through the journal, in order (for `#N` kill points). */
const FLOW_REQUESTS: Record<Exclude<Flow, 'offline' | 'queued'>, number> = {
  // account verification, pre-authorization of the hold, incremental authorization, capture
  gate: 4,
  // account verification, pre-authorization of the hold, reversal of the hold once the link is paid
  'gate-phone': 3,
  sale: 1,
  // pre-authorization, capture
  meter: 2,
  // pre-authorization, incremental authorization, capture
  'meter-extend': 3,
  // sale, refund
  refund: 2,
  // sale, void of the sale
  void: 2,
  // pre-authorization, capture, void of the capture, reversal of the authorization hold
  'meter-void': 4,
};

/** How many payments the customer (or, for `queued`, the offline store) is told a result of, per flow. */
export const FLOW_PAYMENTS: Record<Flow, number> = {
  sale: 1,
  meter: 1,
  'meter-extend': 1,
  refund: 1,
  void: 1,
  'meter-void': 1,
  offline: 2,
  queued: 3,
  gate: 1,
  'gate-phone': 1,
};

/**
 * The gate flows: their first request is the entry's account verification, which holds nothing — an unknown outcome
 * of it is resolved without a recovery request, so no plan kills one there.
 */
const GATE_FLOWS: ReadonlySet<Flow> = new Set(['gate', 'gate-phone']);

/** Payments the `queued` flow stores (test/crash/driver.ts): one kill point per forward. */
const QUEUED_PAYMENTS = 3;

/**
 * The systematic plans of a flow: SIGKILL at every journal step of every request it sends, at the first recovery
 * request of the restart after each lost answer (`recovery.sent#1`; test/crash/flows.ts goes on to every later
 * one), and an uninterrupted run. Offline: kills when each payment is stored, at every forward the host's forwarding
 * has an answer in hand at the next start (`offline.forwarded#N`), and at the recovery request that resolves such a
 * forward. (The forwarding the offline flow tries while the gateway is still down claims nothing: it has no step to
 * kill.) Gate flows: no recovery request after their account verification (it holds nothing); `gate` also kills the
 * restart whose card tapped again has its capture's answer in hand, `gate-phone` the moment the link's payment
 * notification arrives (`link.notified`) and the moment it is journaled (`link.paid`), alone and with the restart
 * killed when the paid stay's hold release is answered.
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
  if (flow === 'queued') {
    const plans: CrashPlan[] = [{ flow }];
    for (let n = 1; n <= QUEUED_PAYMENTS; n++) plans.push({ flow, recover: [`offline.forwarded#${n}`] });
    // The next start voids the forward in doubt and forwards the rest: killed again at its first forward.
    plans.push({ flow, recover: ['offline.forwarded#1', 'offline.forwarded#1'] });
    for (let n = 1; n <= QUEUED_PAYMENTS; n++)
      plans.push({ flow, recover: [`offline.forwarded#${n}`, 'recovery.sent#1'] });
    return plans;
  }
  const n = FLOW_REQUESTS[flow];
  const plans: CrashPlan[] = [{ flow }];
  for (let i = 1; i <= n; i++)
    for (const point of SALE_KILL_POINTS) plans.push({ flow, run: n === 1 ? point : `${point}#${i}` });
  for (let i = 1; i <= n; i++)
    if (!(GATE_FLOWS.has(flow) && i === 1))
      plans.push({
        flow,
        run: n === 1 ? 'gateway.answered' : `gateway.answered#${i}`,
        recover: ['recovery.sent#1'],
      });
  if (flow === 'gate')
    // The capture's answer lost, voided at the restart, and the capture of the card tapped again lost too.
    plans.push({ flow, run: 'gateway.answered#4', recover: ['gateway.answered#1'] });
  if (flow === 'gate-phone')
    plans.push(
      // The link's payment journaled, the hold not yet released: the restart must never charge that stay again.
      { flow, run: 'link.paid' },
      // And the restart that releases the paid stay's hold killed with that reversal's answer in hand.
      { flow, run: 'link.paid', recover: ['gateway.answered#1'] },
      // Paid at the gateway, the notification received and the process gone before it was read.
      { flow, run: 'link.notified' },
    );
  return plans;
}

/** Offline and forwarding are drawn twice as often: forwarding runs at every restart of theirs. */
const FLOW_DRAW: readonly Flow[] = [...FLOW_NAMES, 'offline', 'queued'];

/** The window (ms) a random-moment kill of the first run is drawn in, per flow: about the flow's length. */
const RUN_WINDOW_MS: Record<Flow, number> = {
  sale: 200,
  meter: 200,
  'meter-extend': 300,
  refund: 250,
  void: 250,
  'meter-void': 300,
  offline: 300,
  queued: 40,
  gate: 400,
  'gate-phone': 600,
};

/**
 * Plans a seeded random draw chooses from: a kill at a random moment of the flow; a systematic plan followed by a
 * kill at a random moment of the restart (recovery waits `timeoutReversalDelayMs` 200 ms, then sends; forwarding
 * follows); or a systematic plan.
 */
export function randomPlan(random: () => number, flow?: Flow): CrashPlan {
  const f = flow ?? FLOW_DRAW[Math.floor(random() * FLOW_DRAW.length)]!;
  const plans = systematicPlans(f);
  const r = random();
  if (r < 0.3) {
    // A moment of the flow (sending, journaling, the reader, SQLite mid-write), not a named step.
    return { flow: f, killAfterMs: Math.floor(random() * RUN_WINDOW_MS[f]) };
  }
  if (r < 0.55) {
    // A restart with work to do (an answer lost, a forward pending) killed at a random moment of it.
    const base = plans.filter(
      (p) => !p.recover?.length && (p.run === undefined || /answered|sent/.test(p.run)),
    );
    const plan = base[Math.floor(random() * base.length)]!;
    return { ...plan, restartKillAfterMs: Math.floor(random() * 700) };
  }
  return plans[Math.floor(random() * plans.length)]!;
}

/** The port each crash sandbox sends its payment-link notifications to (see {@link startCrashSandbox}). */
const notificationPorts = new WeakMap<Sandbox, number>();

/**
 * The standalone sandbox of the crash suite: it sends its signed payment-link notifications to a local port of its
 * own, where every terminal of `gate-phone` listens (pay by phone is offered only while the terminal receives them).
 * The other flows pay no link: nothing is sent there.
 */
export async function startCrashSandbox(): Promise<Sandbox> {
  const port = await closedPort();
  const sandbox = await startSandbox({
    port: 0,
    webhookUrl: `http://127.0.0.1:${port}/payment-links/notifications`,
  });
  notificationPorts.set(sandbox, port);
  return sandbox;
}

interface ChildResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

let bundled: string | undefined;

/** A bundle no suite has started a child from for this long is another version's, left behind: it is removed. */
const STALE_BUNDLE_MS = 24 * 3_600_000;

/**
 * Removes the bundles of the directory, other than `keep`, that no suite has started a child from for a day (each
 * source version leaves one behind; a run in progress touches its own at every child), and drafts left by a build
 * that died before its rename.
 */
function pruneStaleBundles(keep: string): void {
  const now = Date.now();
  for (const name of readdirSync(BUNDLE_DIR)) {
    const path = join(BUNDLE_DIR, name);
    if (path === keep || !/^driver(-[0-9a-f]{16})?\.mjs(\.\d+)?$/.test(name)) continue;
    try {
      if (now - statSync(path).mtimeMs > STALE_BUNDLE_MS) rmSync(path, { force: true });
    } catch {
      // Removed meanwhile by another suite doing the same.
    }
  }
}

/**
 * How a child starts: the driver bundled into one module (esbuild, the transformer tsx itself uses), built once per
 * process, so that each child loads one file instead of resolving and transforming every source on its start as
 * `--import tsx` does: about 0.7 s instead of 1.5 s here, and a third of the CPU. The suite starts hundreds of
 * children. The bundle carries its source map, so that a child's stack traces point at the sources. It is named by
 * its content, so that processes building other sources into the same directory (another checkout sharing
 * node_modules, an edit between two runs) never replace the bundle a running suite's children load; it is written
 * under a name of its own and renamed into place: processes that build it at once each leave the same whole file.
 * Each child's start touches it, and bundles idle for a day are removed ({@link pruneStaleBundles}).
 */
function driverArgs(): string[] {
  if (bundled === undefined) {
    const built = buildSync({
      entryPoints: [DRIVER],
      write: false,
      outfile: join(BUNDLE_DIR, 'driver.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'inline',
      logLevel: 'warning',
    });
    const file = built.outputFiles[0];
    if (!file) throw new Error('esbuild wrote no bundle of the crash driver');
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const digest = createHash('sha256').update(file.contents).digest('hex').slice(0, 16);
    const path = join(BUNDLE_DIR, `driver-${digest}.mjs`);
    const partial = `${path}.${process.pid}`;
    writeFileSync(partial, file.contents);
    renameSync(partial, path);
    bundled = path;
    pruneStaleBundles(path);
  }
  // In use: never stale while a suite starts children from it.
  const now = new Date();
  utimesSync(bundled, now, now);
  return ['--enable-source-maps', bundled];
}

function runChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { killAfterMs?: number; killPhase?: 'start' | 'flow'; timeoutMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...driverArgs(), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      // Randomised kill: the clock starts when the flow begins (`flow`) or the terminal begins to start (`start`).
      const phase = `"phase":"${options.killPhase ?? 'flow'}"`;
      if (options.killAfterMs !== undefined && killTimer === undefined && stdout.includes(phase))
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
  return `http://127.0.0.1:${await closedPort()}`;
}

export interface IterationResult {
  plan: string;
  /** Failpoints (or random moments) that did kill a terminal, in order. */
  killedAt: string[];
  /**
   * Approvals lost: charges (sale, capture, refund) the journal or the queue recorded as approved, and results the
   * customer was told "approved", that the gateway does not hold standing.
   */
  lost: number;
  /** Charges the gateway holds more than once (one order sold, one authorization captured, one refund made twice). */
  duplicated: number;
  /** Entries in flight, stored payments not forwarded, unknown outcomes the gateway still holds, open holds nobody watches. */
  unresolved: number;
  /**
   * Sandbox consistency problems (rule names, open holds the terminal legitimately keeps excepted), disagreements
   * between the ledger and what the customer or the operator was told, and planned kill points never reached.
   */
  problems: string[];
  /**
   * Authorizations the gateway still holds and the restarted terminal legitimately keeps: a meter pre-authorization
   * approved and journaled before the crash, whose session died with the process, which the host reverses when the
   * capture window ends (tariff.captureWindowMinutes); a tap-and-go hold of a car still inside, which its expiry watch
   * reverses after the maximum stay. Only after a kill. (A tap-and-go hold never stored as a stay is reversed at the
   * restart.)
   */
  openHolds: string[];
  /** Card data in clear in the iteration's database, WAL, key-adjacent and log files. */
  cardData: CardDataFinding[];
  /** Files scanned (relative names). */
  scanned: string[];
  /** The money at the gateway after recovery. */
  money: MoneyPicture;
  /** The offline queue's payments at the end, as `state` or `state:reason` (what a money picture that differs needs). */
  offlineStates: string[];
  /** What the customer and the operator were told (test/crash/told.ts). */
  told: Told[];
  /** Screens of the first run when it was not killed. */
  screens?: string[];
}

/** The gateway's view of one iteration, in counts and minor units. */
export interface MoneyPicture {
  /** Sales / captures / refunds standing (not voided, not declined). */
  sales: number;
  captures: number;
  refunds: number;
  /** Voided ones (a timeout void after a lost answer, or the operator's void). */
  voided: number;
  /** Authorizations fully released (reversed, timeout-reversed, or captured less and the rest released). */
  released: number;
  /** Payment links paid (approved on the hosted page), standing. */
  linkPayments: number;
  /** What the customer pays in the end: standing sales, captures and link payments minus standing refunds. */
  chargedMinor: number;
  /** Payments in the offline queue (any state), and those approved after forwarding. */
  stored: number;
  forwardedApproved: number;
}

const CHARGES = new Set(['sale', 'capture', 'refund-payment', 'refund-capture']);

function standing(t: LedgerTransaction): boolean {
  return !t.voided && t.status !== 'DECLINED' && t.status !== 'FAILED' && t.status !== 'INVALID_REQUEST';
}

/** A ledger transaction that charges the customer: a sale, a capture, or the payment of a payment link. */
function isCharge(t: LedgerTransaction): boolean {
  return t.kind === 'sale' || t.kind === 'capture' || t.kind === 'link-payment';
}

interface OfflineRow {
  transaction_id: string;
  state: string;
  reason: string | null;
}

/**
 * Judges the gateway's ledger against what the customer and the operator were told (DIR/told.jsonl):
 * - told "approved" ⇒ the charge stands at the gateway for that amount, unless the operator was told a void of it
 *   approved (then it is voided), or the operator's void of it left the terminal and a kill kept its answer from the
 *   operator (recovery completes it: journal plan `void-referenced`). No excuse for a timeout void of it. A payment stored offline whose forward was in
 *   doubt after a kill may have been voided (the operator sees it among those not approved after forwarding);
 * - told "declined" / "error" ⇒ none of the payment's requests charged the customer;
 * - the operator told a refund approved ⇒ the refund stands for that amount; told not approved ⇒ it does not;
 * - the operator told a void approved ⇒ the charge is voided and, for a capture, the authorization hold released;
 * - every standing charge is one the customer was told about, or belongs to a payment whose result the customer
 *   never saw because the run was killed first; with no kill at all, what the customer pays is exactly what was told.
 */
function judgeTold(
  told: Told[],
  entries: JournalEntry[],
  ledger: LedgerTransaction[],
  offline: OfflineRow[],
  payments: number,
  killed: boolean,
  chargedMinor: number,
): { lost: number; problems: string[] } {
  const problems: string[] = [];
  let lost = 0;
  const byTid = (tid: string): LedgerTransaction[] => ledger.filter((t) => t.transactionId === tid);
  const operator = told.filter((t): t is Extract<Told, { who: 'operator' }> => t.who === 'operator');
  const customer = told.filter((t): t is Extract<Told, { who: 'customer' }> => t.who === 'customer');
  const voidedByOperator = new Set(
    operator.filter((o) => o.action === 'void' && o.outcome === 'approved').map((o) => o.target),
  );
  const claimed = new Set<string>();
  let expectedMinor = 0;
  // Operator voids that left the terminal (journaled approved, or resolved other than as provably not sent).
  const voidsSent = entries
    .filter(
      (v) =>
        v.service.startsWith('void-') &&
        (v.state === 'approved' || (v.state === 'resolved' && v.resolution !== 'not-sent')),
    )
    .map((v) => ({ tid: v.referencedTransactionId, gatewayId: v.parentGatewayId }));

  for (const c of customer) {
    const label = `${c.screen} ${c.amountMinor ?? '?'} [${c.transactionIds.join(',')}]`;
    if (c.screen === 'approved' && c.paidBefore !== undefined) {
      // An exit shown as paid by an earlier payment: by its link, or by its capture. That payment stands for the
      // amount shown (counted once, however often the exit is shown paid); nothing of this screen's own is charged.
      const kind = c.paidBefore === 'PAID_BY_LINK' ? 'link-payment' : 'capture';
      const paid = ledger.filter(
        (t) => t.kind === kind && standing(t) && t.amounts.captured === c.amountMinor,
      );
      const charge = paid.find((t) => !claimed.has(t.id)) ?? paid[0];
      if (!charge) {
        lost += 1;
        problems.push(`TOLD_PAID_BEFORE_NOT_CHARGED(${c.paidBefore} ${label})`);
        continue;
      }
      if (!claimed.has(charge.id)) {
        claimed.add(charge.id);
        expectedMinor += charge.amounts.captured;
      }
      const sent = ledger.filter(
        (t) => isCharge(t) && t.transactionId !== undefined && c.transactionIds.includes(t.transactionId),
      );
      if (sent.some(standing)) problems.push(`TOLD_PAID_BEFORE_BUT_CHARGED(${label})`);
      continue;
    }
    const candidates = ledger.filter(
      (t) =>
        isCharge(t) &&
        !claimed.has(t.id) &&
        (c.transactionIds.length > 0
          ? t.transactionId !== undefined && c.transactionIds.includes(t.transactionId)
          : t.amounts.captured === c.amountMinor),
    );
    if (c.screen !== 'approved') {
      const charged = candidates.filter(standing);
      if (charged.length > 0) problems.push(`TOLD_NOT_CHARGED_BUT_CHARGED(${label})`);
      for (const t of charged) claimed.add(t.id);
      continue;
    }
    const voided = c.transactionIds.some((tid) => voidedByOperator.has(tid));
    // The operator's void of it went out and a kill kept its answer from the operator: recovery completes it.
    const voidSent = candidates.find(
      (t) => t.voided && voidsSent.some((v) => v.tid === t.transactionId || v.gatewayId === t.id),
    );
    if (voidSent) {
      claimed.add(voidSent.id);
      continue;
    }
    if (voided) {
      const charge = candidates.find((t) => t.voided);
      if (!charge) problems.push(`OPERATOR_VOID_NOT_DONE(${label})`);
      else claimed.add(charge.id);
      continue;
    }
    const charge = candidates.find((t) => standing(t) && t.amounts.captured === c.amountMinor);
    if (charge) {
      claimed.add(charge.id);
      expectedMinor += charge.amounts.captured;
      continue;
    }
    // Stored offline: after a kill its forward may have been in doubt, voided, and reported to the operator.
    // The row of this payment: not one whose charge an earlier screen already accounts for (a transactionId sent
    // again since, e.g. a forward attempt of an earlier stored payment, is in this screen's list too).
    const claimedTids = new Set(ledger.filter((t) => claimed.has(t.id)).map((t) => t.transactionId));
    const row = offline.find(
      (p) => c.transactionIds.includes(p.transaction_id) && !claimedTids.has(p.transaction_id),
    );
    if (row && killed && row.state !== 'approved' && row.state !== 'stored' && row.state !== 'forwarding')
      continue;
    lost += 1;
    problems.push(`TOLD_APPROVED_NOT_CHARGED(${label})`);
  }

  for (const o of operator) {
    const label = `${o.action} ${o.outcome} ${o.target}→${o.transactionId}`;
    if (o.action === 'refund') {
      const refund = byTid(o.transactionId).find((t) => t.kind === 'refund' && standing(t));
      if (o.outcome === 'approved') {
        if (!refund || (o.amountMinor !== undefined && refund.amounts.requested !== o.amountMinor))
          problems.push(`OPERATOR_REFUND_NOT_STANDING(${label})`);
        else expectedMinor -= refund.amounts.requested;
      } else if (refund) problems.push(`OPERATOR_REFUND_REFUSED_BUT_STANDING(${label})`);
      continue;
    }
    const target = byTid(o.target).find(isCharge);
    if (o.outcome === 'approved') {
      if (!target?.voided) problems.push(`OPERATOR_VOID_NOT_STANDING(${label})`);
      const auth = target?.parentId ? ledger.find((t) => t.id === target.parentId) : undefined;
      // gateway.md §7: voiding a capture leaves the hold in place; the terminal must reverse it.
      if (auth && auth.amounts.captured + auth.amounts.reversed < auth.amounts.authorized)
        problems.push(`OPERATOR_VOID_LEFT_HOLD(${label})`);
    } else if (o.outcome === 'declined' || o.outcome === 'rejected') {
      if (target?.voided) problems.push(`OPERATOR_VOID_REFUSED_BUT_VOIDED(${label})`);
    }
  }

  // Every standing charge is explained by a result the customer saw, or by a payment a kill left untold.
  const unexplained = ledger.filter((t) => isCharge(t) && standing(t) && !claimed.has(t.id)).length;
  const untold = killed ? Math.max(0, payments - customer.length) : 0;
  if (unexplained > untold) problems.push(`CHARGED_WITHOUT_TELLING(${unexplained - untold})`);
  if (!killed) {
    if (customer.length < payments)
      problems.push(`CUSTOMER_NOT_TOLD(${customer.length} of ${payments} results shown)`);
    if (chargedMinor !== expectedMinor)
      problems.push(`CHARGED_NOT_AS_TOLD(told ${expectedMinor}, gateway ${chargedMinor})`);
  }
  return { lost, problems };
}

/**
 * Judges the gateway's ledger against the terminal's journal after recovery has finished.
 */
function judge(
  entries: JournalEntry[],
  inFlight: number,
  offline: OfflineRow[],
  ledger: LedgerTransaction[],
  problems: { rule: string; transactionId?: string }[],
  orphanWatch: string[],
  killed: boolean,
): Pick<IterationResult, 'lost' | 'duplicated' | 'unresolved' | 'problems' | 'openHolds' | 'money'> {
  const byGatewayId = new Map(ledger.map((t) => [t.id, t]));
  let lost = 0;
  for (const e of entries) {
    if (e.state !== 'approved' || !CHARGES.has(e.service)) continue;
    const tx = e.gatewayId ? byGatewayId.get(e.gatewayId) : undefined;
    // Voided is acceptable only when the operator's void of that charge was sent (journaled). A timeout void never
    // excuses it: a timeout void is for an outcome the terminal did not know, and this one it journaled as approved
    // (the sweep race of issue 11, money bug 2).
    const voidedByOperator = entries.some(
      (v) =>
        v.service.startsWith('void-') &&
        (v.state === 'approved' || v.state === 'resolved') &&
        (v.referencedTransactionId === e.transactionId || v.parentGatewayId === e.gatewayId),
    );
    if (!tx || (tx.voided && !voidedByOperator)) lost += 1;
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
  // One payment link paid once (its id is the payment's code).
  duplicated += count(ledger.filter((t) => t.kind === 'link-payment' && standing(t)).map((t) => t.code));
  // One authorization captured once, one charge refunded once (each flow refunds at most once).
  duplicated += count(ledger.filter((t) => t.kind === 'capture' && standing(t)).map((t) => t.parentId));
  duplicated += count(ledger.filter((t) => t.kind === 'refund' && standing(t)).map((t) => t.parentId));
  duplicated += problems.filter((p) => p.rule === 'CHARGED_TWICE' || p.rule === 'CAPTURED_TWICE').length;

  // An open hold is legitimate only when a kill took its session away and the restarted host watches it.
  const openHolds = killed
    ? problems
        .filter(
          (p) => p.rule === 'OPEN_AUTHORIZATION' && p.transactionId && orphanWatch.includes(p.transactionId),
        )
        .map((p) => p.transactionId!)
    : [];
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
    [...ofKind('sale'), ...ofKind('capture'), ...ofKind('link-payment')].reduce(
      (s, t) => s + t.amounts.captured,
      0,
    ) - ofKind('refund').reduce((s, t) => s + t.amounts.requested, 0);
  const money: MoneyPicture = {
    sales: ofKind('sale').length,
    captures: ofKind('capture').length,
    refunds: ofKind('refund').length,
    linkPayments: ofKind('link-payment').length,
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
 * ledger against the journal and against what the customer and the operator were told, and scan every file the
 * terminals wrote for card data in clear. A planned failpoint that no terminal reached is a problem of the suite
 * (`KILL_POINT_NOT_REACHED`), unless `optionalRecoverKill` says the last restart failpoint may lie past the end.
 */
export async function flowIteration(
  sandbox: Sandbox,
  plan: CrashPlan,
  options: { childTimeoutMs?: number; optionalRecoverKill?: boolean } = {},
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
    const notReached: string[] = [];
    // The offline flow takes its payments while the gateway cannot be reached.
    const firstUrl = plan.flow === 'offline' || plan.flow === 'queued' ? await closedPortUrl() : sandbox.url;
    // Pay by phone: where the sandbox's notifications arrive, which every start of the terminal listens on.
    const port = notificationPorts.get(sandbox);
    if (plan.flow === 'gate-phone' && port === undefined)
      throw new Error('gate-phone needs the sandbox of startCrashSandbox (its payment-link notifications)');
    const extra = plan.flow === 'gate-phone' ? [String(port)] : [];
    const first = await runChild(['run', plan.flow, dir, firstUrl, ...extra], withPoint(plan.run), {
      timeoutMs,
      ...(plan.killAfterMs !== undefined ? { killAfterMs: plan.killAfterMs } : {}),
    });
    if (first.timedOut) throw new Error(`terminal hung (${planName(plan)}): ${first.stderr.slice(-3000)}`);
    if (first.signal === 'SIGKILL') killedAt.push(plan.run ?? `after ${plan.killAfterMs ?? '?'} ms`);
    else if (first.code !== 0)
      throw new Error(
        `terminal failed (${planName(plan)}, exit ${first.code}): ${first.stderr.slice(-3000)}`,
      );
    else if (plan.run) notReached.push(plan.run);
    const screens =
      first.signal === 'SIGKILL' ? undefined : lastJson<{ screens: string[] }>(first.stdout)?.screens;

    let report: { inFlight: number; orphanWatch: string[]; offlineDepth: number } | undefined;
    const planned = plan.recover ?? [];
    for (let i = 0; i <= MAX_RESTARTS && report === undefined; i++) {
      const point = planned[i];
      const killAfterMs = i === 0 && !point ? plan.restartKillAfterMs : undefined;
      const r = await runChild(['recover', plan.flow, dir, sandbox.url, ...extra], withPoint(point), {
        timeoutMs,
        ...(killAfterMs !== undefined ? { killAfterMs, killPhase: 'start' as const } : {}),
      });
      if (r.timedOut) throw new Error(`restart ${i + 1} hung (${planName(plan)}): ${r.stderr.slice(-3000)}`);
      if (r.signal === 'SIGKILL' && (point || killAfterMs !== undefined)) {
        killedAt.push(point ?? `restart after ${killAfterMs} ms`);
        continue;
      }
      if (r.code !== 0)
        throw new Error(
          `restart ${i + 1} failed (${planName(plan)}, exit ${r.code}): ${r.stderr.slice(-3000)}`,
        );
      report = lastJson(r.stdout);
      // The restart finished: every failpoint planned from here on was never reached.
      const missed = planned.slice(i);
      if (options.optionalRecoverKill && missed.length > 0 && i === planned.length - 1) missed.pop();
      notReached.push(...missed);
    }
    if (!report) throw new Error(`no restart completed (${planName(plan)})`);

    const journal = openJournal(join(dir, 'journal.db'));
    let entries: JournalEntry[];
    let inFlight: number;
    let offline: OfflineRow[];
    try {
      inFlight = journal.inFlight().length;
      entries = journal.list({ limit: 100_000 });
      offline = journal.db
        .prepare<[], OfflineRow>('SELECT transaction_id, state, reason FROM offline_payments ORDER BY id')
        .all();
    } finally {
      journal.close();
    }
    const ledger = sandbox.ledger().transactions;
    const told = readTold(dir);
    const killed = killedAt.length > 0;
    const verdict = judge(
      entries,
      inFlight,
      offline,
      ledger,
      sandbox.consistency({ requireResolved: true }).problems,
      report.orphanWatch,
      killed,
    );
    const byTold = judgeTold(
      told,
      entries,
      ledger,
      offline,
      FLOW_PAYMENTS[plan.flow],
      killed,
      verdict.money.chargedMinor,
    );
    const scan = scanForCardData(dir);
    return {
      plan: planName(plan),
      killedAt,
      ...verdict,
      lost: verdict.lost + byTold.lost,
      problems: [
        ...notReached.map((p) => `KILL_POINT_NOT_REACHED(${p})`),
        ...verdict.problems,
        ...byTold.problems,
      ],
      told,
      offlineStates: offline.map((p) => (p.reason === null ? p.state : `${p.state}:${p.reason}`)),
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
