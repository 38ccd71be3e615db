/**
 * What a `certify run` produces: one result per case with its evidence, and the run around them. The reports (JSON,
 * JUnit XML, HTML, PDF) and the evidence bundles are written from these shapes alone; card data is masked before a
 * value lands in any of them.
 */
import type { Finding } from './session.js';

/** One request the terminal sent and the answer it got, in the order sent; card data masked. */
export interface CapturedExchange {
  /** Position in the case's session, from 0. */
  index: number;
  /** The step of the case during which it was sent (0-based), or null for work after the last step (recovery). */
  step: number | null;
  /** ISO 8601 time the request was sent. */
  at: string;
  method: string;
  /** Path with query string. */
  path: string;
  /** The service the validator identified (e.g. `authorization`, `capture`, `dcc-offer`). */
  service: string;
  /** The JSON body sent, card data masked. */
  body: Record<string, unknown>;
  /** HTTP status of the answer; null when none came (timeout, connection lost). */
  httpStatus: number | null;
  /** Why no answer came, as the terminal's client saw it (the connection reset, the answer timed out …). */
  failure?: string;
  /** The JSON answer, when one came and was JSON; card data masked. */
  response?: unknown;
  /** Milliseconds from request to answer (or to the failure). */
  durationMs: number;
  /** `clientReferenceInformation.transactionId` of the request, when it has one. */
  transactionId?: string;
  /** The gateway's `id` in the answer, when it has one. */
  gatewayId?: string;
  /** The answer's `status` (e.g. AUTHORIZED, PENDING, REVERSED, DECLINED), or `NO ANSWER`. */
  status: string;
  /** `orderInformation.amountDetails.totalAmount` (or the reversal amount) and currency of the request. */
  amount?: string;
  currency?: string;
}

/** A message a step expects, in order. */
export interface ExpectedMessage {
  service: string;
  /** Decimal amount, e.g. `25.00`; absent: not compared. */
  amount?: string;
  /** Answer status, e.g. `AUTHORIZED`; `NO ANSWER` for a request whose answer is lost on purpose. */
  status?: string;
  /** Exact `clientReferenceInformation.comments`; absent: not compared (the rules check it anyway). */
  comments?: string;
}

/** One step of a case: what was done, what was expected and what happened. */
export interface StepResult {
  index: number;
  /** The step's action as the pack names it, e.g. `park`, `extend`, `end`, `refund`. */
  action: string;
  /** Human description, e.g. `pre-authorize for 60 minutes`. */
  description: string;
  expected: ExpectedMessage[];
  /** What the terminal sent in this step, in order. */
  actual: Array<{ service: string; amount?: string; status: string; comments?: string }>;
  /** The customer screen the step ended on (e.g. `approved`, `declined`, `session`). */
  screen?: string;
  /** Expected customer screen, when the case names one. */
  expectedScreen?: string;
  ok: boolean;
  /** Why the step failed, one sentence each (empty when ok). */
  problems: string[];
}

/** A finding of the message-level rules, tied to the message it is about. */
export interface CaseFinding extends Finding {
  /** Index of the message in the case's session. */
  index: number;
  service: string;
}

export type Verdict = 'passed' | 'failed' | 'skipped';

/**
 * The identity a terminal sends, as its configuration set it: the ids the acquirer matches the certification against
 * (pointOfSaleInformation.terminalId, clientReferenceInformation.partner.*, the v-c-merchant-id header) and the
 * terminal's country and currency.
 */
export interface TerminalIdentity {
  terminalId: string;
  merchantId: string;
  country: string;
  currency: string;
  developerId: string;
  solutionId: string;
  thirdPartyCertificationNumber: string;
}

/** One case of the pack, run: its verdict and its evidence. */
export interface CaseResult {
  id: string;
  title: string;
  /** Parking model: meter, kiosk, tap-and-go, attended. */
  model: string;
  /** N1 (card type 002) or N2 (card type 001), or `other`. */
  network: string;
  /** contact, contactless, msd, swiped. */
  entryMode: string;
  /** Simulated reader card profile name (devices/sim/cards.ts). */
  card: string;
  attended: boolean;
  /** The case whose transaction this one follows on (void, refund, timeout void …). */
  parent?: string;
  verdict: Verdict;
  /** Why the case was not run (e.g. the host cannot inject faults, the entry mode is not supported). */
  skipReason?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Currency of the case's amounts. */
  currency: string;
  /** The identity the case's terminal was configured with; absent when no terminal was configured (skipped, invalid). */
  terminal?: TerminalIdentity;
  /**
   * How long the case's terminal waited after a request left without an answer before its timeout reversal
   * (`journal.timeoutReversalDelayMs`), milliseconds; absent when no terminal was configured.
   */
  timeoutReversalDelayMs?: number;
  steps: StepResult[];
  messages: CapturedExchange[];
  findings: CaseFinding[];
  /** Every `clientReferenceInformation.transactionId` sent, in order. */
  transactionIds: string[];
  /** Every gateway id answered, in order. */
  gatewayIds: string[];
  /** Why the case failed, one sentence each: step mismatches, error findings, a stuck flow (empty when passed). */
  problems: string[];
}

/** A whole `certify run`. */
export interface RunReport {
  tool: { name: string; version: string };
  pack: { name: string; title: string; file: string; version: string };
  /**
   * `sandbox` (embedded) or the test host's URL, as the terminal was pointed at it; `credentials`: the gateway
   * credentials of the analyst's configuration (`--config` with a remote gateway) or the sandbox's.
   */
  gateway: { kind: 'sandbox' | 'url'; url: string; credentials: 'configuration' | 'sandbox' };
  /**
   * The identity the run's terminals used, taken from the cases run (each case's own in its `terminal`): a field on
   * which cases differed lists their values, comma-separated, in case order. When no case configured a terminal, the
   * identity of the run's configuration.
   */
  terminal: TerminalIdentity;
  /**
   * The timeout reversal delays the run's terminals used (`journal.timeoutReversalDelayMs`, each case's own in its
   * `timeoutReversalDelayMs`), milliseconds, each value once in case order; empty when no case configured a terminal.
   */
  timeoutReversalDelayMs: number[];
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  summary: RunTally;
  /** Whether the run was stopped (SIGINT, SIGTERM) before its last case; the cases not run are skipped. */
  stopped: boolean;
  /** The run as a whole, from {@link summary} and {@link stopped} ({@link runOutcome}). */
  outcome: RunOutcome;
  cases: CaseResult[];
}

/** The counts of a run, taken from the cases themselves so that a summary can never disagree with them. */
export interface RunTally {
  cases: number;
  passed: number;
  failed: number;
  skipped: number;
  messages: number;
  errorFindings: number;
  warningFindings: number;
}

export function tallyRun(report: Pick<RunReport, 'cases'>): RunTally {
  const t: RunTally = {
    cases: 0,
    passed: 0,
    failed: 0,
    skipped: 0,
    messages: 0,
    errorFindings: 0,
    warningFindings: 0,
  };
  for (const c of report.cases) {
    t.cases += 1;
    t[c.verdict] += 1;
    t.messages += c.messages.length;
    for (const f of c.findings) {
      if (f.severity === 'error') t.errorFindings += 1;
      else t.warningFindings += 1;
    }
  }
  return t;
}

/**
 * What a run says as a whole: `failed` when any case failed, `stopped` when the run was stopped before its last case,
 * `nothing checked` when every case was skipped, `passed` otherwise — only then a pass.
 */
export type RunOutcome = 'passed' | 'failed' | 'stopped' | 'nothing checked';

export function runOutcome(tally: Pick<RunTally, 'passed' | 'failed'>, stopped = false): RunOutcome {
  if (tally.failed > 0) return 'failed';
  if (stopped) return 'stopped';
  return tally.passed > 0 ? 'passed' : 'nothing checked';
}
