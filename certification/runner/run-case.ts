/**
 * One case of a pack, run through the real terminal: the parking machine of its model, the simulated reader with the
 * case's card, a journal of its own and the gateway client, every exchange recorded. Steps are played as a customer
 * or an operator would play them; each step's messages are compared with what the case expects, and the whole
 * session is judged by the message-level rules.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config } from '../../src/config/index.js';
import { silentLogger, type Logger } from '../../src/log/index.js';
import { parseDecimal } from '../../src/money/index.js';
import {
  END,
  send,
  SimulationError,
  waitFor,
  waitPastChoice,
  withGeneratedOperatorPin,
} from '../../src/host/drive.js';
import { localDateTime } from '../../src/host/local-time.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { VIRTUAL_CARDS } from '../../devices/sim/cards.js';
import { checkSession } from '../check.js';
import { CAT_LEVEL_BY_ATTENDANCE } from '../rules/tables.js';
import { identifyService } from '../service.js';
import { isServiceName } from '../../src/vocabulary/services.js';
import type {
  CapturedExchange,
  CaseFinding,
  CaseResult,
  ExpectedMessage,
  StepResult,
  TerminalIdentity,
} from '../results.js';
import type { PackCase, PackStep } from '../pack/schema.js';
import { mergeConfig } from '../pack/merge.js';
import { maskCardData, maskText } from './mask.js';
import { ExchangeRecorder, type RecordedExchange } from './recorder.js';
import type { TestHost } from './gateway-host.js';

/** The identity a terminal of `config` sends (the report states it; a case fails when a message carries another). */
export function terminalIdentity(config: Config): TerminalIdentity {
  return {
    terminalId: config.terminal.id,
    merchantId: config.gateway.merchantId,
    country: config.terminal.country,
    currency: config.terminal.currency,
    developerId: config.terminal.partner.developerId,
    solutionId: config.terminal.partner.solutionId,
    thirdPartyCertificationNumber: config.terminal.partner.thirdPartyCertificationNumber,
  };
}

export interface CaseRunOptions {
  /** The configuration every case starts from: the pack's, then the analyst's `--config`. */
  baseConfig: Record<string, unknown>;
  /** Whether `--config` named the gateway (then its kind and credentials are used as given). */
  remote: boolean;
  logger?: Logger;
  /** Relative paths of the configuration resolve against it. */
  cwd: string;
}

/** Service, amount, currency and status of one recorded exchange. */
interface Parsed {
  service: string;
  body: Record<string, unknown>;
  response: unknown;
  status: string;
  amount?: string;
  currency?: string;
  transactionId?: string;
  gatewayId?: string;
  comments?: string;
}

function json(buffer: Buffer): unknown {
  if (buffer.length === 0) return undefined;
  try {
    return JSON.parse(buffer.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function get(o: unknown, path: string): unknown {
  let cur = o;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function parseExchanges(recorded: readonly RecordedExchange[]): Parsed[] {
  const refundIds = new Set<string>();
  return recorded.map((x) => {
    const parsedBody = json(x.requestBody);
    const body =
      parsedBody !== null && typeof parsedBody === 'object' && !Array.isArray(parsedBody)
        ? (parsedBody as Record<string, unknown>)
        : {};
    const response = json(x.responseBody);
    const { service } = identifyService(x.method, x.path, body, (id) => refundIds.has(id));
    const gatewayId = str(get(response, 'id'));
    if ((service === 'refund-capture' || service === 'refund-payment') && gatewayId) refundIds.add(gatewayId);
    const status =
      x.httpStatus === null ? 'NO ANSWER' : (str(get(response, 'status')) ?? `HTTP ${x.httpStatus}`);
    const amount =
      str(get(body, 'orderInformation.amountDetails.totalAmount')) ??
      str(get(body, 'reversalInformation.amountDetails.totalAmount')) ??
      str(get(body, 'orderInformation.amountDetails.additionalAmount'));
    const currency =
      str(get(body, 'orderInformation.amountDetails.currency')) ??
      str(get(body, 'reversalInformation.amountDetails.currency'));
    const transactionId = str(get(body, 'clientReferenceInformation.transactionId'));
    const comments = str(get(body, 'clientReferenceInformation.comments'));
    return {
      service,
      body,
      response,
      status,
      ...(amount !== undefined ? { amount } : {}),
      ...(currency !== undefined ? { currency } : {}),
      ...(transactionId !== undefined ? { transactionId } : {}),
      ...(gatewayId !== undefined ? { gatewayId } : {}),
      ...(comments !== undefined ? { comments } : {}),
    };
  });
}

/** Requests that are not part of the certified session (token fetches of OAuth deployments). */
function certified(p: Parsed): boolean {
  return p.service !== 'oauth-token';
}

function compareStep(expected: readonly ExpectedMessage[], actual: readonly Parsed[]): string[] {
  const problems: string[] = [];
  const describe = (m: { service: string; amount?: string; status?: string }): string =>
    `${m.service}${m.amount !== undefined ? ` ${m.amount}` : ''}${m.status !== undefined ? ` → ${m.status}` : ''}`;
  if (expected.length !== actual.length)
    problems.push(
      `expected ${expected.length} message(s) [${expected.map(describe).join(', ')}], the terminal sent ${actual.length} [${actual.map(describe).join(', ')}]`,
    );
  expected.forEach((e, i) => {
    const a = actual[i];
    if (!a) return;
    if (a.service !== e.service) problems.push(`message ${i + 1}: expected ${e.service}, sent ${a.service}`);
    if (e.amount !== undefined && a.amount !== undefined && Number(a.amount) !== Number(e.amount))
      problems.push(`message ${i + 1} (${a.service}): expected amount ${e.amount}, sent ${a.amount}`);
    if (e.amount !== undefined && a.amount === undefined)
      problems.push(`message ${i + 1} (${a.service}): expected amount ${e.amount}, sent none`);
    if (e.status !== undefined && a.status !== e.status)
      problems.push(`message ${i + 1} (${a.service}): expected status ${e.status}, got ${a.status}`);
    if (e.comments !== undefined && a.comments !== e.comments)
      problems.push(
        `message ${i + 1} (${a.service}): expected comments "${e.comments}", sent "${a.comments ?? ''}"`,
      );
  });
  return problems;
}

function describeStep(step: PackStep, currency: string): string {
  switch (step.do) {
    case 'park':
      return `park for ${step.minutes} minutes`;
    case 'extend':
      return `extend by ${step.minutes} minutes`;
    case 'leave':
      return `end the session after ${step.after} minutes`;
    case 'pay-ticket':
      return `pay a ticket taken ${step.minutes} minutes ago`;
    case 'lost-ticket':
      return 'pay the lost-ticket fee';
    case 'tap-entry':
      return 'tap at the entry gate';
    case 'tap-exit':
      return `tap at the exit gate after ${step.after} minutes`;
    case 'sale':
      return `sale of ${step.amount} ${currency}`;
    case 'credit':
      return `standalone credit of ${step.amount} ${currency}`;
    case 'refund':
      return step.amount !== undefined
        ? `operator refunds ${step.amount} ${currency}`
        : 'operator refunds the payment';
    case 'void':
      return `operator voids the ${step.of}`;
  }
}

/** The journal's last approved entry of one of `services`: the transaction an operator follow-on is about. */
function lastApproved(host: TerminalHost, services: readonly string[]): string | undefined {
  return host.journal
    .list({ limit: 1000 })
    .find((e) => services.includes(e.service) && e.state === 'approved' && e.transactionId !== undefined)
    ?.transactionId;
}

const PAYMENTS = ['sale', 'capture', 'credit'];
const REFUNDS = ['refund-capture', 'refund-payment'];

/** Plays the steps of a case on a running terminal. */
class CaseDriver {
  private offsetMs = 0;
  private sessionStartMs = 0;
  last: TerminalSnapshot | undefined;
  /**
   * What the terminal answered an operator refund or void of the last step that it did not approve (its outcome, code
   * and message): the reason a step that expected a message may have sent none (REFUND_EXCEEDS_CAPTURED …).
   */
  operatorAnswer: string | undefined;

  constructor(
    private readonly host: TerminalHost,
    private readonly config: Config,
    private readonly clock: { offsetMs: number },
    private readonly waitMs: number,
  ) {}

  reset(): void {
    this.last = undefined;
    this.operatorAnswer = undefined;
  }

  /** The customer screen the last step ended on. */
  screen(): string | undefined {
    return this.last?.customer.screen;
  }

  private setOffset(ms: number): void {
    this.offsetMs = ms;
    this.clock.offsetMs = ms;
  }

  /** Back to the idle screen after a result, so that the next customer can start. */
  private async toIdle(): Promise<void> {
    const r = await this.host.snapshot();
    if (r.ok && r.value.customer.screen === 'idle') return;
    await this.host.send({ type: 'DONE' });
    await waitFor(this.host, ['idle'], 15_000);
  }

  async play(step: PackStep): Promise<string | undefined> {
    const host = this.host;
    const answer = step.dcc;
    switch (step.do) {
      case 'park':
        await this.toIdle();
        await send(host, { type: 'START' });
        await send(host, { type: 'CHOOSE_DURATION', minutes: step.minutes });
        await waitFor(host, ['confirm'], 5_000);
        this.sessionStartMs = this.offsetMs;
        await send(host, { type: 'CONFIRM' });
        this.last = await waitPastChoice(host, ['session', ...END], this.waitMs, answer);
        break;
      case 'extend':
        await send(host, { type: 'EXTEND', minutes: step.minutes });
        this.last = await waitPastChoice(host, ['session', ...END], this.waitMs, answer);
        break;
      case 'leave':
        this.setOffset(this.sessionStartMs + step.after * 60_000);
        await send(host, { type: 'END_SESSION' });
        this.last = await waitFor(host, END, this.waitMs);
        break;
      case 'pay-ticket':
      case 'lost-ticket': {
        await this.toIdle();
        await send(host, { type: 'START' });
        if (step.do === 'lost-ticket') await send(host, { type: 'LOST_TICKET' });
        else {
          const entered = new Date(Date.now() - step.minutes * 60_000);
          await send(host, {
            type: 'ENTER_TICKET',
            ticket: `${localDateTime(entered, this.config.terminal.timezone).slice(0, 12)}0001`,
          });
        }
        this.last = await waitFor(host, ['confirm', ...END], 5_000);
        if (this.last.customer.screen !== 'confirm') break;
        await send(host, { type: 'CONFIRM' });
        this.last = await waitPastChoice(host, END, this.waitMs, answer);
        break;
      }
      case 'tap-entry':
        await this.toIdle();
        this.sessionStartMs = this.offsetMs;
        await send(host, { type: 'TAP_ENTRY' });
        this.last = await waitFor(host, ['session', ...END], this.waitMs);
        if (this.last.customer.screen === 'session') {
          await send(host, { type: 'DONE' });
          await waitFor(host, ['idle'], 5_000);
        }
        break;
      case 'tap-exit':
        await this.toIdle();
        this.setOffset(this.sessionStartMs + step.after * 60_000);
        await send(host, { type: 'TAP_EXIT' });
        this.last = await waitPastChoice(host, END, this.waitMs, answer);
        break;
      case 'sale':
      case 'credit':
        await this.toIdle();
        // A standalone credit is started with the operator PIN, as the attendant starts it.
        await send(
          host,
          step.do === 'credit' ? { type: 'CREDIT', pin: host.generatedOperatorPin ?? '' } : { type: 'START' },
        );
        await waitFor(host, ['enter-amount'], 5_000);
        await send(host, {
          type: 'ENTER_AMOUNT',
          minor: parseDecimal(step.amount, this.config.terminal.currency),
        });
        await waitFor(host, ['confirm'], 5_000);
        await send(host, { type: 'CONFIRM' });
        this.last = await waitPastChoice(host, END, this.waitMs, answer);
        break;
      case 'refund':
      case 'void': {
        const services =
          step.do === 'refund' || step.of === 'payment'
            ? PAYMENTS
            : step.of === 'refund'
              ? REFUNDS
              : ['credit'];
        const target = lastApproved(host, services);
        if (target === undefined)
          return `no approved ${step.do === 'refund' ? 'payment' : step.of} to ${step.do}`;
        const pin = host.generatedOperatorPin ?? '';
        const r = await host.operator({
          pin,
          action:
            step.do === 'refund'
              ? {
                  type: 'refund',
                  transactionId: target,
                  ...(step.amount !== undefined
                    ? { amountMinor: parseDecimal(step.amount, this.config.terminal.currency) }
                    : {}),
                }
              : { type: 'void', transactionId: target },
        });
        if (!r.ok) return `operator ${step.do}: ${r.error.message}`;
        const answer = r.value;
        if ((answer.type === 'refund' || answer.type === 'void') && answer.outcome !== 'approved')
          this.operatorAnswer = `operator ${step.do}: ${answer.outcome} ${answer.code}: ${answer.message}`;
        break;
      }
    }
    return undefined;
  }
}

function toCaptured(x: RecordedExchange, p: Parsed, index: number): CapturedExchange {
  return {
    index,
    step: x.step,
    at: x.at.toISOString(),
    method: x.method,
    path: x.path,
    service: p.service,
    body: maskCardData(p.body) as Record<string, unknown>,
    httpStatus: x.httpStatus,
    ...(x.failure !== undefined ? { failure: maskText(x.failure) } : {}),
    ...(p.response !== undefined ? { response: maskCardData(p.response) } : {}),
    durationMs: x.durationMs,
    ...(p.transactionId !== undefined ? { transactionId: maskText(p.transactionId) } : {}),
    ...(p.gatewayId !== undefined ? { gatewayId: maskText(p.gatewayId) } : {}),
    status: maskText(p.status),
    ...(p.amount !== undefined ? { amount: p.amount } : {}),
    ...(p.currency !== undefined ? { currency: p.currency } : {}),
  };
}

/**
 * Waits until the terminal owes the gateway nothing: no request in flight, no background work, and no follow-up
 * obligation open (a voided capture's hold is released after a grace period, by the host's own background work).
 */
async function settled(host: TerminalHost, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await host.settle(timeoutMs);
  while (host.followUps.open().length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    await host.settle(Math.max(0, deadline - Date.now()));
  }
}

/** A sent value as a problem states it: a string as it is, anything else as JSON. */
function sentText(sent: unknown): string {
  return typeof sent === 'string' ? sent : JSON.stringify(sent);
}

/** A case's problem with the field `path` of message #`index` (numbered as the evidence numbers it), and why. */
function messageProblem(index: number, service: string, path: string, sent: unknown, why: string): string {
  return `message #${index} (${service}): ${path} ${sentText(sent)}: ${why}`;
}

/**
 * The journal's waits against the embedded sandbox, unless the configuration sets its own: a timeout reversal 0.5 s
 * after the original rather than 60 s, so that a timeout chain takes seconds. The sandbox does not hold the terminal to
 * the gateway's wait; a test host given by URL does, and gets the configured waits (their defaults: gateway.md §2).
 * The delay used is in each case's result and in the run's reports.
 */
export const EMBEDDED_SANDBOX_JOURNAL = { timeoutReversalDelayMs: 500, resolutionRetryMs: 250 } as const;

/** What a case's result is made of from its start: its description, and how it is finished or skipped. */
function caseRecord(chain: readonly PackCase[]): {
  target: PackCase;
  virtual: (typeof VIRTUAL_CARDS)[string] | undefined;
  finish: (
    partial: Pick<CaseResult, 'verdict' | 'steps' | 'messages' | 'findings' | 'problems' | 'currency'> & {
      skipReason?: string;
      terminal?: TerminalIdentity;
      timeoutReversalDelayMs?: number;
    },
  ) => CaseResult;
  skip: (reason: string, currency?: string) => CaseResult;
} {
  const target = chain[chain.length - 1]!;
  const started = new Date();
  const virtual = VIRTUAL_CARDS[target.card];
  // A card presented as a sequence (a chip that fails, then its stripe) is reported as what it ends with.
  const outcome = virtual?.outcome.kind === 'sequence' ? virtual.outcome.steps.at(-1) : virtual?.outcome;
  const base: Omit<
    CaseResult,
    | 'verdict'
    | 'finishedAt'
    | 'durationMs'
    | 'steps'
    | 'messages'
    | 'findings'
    | 'transactionIds'
    | 'gatewayIds'
    | 'problems'
    | 'currency'
    | 'terminal'
    | 'timeoutReversalDelayMs'
  > = {
    id: target.id,
    title: target.title,
    model: target.model,
    network: outcome && 'card' in outcome ? outcome.card.network : 'other',
    entryMode: outcome && outcome.kind === 'read' ? outcome.entryMode : (outcome?.kind ?? 'unknown'),
    card: target.card,
    attended: target.attended,
    ...(target.parent !== undefined ? { parent: target.parent } : {}),
    startedAt: started.toISOString(),
  };
  const finish = (
    partial: Pick<CaseResult, 'verdict' | 'steps' | 'messages' | 'findings' | 'problems' | 'currency'> & {
      skipReason?: string;
      terminal?: TerminalIdentity;
      timeoutReversalDelayMs?: number;
    },
  ): CaseResult => {
    const finished = new Date();
    return {
      ...base,
      ...partial,
      // Problems, findings and steps quote what was sent, judged before masking: masked as the messages are.
      steps: maskCardData(partial.steps) as StepResult[],
      findings: partial.findings.map((f) => ({ ...f, message: maskText(f.message) })),
      problems: partial.problems.map(maskText),
      finishedAt: finished.toISOString(),
      durationMs: finished.getTime() - started.getTime(),
      transactionIds: partial.messages.flatMap((m) =>
        m.transactionId !== undefined ? [m.transactionId] : [],
      ),
      gatewayIds: partial.messages.flatMap((m) => (m.gatewayId !== undefined ? [m.gatewayId] : [])),
    };
  };
  const skip = (reason: string, currency = 'GBP'): CaseResult =>
    finish({
      verdict: 'skipped',
      skipReason: reason,
      steps: [],
      messages: [],
      findings: [],
      problems: [],
      currency,
    });
  return { target, virtual, finish, skip };
}

/** The result of a case that is not run (the run was stopped before it): skipped, saying why. */
export function notRunCase(chain: readonly PackCase[], reason: string): CaseResult {
  return caseRecord(chain).skip(reason);
}

export async function runCase(
  chain: readonly PackCase[],
  testHost: TestHost,
  options: CaseRunOptions,
): Promise<CaseResult> {
  const { target, virtual, finish, skip } = caseRecord(chain);

  const notApplicable = chain.find((c) => c.notApplicable !== undefined)?.notApplicable;
  if (notApplicable !== undefined) return skip(notApplicable);
  if (!testHost.canInjectFaults && chain.some((c) => c.steps.some((s) => (s.faults?.length ?? 0) > 0)))
    return skip(`${testHost.url} cannot inject the faults this case needs (no /__sandbox/faults)`);

  const dir = mkdtempSync(join(tmpdir(), 'pt-certify-'));
  const layers = chain.map((c) => c.config);
  const raw = mergeConfig(
    testHost.embedded ? { journal: EMBEDDED_SANDBOX_JOURNAL } : undefined,
    options.baseConfig,
    ...layers,
    {
      terminal: { model: target.model, catLevel: target.attended ? 6 : 2 },
      reader: { kind: 'sim', sim: { card: target.card, presentDelayMs: 20 } },
      journal: { path: join(dir, 'journal.db') },
      offline: { keyFile: join(dir, 'offline.key') },
      ...(options.remote ? {} : { gateway: { kind: 'sandbox' } }),
    },
  );
  let config: Config;
  try {
    const parsed = parseConfig(raw);
    config = { ...parsed, terminal: withGeneratedOperatorPin(parsed.terminal) };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return finish({
      verdict: 'failed',
      steps: [],
      messages: [],
      findings: [],
      problems: [`the case's configuration is invalid: ${(e as Error).message}`],
      currency: 'GBP',
    });
  }
  const currency = config.terminal.currency;
  const recorder = new ExchangeRecorder(config.gateway.timeouts);
  const clock = { offsetMs: 0 };
  const startedAtMs = Date.now();
  const steps: StepResult[] = [];
  const problems: string[] = [];
  let host: TerminalHost | undefined;
  try {
    host = await createTerminalHost(config, {
      logger: options.logger ?? silentLogger(),
      cwd: options.cwd,
      parkingClock: { now: () => startedAtMs + clock.offsetMs },
      gatewayUrlOverride: testHost.url,
      gatewayDispatcher: recorder.dispatcher,
    });
    const waitMs = config.journal.timeoutReversalDelayMs + 30_000;
    const driver = new CaseDriver(host, config, clock, waitMs);
    await waitFor(host, ['idle'], 10_000);
    let index = 0;
    for (const c of chain) {
      for (const step of c.steps) {
        recorder.step = index;
        const first = recorder.exchanges.length;
        const stepProblems: string[] = [];
        if (step.faults?.length) await testHost.scheduleFaults(step.faults);
        driver.reset();
        try {
          const refused = await driver.play(step);
          if (refused) stepProblems.push(refused);
        } catch (e) {
          stepProblems.push(
            e instanceof SimulationError ? `the terminal got stuck: ${e.message}` : String(e),
          );
        }
        await settled(host, waitMs);
        const sent = parseExchanges(recorder.since(0)).slice(first).filter(certified);
        stepProblems.push(...compareStep(step.expect, sent));
        // Why the terminal sent what it did: an operator refusal is a result of its own, not a failure, unless the
        // case expected otherwise.
        if (stepProblems.length > 0 && driver.operatorAnswer !== undefined)
          stepProblems.push(driver.operatorAnswer);
        const screen = driver.screen();
        if (step.screen !== undefined && screen !== step.screen)
          stepProblems.push(
            `expected the ${step.screen} screen, the terminal showed ${screen ?? 'no result'}`,
          );
        steps.push({
          index,
          action: step.do,
          description: `${describeStep(step, currency)}${c !== target ? ` (${c.id})` : ''}`,
          expected: step.expect,
          actual: sent.map((p) => ({
            service: p.service,
            ...(p.amount !== undefined ? { amount: p.amount } : {}),
            status: p.status,
            ...(p.comments !== undefined ? { comments: p.comments } : {}),
          })),
          ...(screen !== undefined ? { screen } : {}),
          ...(step.screen !== undefined ? { expectedScreen: step.screen } : {}),
          ok: stepProblems.length === 0,
          problems: stepProblems,
        });
        problems.push(...stepProblems.map((p) => `step ${index + 1} (${step.do}): ${p}`));
        index++;
      }
    }
    recorder.step = null;
    await settled(host, waitMs);
  } catch (e) {
    problems.push(`the run stopped: ${(e as Error).message}`);
  } finally {
    await host?.close().catch(() => undefined);
    await recorder.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  const inconsistent = await testHost.consistencyProblems().catch((e: Error) => [e.message]);
  if (inconsistent?.length) problems.push(...inconsistent.map((p) => `the gateway's ledger: ${p}`));

  const all = recorder.exchanges.filter((x) => x.done || x.httpStatus !== null || x.failure !== undefined);
  const parsed = parseExchanges(all);
  const kept = all.map((x, i) => ({ x, p: parsed[i]! })).filter(({ p }) => certified(p));
  const messages = kept.map(({ x, p }, i) => toCaptured(x, p, i));
  // The rules judge what was sent, before masking (in memory only): masked track data could not be checked.
  const judged = checkSession(
    kept.map(({ x, p }) => ({
      method: x.method,
      path: x.path,
      body: p.body,
      ...(p.response !== undefined ? { response: p.response } : {}),
    })),
  );
  const findings: CaseFinding[] = judged.messages.flatMap((m) =>
    m.findings.map((f) => ({ ...f, index: m.index, service: m.service })),
  );
  for (const f of findings.filter((f) => f.severity === 'error'))
    problems.push(`message #${f.index} (${f.service}): ${f.rule} ${f.field}: ${f.message}`);
  // catLevel per model (spec 001: unattended 2, attended mobile 6): the case knows what the terminal is, which no
  // message rule can see when catLevel and operatingEnvironment agree with each other.
  const catLevel = target.attended ? CAT_LEVEL_BY_ATTENDANCE.attended : CAT_LEVEL_BY_ATTENDANCE.unattended;
  kept.forEach(({ p }, i) => {
    const sent = (p.body.pointOfSaleInformation as { catLevel?: unknown } | undefined)?.catLevel;
    if (sent === undefined) return;
    if (sentText(sent) !== catLevel)
      problems.push(
        messageProblem(
          i,
          p.service,
          'pointOfSaleInformation.catLevel',
          sent,
          `the ${target.attended ? 'attended' : 'unattended'} ${target.model} sends catLevel ${catLevel} (spec 001)`,
        ),
      );
  });
  // The entry mode of the case's card: the reader presented it one way (or, for a sequence, one of a few), which no
  // message rule can see when the tags, terminalCapability and entryMode agree with each other.
  const presentations = virtual?.outcome.kind === 'sequence' ? virtual.outcome.steps : [virtual?.outcome];
  const readModes = new Set(presentations.flatMap((p) => (p?.kind === 'read' ? [p.entryMode] : [])));
  if (readModes.size > 0)
    kept.forEach(({ p }, i) => {
      if (!isServiceName(p.service)) return;
      const sent = (p.body.pointOfSaleInformation as { entryMode?: unknown } | undefined)?.entryMode;
      if (sent === undefined || [...readModes].some((mode) => mode === sent)) return;
      problems.push(
        messageProblem(
          i,
          p.service,
          'pointOfSaleInformation.entryMode',
          sent,
          `the case's card ${target.card} is read by ${[...readModes].join(' or ')}`,
        ),
      );
    });
  // The terminal's identity as configured, which the report states and the acquirer matches the certification
  // against: no message rule knows it.
  const terminal = terminalIdentity(config);
  const identity: ReadonlyArray<readonly [string, string]> = [
    ['pointOfSaleInformation.terminalId', terminal.terminalId],
    ['clientReferenceInformation.partner.developerId', terminal.developerId],
    ['clientReferenceInformation.partner.solutionId', terminal.solutionId],
    [
      'clientReferenceInformation.partner.thirdPartyCertificationNumber',
      terminal.thirdPartyCertificationNumber,
    ],
  ];
  kept.forEach(({ p }, i) => {
    for (const [path, configured] of identity) {
      const sent = get(p.body, path);
      if (sent !== undefined && sent !== configured)
        problems.push(
          messageProblem(i, p.service, path, sent, `the terminal is configured with ${configured}`),
        );
    }
  });
  for (const m of messages.filter((m) => m.httpStatus !== null && m.httpStatus >= 400 && m.httpStatus < 500))
    if (!steps.some((s) => s.expected.some((e) => e.status === m.status)))
      problems.push(
        `message #${m.index} (${m.service}): the gateway refused it (HTTP ${m.httpStatus} ${m.status})`,
      );
  return finish({
    verdict: problems.length === 0 ? 'passed' : 'failed',
    steps,
    messages,
    findings,
    problems,
    currency,
    terminal,
    timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
  });
}
