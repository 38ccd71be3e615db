import { constants } from 'node:os';
import { ConfigError } from '../config/index.js';
import { SecretFileError } from '../config/secret-file.js';
import { GatewayAuthError } from '../gateway/errors.js';
import { appVersion } from '../host/app-version.js';
import { losingLinesWhenBroken } from '../log/index.js';
import { COMMANDS } from './commands/index.js';
import {
  EXIT_FINDINGS,
  EXIT_USAGE,
  outputTaken,
  printError,
  UsageError,
  type CliIo,
  type ProcessBoundary,
} from './output.js';

const HELP = `parking-terminal — card-present payment terminal for parking

Usage: parking-terminal <command> [options]   (parking-terminal <command> --help for details)
       parking-terminal --version

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

/** The boundary of the real process: handlers on `process`, removed again by the function returned. */
const processBoundary: ProcessBoundary = {
  onUnexpectedError(handler) {
    const onRejection = (reason: unknown): void => handler(reason, 'unhandledRejection');
    const onException = (error: Error): void => handler(error, 'uncaughtException');
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
    return () => {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    };
  },
};

/**
 * SIGINT/SIGTERM: the first asks the command to stop (its `io.signal` aborts; `start` then closes the terminal,
 * finishing or journaling what is in flight); a second one, while it is stopping, forces the exit with the shell's
 * code for the signal (128 + its number). Returns the function that removes the handlers, after which a signal has
 * Node's default effect again (the process ends) instead of being swallowed.
 */
function handleStopSignals(controller: AbortController, io: CliIo): () => void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    received += 1;
    if (received === 1) {
      io.stderr.write(`${signal}: stopping (send it again to force the exit)\n`);
      controller.abort();
      return;
    }
    io.stderr.write(`${signal} again: exiting without waiting\n`);
    process.exit(128 + constants.signals[signal]);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/**
 * Prints the error document of `e` and returns the exit code: 2 for bad input, usage or configuration (DESIGN.md),
 * `unexpected` for any other error. A command that is the process (`start`) passes 1 there: its exit 2 means "the
 * same at every start" and the kiosk service does not restart it (`RestartPreventExitStatus=2`), while a start that
 * failed on something that may pass (a port still held, a journal still locked) must be started again.
 */
function reportError(io: CliIo, e: unknown, unexpected: number): number {
  if (e instanceof UsageError) {
    printError(io, e.code, e.message, e.details);
    return EXIT_USAGE;
  }
  if (e instanceof ConfigError) {
    printError(io, e.code, e.message, { file: e.file, ...(e.key !== undefined ? { key: e.key } : {}) });
    return EXIT_USAGE;
  }
  if (e instanceof SecretFileError) {
    printError(io, e.code, e.message, { key: e.key, file: e.file });
    return EXIT_USAGE;
  }
  const err = e as { code?: unknown; message?: unknown };
  printError(io, typeof err.code === 'string' ? err.code : 'INTERNAL', String(err.message ?? e));
  // A gateway credential the terminal cannot use (a secret file whose text is no secret) is configuration as well.
  return e instanceof GatewayAuthError ? EXIT_USAGE : unexpected;
}

/**
 * Runs the command line `args` (without node and script) and returns the exit code. Without `ioOverride` the command
 * runs as the process itself (bin/parking-terminal.js): it gets {@link CliIo.process}, and a command that
 * `endsProcess` ends the process with its code.
 */
export async function main(args: string[], ioOverride?: Partial<CliIo>): Promise<number> {
  const controller = new AbortController();
  const ownsProcess = ioOverride === undefined;
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
    cwd: process.cwd(),
    ...(ownsProcess ? { process: processBoundary } : {}),
    ...ioOverride,
  };
  if (ownsProcess) losingLinesWhenBroken(process.stdout, process.stderr);
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await help(io);
    return name ? 0 : EXIT_USAGE;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout.write(`parking-terminal ${appVersion()}\n`);
    return 0;
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
  const removeSignalHandlers = ioOverride?.signal ? undefined : handleStopSignals(controller, io);
  let code: number;
  try {
    code = await cmd.run(rest, io);
  } catch (e) {
    code = reportError(io, e, cmd.endsProcess ? EXIT_FINDINGS : EXIT_USAGE);
  } finally {
    removeSignalHandlers?.();
  }
  if (ownsProcess && cmd.endsProcess) {
    // Whatever a library left open (a listening socket of a half-built terminal, a reconnect timer) must not keep a
    // stopped or failed terminal alive: the process ends once stdout has taken the last line, or could not.
    await outputTaken(io.stdout);
    process.exit(code);
  }
  return code;
}
