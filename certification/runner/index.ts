/**
 * `certify run`: every case of a pack (or the ones asked for) through the real terminal, one fresh terminal and — on
 * the embedded sandbox — one fresh gateway per case, results gathered into one {@link RunReport}.
 */
import { readFileSync } from 'node:fs';
import { silentLogger, type Logger } from '../../src/log/index.js';
import { parseConfig } from '../../src/config/index.js';
import { runOutcome, tallyRun, type CaseResult, type RunReport, type TerminalIdentity } from '../results.js';
import { caseChain } from '../pack/load.js';
import type { Pack } from '../pack/schema.js';
import { embeddedHost, remoteHost, type TestHost } from './gateway-host.js';
import { mergeConfig } from '../pack/merge.js';
import { notRunCase, runCase, terminalIdentity } from './run-case.js';

export { caseChain, loadPack, PackError } from '../pack/load.js';

export interface RunPackOptions {
  pack: Pack;
  packFile: string;
  /** `sandbox` (embedded, default) or a test host's base URL. */
  gateway: string;
  /** The analyst's configuration (`--config`): terminal identity, gateway credentials; absent: the defaults. */
  config?: Record<string, unknown>;
  /** Only these cases (their parents run first inside each case, as always). */
  caseIds?: readonly string[];
  logger?: Logger;
  /** Relative paths of the configuration (key and credential files) resolve against it. */
  cwd?: string;
  /**
   * Stops the run (SIGINT, SIGTERM): the case being played is finished — its terminal owes the gateway nothing when it
   * ends — and the cases after it are not run, each reported as skipped with {@link STOPPED_REASON}.
   */
  signal?: AbortSignal;
  /** Called as each case starts and ends (progress lines). */
  onCaseStart?: (id: string, position: number, total: number) => void;
  onCaseEnd?: (result: CaseResult, position: number, total: number) => void;
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Why a case of a stopped run was not run. */
export const STOPPED_REASON = 'the run was stopped before this case';

/** Thrown for `--case` ids the pack does not have. */
export class UnknownCaseError extends Error {
  override readonly name = 'UnknownCaseError';
  readonly code = 'UNKNOWN_CASE';
}

const IDENTITY_FIELDS = [
  'terminalId',
  'merchantId',
  'country',
  'currency',
  'developerId',
  'solutionId',
  'thirdPartyCertificationNumber',
] as const satisfies ReadonlyArray<keyof TerminalIdentity>;

/**
 * The identity the run's terminals used: each field as the cases run had it, their values comma-separated in case
 * order where cases differed; when no case configured a terminal (every case skipped), the run's configuration's.
 */
function runIdentity(cases: readonly CaseResult[], baseConfig: Record<string, unknown>): TerminalIdentity {
  let used = cases.flatMap((c) => (c.terminal !== undefined ? [c.terminal] : []));
  if (used.length === 0) {
    try {
      used = [terminalIdentity(parseConfig(baseConfig))];
    } catch (e) {
      const invalid = `not known: the configuration is invalid (${(e as Error).message})`;
      used = [Object.fromEntries(IDENTITY_FIELDS.map((k) => [k, invalid])) as unknown as TerminalIdentity];
    }
  }
  return Object.fromEntries(
    IDENTITY_FIELDS.map((k) => [k, [...new Set(used.map((u) => u[k]))].join(', ')]),
  ) as unknown as TerminalIdentity;
}

export async function runPack(options: RunPackOptions): Promise<RunReport> {
  const { pack } = options;
  const logger = options.logger ?? silentLogger();
  // A case named twice (`--case A,A`) is run once: the report counts cases, not how often one was asked for.
  const ids = options.caseIds?.length ? [...new Set(options.caseIds)] : pack.cases.map((c) => c.id);
  const unknown = ids.filter((id) => !pack.cases.some((c) => c.id === id));
  if (unknown.length) throw new UnknownCaseError(`no case ${unknown.join(', ')} in ${options.packFile}`);
  const started = new Date();
  const embedded = options.gateway === 'sandbox';
  const shared: TestHost | undefined = embedded ? undefined : await remoteHost(options.gateway);
  const baseConfig = mergeConfig(pack.config, options.config);
  const gatewayKind = (options.config?.gateway as { kind?: unknown } | undefined)?.kind;
  const remote = !embedded && gatewayKind === 'remote';
  const cases: CaseResult[] = [];
  for (const [i, id] of ids.entries()) {
    options.onCaseStart?.(id, i + 1, ids.length);
    if (options.signal?.aborted) {
      const result = notRunCase(caseChain(pack, id), STOPPED_REASON);
      cases.push(result);
      options.onCaseEnd?.(result, i + 1, ids.length);
      continue;
    }
    const host = shared ?? (await embeddedHost(logger.child({ component: 'sandbox' })));
    try {
      const result = await runCase(caseChain(pack, id), host, {
        baseConfig,
        remote,
        logger,
        cwd: options.cwd ?? process.cwd(),
      });
      cases.push(result);
      options.onCaseEnd?.(result, i + 1, ids.length);
    } finally {
      if (!shared) await host.close();
    }
  }
  const finished = new Date();
  const summary = tallyRun({ cases });
  const stopped = cases.some((c) => c.skipReason === STOPPED_REASON);
  const credentials = remote ? 'configuration' : 'sandbox';
  return {
    tool: { name: 'parking-terminal certify', version: version() },
    pack: { name: pack.pack, title: pack.title, file: options.packFile, version: pack.version },
    gateway: embedded
      ? { kind: 'sandbox', url: 'embedded sandbox', credentials }
      : { kind: 'url', url: shared?.url ?? options.gateway, credentials },
    terminal: runIdentity(cases, baseConfig),
    timeoutReversalDelayMs: [
      ...new Set(
        cases.flatMap((c) => (c.timeoutReversalDelayMs !== undefined ? [c.timeoutReversalDelayMs] : [])),
      ),
    ],
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    summary,
    stopped,
    outcome: runOutcome(summary, stopped),
    cases,
  };
}
