import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A server in a child process of this Node (the sandbox, or a peer), as the gateway is another machine. */
export interface ServerProcess {
  url: string;
  /** CPU time (user + system) of the process so far, in microseconds; undefined without /proc. */
  cpuMicros(): number | undefined;
  close(): Promise<void>;
}

/**
 * CPU time (user + system) of another process, from Linux's /proc (clock ticks of 10 ms, USER_HZ 100); undefined
 * elsewhere. Enough, summed over batches, to show how much of each request the server itself costs.
 */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), counted after the command name: utime and stime.
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** Starts `args` under this Node and waits for the base URL it prints on its first stdout line. */
export async function serverProcess(args: string[]): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const kill = (): void => {
    child.kill('SIGTERM');
  };
  process.once('exit', kill);
  const stdout = child.stdout;
  if (!stdout) throw new Error('no stdout from the server process');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start within 20 s')), 20_000);
    let text = '';
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => {
      text += chunk;
      const line = /^(https?:\/\/\S+)\n/.exec(text)?.[1];
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${String(code)}) before printing its URL`));
    });
  });
  stdout.resume();
  return {
    url,
    cpuMicros: () => processCpuMicros(child.pid),
    close: async () => {
      process.removeListener('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      kill();
      await exited;
    },
  };
}

/**
 * The `parking-terminal` command's script: `bin/` beside `bench/` in a checkout run from the sources, two levels up
 * when this module is the compiled `dist/bench/`.
 */
export function commandPath(): string {
  for (const relative of ['../bin/parking-terminal.js', '../../bin/parking-terminal.js']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('bin/parking-terminal.js is not beside bench/ nor above dist/bench/');
}

/** `parking-terminal sandbox --port 0` in its own process. */
export function sandboxProcess(): Promise<ServerProcess> {
  return serverProcess([commandPath(), 'sandbox', '--port', '0']);
}

/**
 * A server in its own process that answers every request with a canned gateway answer (a 201 AUTHORIZED of the shape
 * the gateway gives a card-present authorization) after reading the whole body: it does no work per request beyond
 * HTTP, so a client driving it is limited by itself, not by a borrowed limit (the sandbox's verification and ledger).
 */
export function cannedGatewayProcess(): Promise<ServerProcess> {
  return serverProcess(['-e', CANNED_GATEWAY]);
}

const CANNED_GATEWAY = `
const { createServer } = require('node:http');
const canned = Buffer.from(JSON.stringify({
  _links: { self: { href: '/pts/v2/payments/7000000000000000000001', method: 'GET' } },
  id: '7000000000000000000001',
  submitTimeUtc: '2026-01-01T12:00:00Z',
  status: 'AUTHORIZED',
  reconciliationId: '7000000000000000000001',
  clientReferenceInformation: { code: 'BENCH-1' },
  orderInformation: { amountDetails: { authorizedAmount: '12.50', currency: 'GBP' } },
  processorInformation: { approvalCode: '831000', responseCode: '00', transactionId: '558196000003814' },
  pointOfSaleInformation: { emv: { tags: '910AF0D7A5E8C8B1E6C30012' } },
}));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/hal+json', 'content-length': canned.length });
    res.end(canned);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;
