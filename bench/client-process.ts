import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * One HTTP client of `gateway.authorize` and `gateway.throughput` in a process of its own, as a terminal runs its one
 * client: the clients compared do not share a heap, a garbage collector or a JIT, and each process's CPU time is its
 * client's alone.
 *
 * The parent forks bench/client-child.ts with the client's kind and the server's URL. Over the IPC channel it sends
 * `{ requests: n, concurrency: c }`; the child makes n requests, c at a time, and answers `{ seconds, cpuMicros }`.
 * `{ close: true }` ends the child. A failure is answered `{ error }`, and the child exits.
 */

/**
 * Which client the process runs: ours, the official SDK at its cheapest setting (`peer`) or with its default settings
 * (`peer-default`), or the raw-socket exchange.
 */
export type ClientKind = 'ours' | 'peer' | 'peer-default' | 'bare';

export interface RoundTime {
  seconds: number;
  cpuMicros: number;
}

export interface ClientProcess {
  /** Makes `requests` requests in the child, `concurrency` at a time; its wall time and the child's CPU time then. */
  round(requests: number, concurrency: number): Promise<RoundTime>;
  close(): Promise<void>;
}

/** What the child process (bench/client-child.ts) sends over the IPC channel. */
export type FromChild = { ready: true } | RoundTime | { error: string };

/** Starts the client `kind` against `url` in its own process; resolves once it is connected and ready. */
export async function clientProcess(kind: ClientKind, url: string): Promise<ClientProcess> {
  const fromSources = import.meta.url.endsWith('.ts');
  const script = fileURLToPath(
    new URL(fromSources ? './client-child.ts' : './client-child.js', import.meta.url),
  );
  const child: ChildProcess = fork(script, [kind, url], {
    execArgv: fromSources ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const kill = (): void => {
    child.kill('SIGTERM');
  };
  process.once('exit', kill);
  const next = (): Promise<FromChild> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: FromChild): void => {
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null): void => {
        child.off('message', onMessage);
        reject(new Error(`the ${kind} client process exited (${String(code)})`));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
    });
  const expect = async <T>(what: (m: FromChild) => m is FromChild & T): Promise<T> => {
    const m = await next();
    if ('error' in m) throw new Error(`the ${kind} client: ${m.error}`);
    if (!what(m)) throw new Error(`the ${kind} client answered ${JSON.stringify(m)}`);
    return m;
  };
  try {
    await expect((m): m is { ready: true } => 'ready' in m);
  } catch (e) {
    process.removeListener('exit', kill);
    kill();
    throw e;
  }
  return {
    round: async (requests, concurrency) => {
      child.send({ requests, concurrency });
      return expect((m): m is RoundTime => 'seconds' in m);
    },
    close: async () => {
      process.removeListener('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ close: true });
      await exited;
    },
  };
}
