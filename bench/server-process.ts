import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/** `parking-terminal sandbox --port 0` in its own process. */
export function sandboxProcess(): Promise<ServerProcess> {
  return serverProcess([
    fileURLToPath(new URL('../bin/parking-terminal.js', import.meta.url)),
    'sandbox',
    '--port',
    '0',
  ]);
}
