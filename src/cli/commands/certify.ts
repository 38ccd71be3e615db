import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CertifyInputError, checkEvidenceSession } from '../../../certification/check.js';
import { writeReports } from '../../../certification/report/index.js';
import type { CaseResult } from '../../../certification/results.js';
import {
  loadPack,
  PackError,
  runPack,
  STOPPED_REASON,
  UnknownCaseError,
} from '../../../certification/runner/index.js';
import { maskCardData } from '../../../certification/runner/mask.js';
import { VIRTUAL_CARD_NAMES } from '../../../devices/sim/cards.js';
import { ConfigError, loadConfigFile, readConfigData, withoutByteOrderMark } from '../../config/index.js';
import { makeDirectory } from '../../config/durable-file.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type CliIo, type Command } from '../output.js';

/**
 * Where the shipped pack is, seen from this module: three folders up from the sources (src/cli/commands/), four from
 * the compiled module of `npm run build` (dist/src/cli/commands/), which compiles no YAML: the pack stays in the
 * checkout's certification/scripts/.
 */
export function shippedPackPath(moduleUrl: string | URL): string {
  const candidates = ['../../../', '../../../../'].map((up) =>
    fileURLToPath(new URL(`${up}certification/scripts/parking.yaml`, moduleUrl)),
  );
  return candidates.find((file) => existsSync(file)) ?? (candidates[0] as string);
}

/** The pack shipped with the terminal: every service of spec 001 and the gateway's MLV amounts. */
export const DEFAULT_PACK = shippedPackPath(import.meta.url);

/**
 * The largest session file `certify check` reads: a pack's capture of a few hundred messages is under a megabyte; a
 * larger file is refused before it is read rather than parsed into memory.
 */
export const MAX_SESSION_BYTES = 64 * 1024 * 1024;

/** `certify check FILE`: prints the session's findings; exit 1 when any is an error (DESIGN.md). */
function check(args: string[], io: CliIo): number {
  const { positionals } = parseCommandArgs(args, {});
  if (positionals.length !== 1) throw new UsageError('BAD_ARGUMENTS', 'certify check takes exactly one FILE');
  const file = resolve(io.cwd, positionals[0] ?? '');
  let textContent: string;
  try {
    // Looked at before it is opened: a pipe would block the command until a writer comes, a device never ends.
    const stat = statSync(file);
    if (!stat.isFile()) throw new UsageError('NOT_A_FILE', `${file} is not a regular file`);
    if (stat.size > MAX_SESSION_BYTES)
      throw new UsageError(
        'FILE_TOO_LARGE',
        `${file} is ${stat.size} bytes; a session file is at most ${MAX_SESSION_BYTES} bytes`,
      );
    textContent = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(
      'FILE_UNREADABLE',
      `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(withoutByteOrderMark(textContent));
  } catch (e) {
    throw new UsageError('BAD_JSON', `${file} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    const result = checkEvidenceSession(parsed);
    // Findings quote what a message sent: a card number in a field that should hold none is printed masked.
    printJson(io, maskCardData(result));
    return result.ok ? EXIT_OK : EXIT_FINDINGS;
  } catch (e) {
    if (e instanceof CertifyInputError)
      throw new UsageError(e.code, e.message, e.index !== undefined ? { index: e.index } : {});
    throw e;
  }
}

function reportUnwritable(dir: string, e: unknown, details: Record<string, unknown> = {}): UsageError {
  return new UsageError(
    'REPORT_UNWRITABLE',
    `cannot write the reports into ${dir}: ${e instanceof Error ? e.message : String(e)}`,
    details,
  );
}

/**
 * Makes the report directory (and its `cases/`) and checks it can be written, before a case runs: a pack played for
 * an hour against a test host is not to lose its results to a directory refused at the end.
 */
function prepareReportDirectory(dir: string): void {
  try {
    makeDirectory(join(dir, 'cases'));
    accessSync(dir, constants.W_OK);
    accessSync(join(dir, 'cases'), constants.W_OK);
  } catch (e) {
    throw reportUnwritable(dir, e);
  }
}

function progress(io: CliIo, c: CaseResult, position: number, total: number): void {
  const seconds = (c.durationMs / 1000).toFixed(1);
  const why =
    c.verdict === 'failed'
      ? ` — ${c.problems[0] ?? ''}${c.problems.length > 1 ? ` (+${c.problems.length - 1} more)` : ''}`
      : c.verdict === 'skipped'
        ? ` — ${c.skipReason ?? ''}`
        : '';
  io.stderr.write(`[${position}/${total}] ${c.id} ${c.verdict} ${seconds} s${why}\n`);
}

/** `certify run [PACK] [--gateway sandbox|URL] [--config FILE] [--report DIR] [--case ID]`. */
async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    gateway: { type: 'string' },
    config: { type: 'string' },
    report: { type: 'string' },
    case: { type: 'string', multiple: true },
  } as const);
  if (positionals.length > 1) throw new UsageError('BAD_ARGUMENTS', 'certify run takes at most one PACK');
  const packFile = positionals[0] !== undefined ? resolve(io.cwd, positionals[0]) : DEFAULT_PACK;
  const gateway = values.gateway ?? 'sandbox';
  if (gateway !== 'sandbox') {
    let url: URL;
    try {
      url = new URL(gateway);
    } catch {
      throw new UsageError('BAD_ARGUMENTS', '--gateway takes sandbox or an http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError('BAD_ARGUMENTS', '--gateway takes sandbox or an http(s) URL');
    // The URL is written in the report an acquirer is handed: a user name or password in it would be too. The
    // gateway's credentials are the configuration's (--config).
    if (url.username !== '' || url.password !== '')
      throw new UsageError(
        'BAD_ARGUMENTS',
        '--gateway takes a URL without a user name or password: the gateway credentials go in --config',
      );
  }
  let config: Record<string, unknown> | undefined;
  if (values.config !== undefined) {
    const file = resolve(io.cwd, values.config);
    try {
      // Validated whole, then used as written: the pack's and the cases' settings fill what the file leaves out.
      loadConfigFile(file);
      config = readConfigData(file).data as Record<string, unknown>;
    } catch (e) {
      if (e instanceof ConfigError)
        throw new UsageError(e.code, e.message, e.key !== undefined ? { key: e.key } : {});
      throw e;
    }
  }
  // `multiple` gives an array; parseCommandArgs types every string option as one string.
  const given = values.case as unknown as string[] | undefined;
  const caseIds = (given ?? []).flatMap((v) => v.split(',')).filter((v) => v !== '');
  // `--case ""` names no case: it is not the whole pack, which the analyst did not ask for.
  if (given !== undefined && caseIds.length === 0)
    throw new UsageError('BAD_ARGUMENTS', '--case takes a case id (repeatable, or comma-separated)');
  let pack;
  try {
    pack = loadPack(packFile, { cards: VIRTUAL_CARD_NAMES });
  } catch (e) {
    if (e instanceof PackError) throw new UsageError(e.code, e.message, { where: e.where });
    throw e;
  }
  const reportDir = values.report !== undefined ? resolve(io.cwd, values.report) : undefined;
  if (reportDir !== undefined) prepareReportDirectory(reportDir);
  let report;
  try {
    report = await runPack({
      pack,
      packFile,
      gateway,
      ...(config ? { config } : {}),
      caseIds,
      cwd: io.cwd,
      signal: io.signal,
      onCaseEnd: (c, position, total) => progress(io, c, position, total),
    });
  } catch (e) {
    if (e instanceof UnknownCaseError) throw new UsageError(e.code, e.message);
    throw e;
  }
  let written: Awaited<ReturnType<typeof writeReports>> | undefined;
  if (reportDir !== undefined) {
    try {
      written = await writeReports(report, reportDir);
    } catch (e) {
      // The run's results are not lost with its reports: the error carries what the run found.
      throw reportUnwritable(reportDir, e, {
        outcome: report.outcome,
        summary: report.summary,
        failed: report.cases
          .filter((c) => c.verdict === 'failed')
          .map((c) => ({ id: c.id, problems: c.problems })),
      });
    }
  }
  // A run whose every case was skipped checked nothing: its ok would read as a pass. The reports are written (they
  // say why each case was skipped), the run is refused.
  const skipped = report.cases
    .filter((c) => c.verdict === 'skipped')
    .map((c) => ({ id: c.id, reason: c.skipReason }));
  const reportDetails = reportDir !== undefined ? { report: { dir: reportDir } } : {};
  // A stopped run did not play the whole pack: whatever its cases so far, it is no pass.
  if (report.stopped)
    throw new UsageError(
      'RUN_STOPPED',
      `the run was stopped: ${skipped.filter((c) => c.reason === STOPPED_REASON).length} of its ${report.summary.cases} cases were not run`,
      {
        summary: report.summary,
        failed: report.cases.filter((c) => c.verdict === 'failed').map((c) => c.id),
        ...reportDetails,
      },
    );
  const outcome = report.outcome;
  if (outcome === 'nothing checked')
    throw new UsageError(
      'NOTHING_CHECKED',
      `no case of ${report.pack.file} was run: ${report.summary.skipped} skipped, none passed or failed`,
      { skipped, ...reportDetails },
    );
  printJson(io, {
    ok: outcome === 'passed',
    pack: report.pack,
    gateway: report.gateway,
    summary: report.summary,
    failed: report.cases
      .filter((c) => c.verdict === 'failed')
      .map((c) => ({ id: c.id, title: c.title, problems: c.problems })),
    skipped,
    ...(written && reportDir !== undefined
      ? {
          report: {
            dir: reportDir,
            files: written.files.length,
            pdf: written.pdf.written ? written.pdf.file : `not written: ${written.pdf.reason}`,
          },
        }
      : {}),
  });
  return outcome === 'passed' ? EXIT_OK : EXIT_FINDINGS;
}

const command: Command = {
  name: 'certify',
  summary: 'certification: run the script pack through the real terminal, or validate captured messages',
  usage: `parking-terminal certify check FILE
  FILE is a JSON array, one session in order, of {"method", "path", "body", "response"?}, or a capture file that
  certify run wrote (cases/ID.capture.json); prints
  {"ok", "messages": [{"index", "service", "findings": [{"rule", "category", "severity", "field", "message"}]}]};
  exit 0 when no finding is an error, 1 when any is, 2 on bad input with {"error": {"code", "message"}}
  (FILE is a regular file of at most 64 MiB: NOT_A_FILE, FILE_TOO_LARGE, FILE_UNREADABLE, BAD_JSON, or the
  session's own codes; a session in which nothing was checked is refused: SESSION_EMPTY without messages,
  SESSION_NOT_JUDGED when no message is of a service the rules judge)

parking-terminal certify run [PACK] [--gateway sandbox|URL] [--config FILE] [--report DIR] [--case ID]...
  Plays every case of PACK (default: the shipped certification/scripts/parking.yaml) through the real terminal:
  the parking machine of the case's model, the simulated reader with the case's card, a fresh journal and the
  gateway client. Every request and answer is recorded (card data masked), each message is validated with the
  rules of certify check and each step's messages are compared with the statuses the case expects.
  --gateway sandbox   a fresh embedded sandbox per case (default); faults are injected through it; a timeout
                      reversal follows its original after 0.5 s unless --config sets journal.timeoutReversalDelayMs
  --gateway URL       a test host; cases that need injected faults are skipped unless it answers /__sandbox/faults;
                      the configuration's journal.timeoutReversalDelayMs applies (default 60 s), and the run waits
  --config FILE       the terminal's configuration (identity, partner ids, gateway credentials for a URL)
  --report DIR        writes report.json, junit.xml, report.html (and report.pdf where a browser is available)
                      and one evidence bundle per case (cases/ID.json, cases/ID.capture.json); they state the
                      timeout reversal delay the terminals used
  --case ID           only this case (repeatable, or comma-separated); its parent cases run first inside it
  A progress line per case goes to stderr; stdout gets {"ok", "pack", "gateway", "summary", "failed", "skipped"}.
  Exit 0 when every case passed or was skipped with a reason, 1 when any failed, 2 on a bad pack or usage, or
  when every case was skipped (NOTHING_CHECKED: the reports are written, nothing was checked).
  SIGINT or SIGTERM stops the run after the case being played: the cases after it are reported as skipped, the
  reports are written and the run ends with RUN_STOPPED, exit 2.`,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub === 'check') return Promise.resolve(check(rest, io));
    if (sub === 'run') return run(rest, io);
    throw new UsageError('BAD_ARGUMENTS', 'usage: certify check FILE | certify run [PACK] [options]');
  },
};
export default command;
