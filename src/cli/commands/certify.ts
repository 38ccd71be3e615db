import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CertifyInputError, checkSession } from '../../../certification/check.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type CliIo, type Command } from '../output.js';

/** `certify check FILE`: prints the session's findings; exit 1 when any is an error (DESIGN.md). */
function check(args: string[], io: CliIo): number {
  const { positionals } = parseCommandArgs(args, {});
  if (positionals.length !== 1) throw new UsageError('BAD_ARGUMENTS', 'certify check takes exactly one FILE');
  const file = resolve(io.cwd, positionals[0] ?? '');
  let textContent: string;
  try {
    textContent = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(
      'FILE_UNREADABLE',
      `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(textContent);
  } catch (e) {
    throw new UsageError('BAD_JSON', `${file} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    const result = checkSession(parsed);
    printJson(io, result);
    return result.ok ? EXIT_OK : EXIT_FINDINGS;
  } catch (e) {
    if (e instanceof CertifyInputError)
      throw new UsageError(e.code, e.message, e.index !== undefined ? { index: e.index } : {});
    throw e;
  }
}

const command: Command = {
  name: 'certify',
  summary: 'message-level validation of captured gateway messages',
  usage: `parking-terminal certify check FILE
  FILE is a JSON array, one session in order, of {"method", "path", "body", "response"?}; prints
  {"ok", "messages": [{"index", "service", "findings": [{"rule", "category", "severity", "field", "message"}]}]};
  exit 0 when no finding is an error, 1 when any is, 2 on bad input with {"error": {"code", "message"}}`,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub === 'check') return Promise.resolve(check(rest, io));
    throw new UsageError('BAD_ARGUMENTS', 'usage: certify check FILE');
  },
};
export default command;
