import { ConfigError } from '../config/index.js';
import { COMMANDS } from './commands/index.js';
import { EXIT_USAGE, printError, UsageError, type CliIo } from './output.js';

const HELP = `parking-terminal — card-present payment terminal for parking

Usage: parking-terminal <command> [options]   (parking-terminal <command> --help for details)

Diagnostic commands print one JSON document on stdout and exit 0 on success, 1 when a check finds
errors, 2 on bad input or usage ({"error": {"code", "message"}}).
`;

async function help(io: CliIo): Promise<void> {
  const lines: string[] = [HELP, 'Commands:'];
  for (const load of Object.values(COMMANDS)) {
    const { default: cmd } = await load();
    lines.push(`  ${cmd.name.padEnd(10)} ${cmd.summary}`);
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** Runs the command line `args` (without node and script) and returns the exit code. */
export async function main(args: string[], ioOverride?: Partial<CliIo>): Promise<number> {
  const controller = new AbortController();
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
    cwd: process.cwd(),
    ...ioOverride,
  };
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await help(io);
    return name ? 0 : EXIT_USAGE;
  }
  const load = COMMANDS[name];
  if (!load) {
    printError(io, 'UNKNOWN_COMMAND', `unknown command "${name}"; see parking-terminal --help`);
    return EXIT_USAGE;
  }
  const { default: cmd } = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${cmd.usage}\n`);
    return 0;
  }
  if (!ioOverride?.signal) {
    const stop = (): void => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    return await cmd.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      printError(io, e.code, e.message, e.details);
      return EXIT_USAGE;
    }
    if (e instanceof ConfigError) {
      printError(io, e.code, e.message, { file: e.file, ...(e.key !== undefined ? { key: e.key } : {}) });
      return EXIT_USAGE;
    }
    const err = e as { code?: unknown; message?: unknown };
    printError(io, typeof err.code === 'string' ? err.code : 'INTERNAL', String(err.message ?? e));
    return EXIT_USAGE;
  }
}
