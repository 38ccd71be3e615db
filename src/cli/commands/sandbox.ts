import { resolve } from 'node:path';
import { createLogger } from '../../log/index.js';
import { startSandbox } from '../../sandbox/index.js';
import { parseCommandArgs, parsePort } from '../args.js';
import { EXIT_OK, UsageError, type Command } from '../output.js';

/** Fixed default port of the standalone sandbox, so that a terminal configured for it finds it again. */
export const DEFAULT_SANDBOX_PORT = 8089;

const command: Command = {
  name: 'sandbox',
  summary: 'run the gateway sandbox alone; the first stdout line is its base URL',
  usage: `parking-terminal sandbox [--port N] [--host H] [--data FILE] [--tls] [--cutoff HH:MM] [--webhook URL] [--late-ms N]
  --port N        TCP port (default ${DEFAULT_SANDBOX_PORT}; 0 picks a free one)
  --host H        interface (default 127.0.0.1)
  --data FILE     durable ledger in SQLite (in memory without it)
  --tls           HTTPS with a self-signed certificate made at start
  --cutoff HH:MM  settlement cut-off for voids, local time (default end of day)
  --webhook URL   where payment-link payments are notified (signed)
  --late-ms N     how long the late-response trigger holds an answer (default 35000)
Serves until SIGINT or SIGTERM. Admin endpoints: /__sandbox/ledger, /__sandbox/clock, /__sandbox/faults, /__sandbox/reset.`,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        port: { type: 'string' },
        host: { type: 'string' },
        data: { type: 'string' },
        tls: { type: 'boolean' },
        cutoff: { type: 'string' },
        webhook: { type: 'string' },
        'late-ms': { type: 'string' },
      },
      false,
    );
    const port = parsePort(values.port, '--port') ?? DEFAULT_SANDBOX_PORT;
    const cutoff = values.cutoff;
    if (cutoff !== undefined && !/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/.test(cutoff))
      throw new UsageError('BAD_ARGUMENTS', '--cutoff must be HH:MM');
    const lateText = values['late-ms'];
    const lateResponseMs = lateText === undefined ? undefined : Number(lateText);
    if (lateResponseMs !== undefined && (!Number.isSafeInteger(lateResponseMs) || lateResponseMs < 0))
      throw new UsageError('BAD_ARGUMENTS', '--late-ms must be a non-negative integer');
    if (values.webhook !== undefined && !URL.canParse(values.webhook))
      throw new UsageError('BAD_ARGUMENTS', '--webhook must be a URL');
    const sandbox = await startSandbox({
      port,
      ...(values.host !== undefined ? { host: values.host } : {}),
      ...(values.data !== undefined ? { dataFile: resolve(io.cwd, values.data) } : {}),
      ...(values.tls ? { tls: true } : {}),
      ...(cutoff !== undefined ? { settlementCutoff: cutoff } : {}),
      ...(values.webhook !== undefined ? { webhookUrl: values.webhook } : {}),
      ...(lateResponseMs !== undefined ? { lateResponseMs } : {}),
      logger: createLogger({ name: 'sandbox', destination: io.stderr }),
    });
    io.stdout.write(`${sandbox.url}\n`);
    await new Promise<void>((done) => {
      if (io.signal.aborted) done();
      else io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await sandbox.close();
    return EXIT_OK;
  },
};
export default command;
