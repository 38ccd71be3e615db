import { createServer } from 'node:net';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { main } from '../../src/cli/main.js';
import type { ProcessBoundary } from '../../src/cli/output.js';
import { openJournal } from '../../src/journal/index.js';
import type { CustomerSnapshot, OperatorStatus, WsMessage } from '../../src/host/api.js';
import { closedPort, leaveSaleInFlight } from './down-gateway.js';
import {
  bridgeRequest,
  printed as printedWithin,
  screenOf,
  startCommand,
  type StartRun,
  startTestDirectories,
} from './start-command.js';

/**
 * Issue 11, bug 7: `parking-terminal start` as a process. A configuration it cannot use ends it with exit 2 and an
 * error naming the key, with nothing left running (before the fix it printed the error and kept the embedded
 * sandbox serving, and swallowed SIGTERM); SIGTERM stops a running terminal with exit 0 and nothing in flight in
 * its journal.
 */

/**
 * How long a process may take to exit before the test calls it hung. It bounds a hang, it measures no speed: it
 * covers loading the TypeScript sources on a busy machine, and a terminal that never exits fails instead of
 * blocking the suite.
 */
const HANG_MS = 60_000;

let dir: string;
const children = startTestDirectories('pt-start-failures-', (d) => (dir = d));

type Run = StartRun;

function writeConfig(config: unknown): string {
  const file = join(dir, 'terminal.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** The journal and the keys in the test's directory, whatever else the configuration says. */
function baseConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    journal: { path: join(dir, 'var', 'journal.db') },
    offline: { keyFile: join(dir, 'var', 'offline.key') },
    // The screen's URL with its secret: standard output (a pipe) carries it without.
    bridge: { urlFile: join(dir, 'ui-url') },
    // The operator PIN generated for the start, which standard output (a pipe) does not carry either.
    terminal: { generatedPinFile: join(dir, 'operator-pin') },
    ...extra,
  };
}

/** Waits, bounded by {@link HANG_MS}, until `run` printed a line matching `re`. */
const printed = (run: Run, re: RegExp): Promise<RegExpExecArray> => printedWithin(run, re, HANG_MS);

/** The screen's port and secret (bridge.urlFile of {@link baseConfig}) once `run` printed a line matching `re`. */
const screen = (run: Run, re: RegExp): Promise<{ port: string; secret: string }> =>
  screenOf(run, re, join(dir, 'ui-url'), HANG_MS);

/** One request over the bridge's WebSocket, answered by its value; a refusal fails the test. */
async function ask(port: string, secret: string, request: Record<string, unknown>): Promise<unknown> {
  const result = await bridgeRequest(port, secret, request);
  if (!result.ok) throw new Error(`request refused: ${JSON.stringify(result)}`);
  return result.value;
}

function start(configFile: string, port = '0'): Run {
  const run = startCommand(dir, configFile, { port });
  children.push(run.child);
  return run;
}

/** The exit of `run`, or a failure naming what it printed when it has not exited after {@link HANG_MS}. */
async function exitOf(run: Run): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, fail) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      fail(new Error(`still running: stdout ${run.lines.join('\n')}\nstderr ${run.stderr()}`));
    }, HANG_MS);
  });
  try {
    return await Promise.race([run.exited, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error document a failed start prints on stdout. */
function errorDocument(run: Run): { code: string; message: string; key?: string; file?: string } {
  const doc = JSON.parse(run.lines.join('\n')) as {
    error: { code: string; message: string; key?: string; file?: string };
  };
  return doc.error;
}

describe('parking-terminal start with a configuration it cannot use', () => {
  it('exits 2 naming gateway.auth.sharedSecretFile when the embedded sandbox secret file is missing', async () => {
    const missing = join(dir, 'shared.secret');
    const run = start(
      writeConfig(baseConfig({ gateway: { kind: 'sandbox', auth: { sharedSecretFile: missing } } })),
    );
    expect(await exitOf(run)).toEqual({ code: 2, signal: null });
    expect(errorDocument(run)).toMatchObject({
      code: 'SECRET_FILE_UNREADABLE',
      key: 'gateway.auth.sharedSecretFile',
      file: missing,
    });
  }, 120_000);

  it('exits 2 naming terminal.operatorPinFile when the PIN file is missing', async () => {
    const missing = join(dir, 'operator.pin');
    const run = start(writeConfig(baseConfig({ terminal: { operatorPinFile: missing } })));
    expect(await exitOf(run)).toEqual({ code: 2, signal: null });
    expect(errorDocument(run)).toMatchObject({
      code: 'SECRET_FILE_UNREADABLE',
      key: 'terminal.operatorPinFile',
      file: missing,
    });
  }, 120_000);

  it('exits 2 with nothing left running when the terminal fails after its embedded sandbox started', async () => {
    // The file passes the secret-file checks but holds no base64 secret: the authenticator refuses it while the
    // terminal is being built, after the embedded sandbox is listening.
    const secretFile = join(dir, 'shared.secret');
    writeFileSync(secretFile, 'not base64 at all!\n', { mode: 0o600 });
    const run = start(
      writeConfig(baseConfig({ gateway: { kind: 'sandbox', auth: { sharedSecretFile: secretFile } } })),
    );
    expect(await exitOf(run)).toEqual({ code: 2, signal: null });
    expect(errorDocument(run).message).toContain('sharedSecretFile');
  }, 120_000);

  it.runIf(process.platform !== 'win32')(
    'exits 2 naming terminal.operatorPinFile when the PIN file is readable by group or others',
    async () => {
      const pinFile = join(dir, 'operator.pin');
      writeFileSync(pinFile, '2468\n');
      chmodSync(pinFile, 0o644);
      const run = start(writeConfig(baseConfig({ terminal: { operatorPinFile: pinFile } })));
      expect(await exitOf(run)).toEqual({ code: 2, signal: null });
      const error = errorDocument(run);
      expect(error).toMatchObject({
        code: 'SECRET_FILE_EXPOSED',
        key: 'terminal.operatorPinFile',
        file: pinFile,
      });
      expect(error.message).toContain('terminal.operatorPinFile');
    },
    120_000,
  );
});

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  return (await res.json()) as T;
}

describe('parking-terminal start failing for a reason other than its configuration', () => {
  // Exit 2 is the service's "do not restart" (RestartPreventExitStatus=2 in deploy/systemd/parking-terminal.service):
  // a start that fails on something that may pass by itself (here the UI port held by another process) exits 1, which
  // the service manager restarts.
  it('exits 1 when the UI port is taken, so that the kiosk service starts it again', async () => {
    const holder = createServer();
    await new Promise<void>((listening) => holder.listen(0, '127.0.0.1', listening));
    try {
      const { port } = holder.address() as { port: number };
      const run = start(writeConfig(baseConfig()), String(port));
      expect(await exitOf(run)).toEqual({ code: 1, signal: null });
      expect(errorDocument(run).code).toBe('BRIDGE_LISTEN');
    } finally {
      await new Promise<void>((closed) => holder.close(() => closed()));
    }
  }, 120_000);
});

describe('parking-terminal start stopped by SIGTERM', () => {
  it('exits 0 with nothing in flight in its journal, even with a payment waiting for its answer', async () => {
    const configFile = writeConfig(
      baseConfig({
        terminal: { model: 'attended' },
        reader: { sim: { presentDelayMs: 0 } },
        // The payment's answer is held by the sandbox (late-response fault below): the client gives up after a
        // second, the outcome is unknown and the timeout reversal is due at once.
        gateway: { timeouts: { headersMs: 1_000, bodyMs: 1_000 } },
        journal: {
          path: join(dir, 'var', 'journal.db'),
          timeoutReversalDelayMs: 0,
          resolutionRetryMs: 100,
        },
      }),
    );
    const run = start(configFile);
    const { port, secret } = await screen(run, / ready: /);
    const [, sandboxUrl] = await printed(run, /^Sandbox gateway: (http:\/\/127\.0\.0\.1:\d+)/);
    await json(`${sandboxUrl}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ faults: [{ kind: 'late-response', path: '/pts/v2/payments', method: 'POST' }] }),
    });

    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?s=${secret}`, {
      headers: { Origin: `http://127.0.0.1:${port}` },
    });
    const screens: string[] = [];
    const answers = new Map<number, (m: WsMessage) => void>();
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as WsMessage;
      if ('type' in m) screens.push(m.snapshot.customer.screen);
      else if (m.id !== null) answers.get(m.id)?.(m);
    });
    await new Promise<void>((open, fail) => {
      ws.once('open', () => open());
      ws.once('error', fail);
    });
    let id = 0;
    const ask = async (request: Record<string, unknown>): Promise<void> => {
      id += 1;
      const answered = new Promise<WsMessage>((done) => answers.set(id, done));
      ws.send(JSON.stringify({ id, ...request }));
      const m = await answered;
      if (!('result' in m) || !m.result.ok) throw new Error(`refused: ${JSON.stringify(m)}`);
    };
    const send = (params: unknown): Promise<void> => ask({ method: 'send', params });
    const until = async (screen: string): Promise<void> => {
      while (!screens.includes(screen)) {
        if (run.child.exitCode !== null) throw new Error(`exited before screen ${screen}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // Snapshots are pushed on change; the first one is asked for.
    id += 1;
    const first = new Promise<WsMessage>((done) => answers.set(id, done));
    ws.send(JSON.stringify({ id, method: 'snapshot' }));
    const initial = await first;
    if ('result' in initial && initial.result.ok)
      screens.push((initial.result.value as { customer: { screen: string } }).customer.screen);
    await until('idle');
    await send({ type: 'START' });
    await until('enter-amount');
    await send({ type: 'ENTER_AMOUNT', minor: 500 });
    await until('confirm');
    await send({ type: 'CONFIRM' });
    // The sandbox has committed the authorization and holds its answer: the payment is in flight.
    for (;;) {
      const ledger = await json<{ transactions: unknown[] }>(`${sandboxUrl}/__sandbox/ledger`);
      if (ledger.transactions.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    run.child.kill('SIGTERM');
    ws.terminate();
    expect(await exitOf(run)).toEqual({ code: 0, signal: null });

    const journal = openJournal(join(dir, 'var', 'journal.db'));
    try {
      expect(journal.list({ limit: 100 }).length).toBeGreaterThan(0);
      expect(journal.inFlight()).toEqual([]);
    } finally {
      journal.close();
    }
  }, 180_000);
});

/** What the customer's screen receives: no operator status. */
async function snapshotOf(port: string, secret: string): Promise<CustomerSnapshot> {
  return (await ask(port, secret, { method: 'snapshot' })) as CustomerSnapshot;
}

describe('parking-terminal start and an unexpected error', () => {
  it('puts the terminal out of service, keeps its journal, and exits 1 once stopped', async () => {
    // The command gets the process boundary from main(); here a stand-in that hands the handler to the test, which
    // then raises what an unhandled rejection in the core would.
    let raise: ((error: unknown, origin: 'unhandledRejection' | 'uncaughtException') => void) | undefined;
    let removed = false;
    const boundary: ProcessBoundary = {
      onUnexpectedError(handler) {
        raise = handler;
        return () => {
          removed = true;
        };
      },
    };
    let out = '';
    // A terminal, as a person running `start` by hand has: the URL is printed with its secret there only.
    const stdout = Object.assign(
      new Writable({
        write(chunk: Buffer, _enc, done) {
          out += chunk.toString('utf8');
          done();
        },
      }),
      { isTTY: true },
    );
    const stop = new AbortController();
    const exit = main(['start', '--headless', '--port', '0', '--config', writeConfig(baseConfig())], {
      stdout,
      stderr: new Writable({ write: (_c, _e, done) => done() }),
      signal: stop.signal,
      cwd: dir,
      process: boundary,
    });
    let ready: RegExpExecArray | null = null;
    while (!(ready = /ready: http:\/\/127\.0\.0\.1:(\d+)\/\?s=([A-Za-z0-9_-]+)/.exec(out))) {
      if (await Promise.race([exit.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]))
        throw new Error(`start ended: ${out}`);
    }
    const [, port, secret] = ready;
    expect((await snapshotOf(port!, secret!)).customer.screen).toBe('idle');
    expect(raise).toBeDefined();

    raise!(new Error('a bug in the core'), 'unhandledRejection');
    const snapshot = await snapshotOf(port!, secret!);
    expect(snapshot.customer.screen).toBe('out-of-service');
    // The reason is the operator's: not on the customer's screen, in the status with the PIN.
    expect(JSON.stringify(snapshot)).not.toContain('a bug in the core');
    const pin = /Operator PIN for this start: (\d+)/.exec(out)?.[1] ?? '';
    const status = (await ask(port!, secret!, {
      method: 'operator',
      params: { pin, action: { type: 'status' } },
    })) as { status: OperatorStatus };
    expect(status.status.outOfService).toContain('a bug in the core');

    stop.abort();
    expect(await exit).toBe(1);
    expect(removed).toBe(true);
    const journal = openJournal(join(dir, 'var', 'journal.db'));
    try {
      expect(journal.inFlight()).toEqual([]);
    } finally {
      journal.close();
    }
  }, 120_000);
});

describe('parking-terminal start with payments left in flight and the gateway down', () => {
  it('serves the screen while recovery waits for the gateway, and SIGTERM stops it with the entry kept', async () => {
    await leaveSaleInFlight(join(dir, 'var', 'journal.db'), 'LEFT-BY-LAST-RUN');
    const secretFile = join(dir, 'shared-secret');
    writeFileSync(secretFile, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
    // A loopback port just released: nothing listens, every request is refused before a byte leaves.
    const down = await closedPort();
    const run = start(
      writeConfig(
        baseConfig({
          gateway: {
            kind: 'remote',
            baseUrl: `http://127.0.0.1:${down}`,
            auth: { method: 'http-signature', sharedSecretFile: secretFile },
          },
          journal: { path: join(dir, 'var', 'journal.db'), resolutionRetryMs: 100 },
        }),
      ),
    );
    const { port, secret } = await screen(
      run,
      /resolving 1 journal entry left in flight before it takes a card: http:\/\/127\.0\.0\.1:\d+\//,
    );
    const snapshot = await snapshotOf(port, secret);
    expect(snapshot.customer.screen).toBe('recovering');
    expect(run.lines.some((l) => l.includes(' ready: '))).toBe(false);
    const pin = readFileSync(join(dir, 'operator-pin'), 'utf8').trim();
    const status = (await ask(port, secret, {
      method: 'operator',
      params: { pin, action: { type: 'status' } },
    })) as { status: OperatorStatus };
    expect(status.status.recovery).toMatchObject({ running: true, inFlight: 1 });

    run.child.kill('SIGTERM');
    expect(await exitOf(run)).toEqual({ code: 0, signal: null });
    const journal = openJournal(join(dir, 'var', 'journal.db'));
    try {
      expect(journal.inFlight().map((e) => e.transactionId)).toEqual(['LEFT-BY-LAST-RUN']);
    } finally {
      journal.close();
    }
  }, 120_000);
});
