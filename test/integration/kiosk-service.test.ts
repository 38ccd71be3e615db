import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { closedPort, leaveSaleInFlight } from './down-gateway.js';
import { START_LOOP_FILE } from '../../src/host/start-loop.js';
import {
  bridgeRequest,
  printed,
  screenOf,
  startCommand,
  writeStartConfig,
  startTestDirectories,
} from './start-command.js';

/**
 * `parking-terminal start` under a service manager (deploy/systemd/parking-terminal.service), with a unix datagram
 * socket standing in for systemd's `$NOTIFY_SOCKET` (Python's socket module: Node has no datagram unix sockets):
 * READY=1 comes only once the terminal takes cards — after journal recovery, after the line `start` prints then —
 * WATCHDOG=1 follows at half of `$WATCHDOG_USEC`, and SIGTERM says STOPPING=1 before the exit.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const RECEIVER = `
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("LISTENING", flush=True)
while True:
    msg, fds, _flags, _addr = socket.recv_fds(s, 4096, 8)
    for fd in fds:
        os.close(fd)
    text = msg.decode()
    if text != "BARRIER=1":
        print(text.replace("\\n", "|"), flush=True)
`;
const tools =
  spawnSync('systemd-notify', ['--version']).status === 0 &&
  spawnSync('python3', ['-c', 'import socket; socket.recv_fds']).status === 0;

let dir: string;
const children = startTestDirectories('pt-kiosk-service-', (d) => (dir = d));

/**
 * `parking-terminal start` with `config` under a stand-in for systemd's notify socket (watchdog 0.4 s): everything seen,
 * in order — `notify: …` from the socket, `stdout: …` from the terminal — and its exit.
 */
async function underServiceManager(
  config: unknown,
): Promise<{ events: string[]; child: ChildProcess; exited: Promise<number | null> }> {
  const socket = join(dir, 'notify.sock');
  const events: string[] = [];
  const receiver = spawn('python3', ['-c', RECEIVER, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(receiver);
  await new Promise<void>((listening) =>
    createInterface({ input: receiver.stdout }).on('line', (line) =>
      line === 'LISTENING' ? listening() : events.push(`notify: ${line}`),
    ),
  );
  const file = join(dir, 'terminal.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [BIN, 'start', '--headless', '--port', '0', '--config', file], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: 'test', NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  createInterface({ input: child.stdout }).on('line', (line) => events.push(`stdout: ${line}`));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { events, child, exited };
}

describe.skipIf(!tools)('kiosk service notifications', () => {
  it('sends READY=1 after recovery, feeds the watchdog, and says STOPPING=1 on SIGTERM', async () => {
    const { events, child, exited } = await underServiceManager({
      journal: { path: join(dir, 'var', 'journal.db') },
      offline: { keyFile: join(dir, 'var', 'offline.key') },
    });

    await expect
      .poll(() => events.filter((e) => e === 'notify: WATCHDOG=1').length, { timeout: 60_000 })
      .toBeGreaterThanOrEqual(2);
    const ready = events.findIndex((e) => e.startsWith('notify: READY=1'));
    // The ready line and READY=1 arrive on two pipes (the terminal's stdout, the receiver's), whose order here says
    // nothing of the order they were sent in: that READY=1 waits for recovery is the next test's (no READY=1 while
    // recovery waits). On the one socket, the watchdog is fed after READY=1.
    await expect
      .poll(() => events.some((e) => /^stdout: Parking Terminal \(kiosk\) ready:/.test(e)))
      .toBe(true);
    expect(ready).toBeGreaterThanOrEqual(0);
    expect(events.findIndex((e) => e === 'notify: WATCHDOG=1')).toBeGreaterThan(ready);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect.poll(() => events.at(-1)).toBe('notify: STOPPING=1');
  });

  it('while recovery waits for the gateway: STATUS says why, the start timeout is extended, no READY=1', async () => {
    await leaveSaleInFlight(join(dir, 'var', 'journal.db'), 'LEFT-BY-LAST-RUN');
    writeFileSync(join(dir, 'shared-secret'), `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
    const { events, child, exited } = await underServiceManager({
      journal: { path: join(dir, 'var', 'journal.db'), resolutionRetryMs: 100 },
      offline: { keyFile: join(dir, 'var', 'offline.key') },
      gateway: {
        kind: 'remote',
        baseUrl: `http://127.0.0.1:${await closedPort()}`,
        auth: { method: 'http-signature', sharedSecretFile: join(dir, 'shared-secret') },
      },
    });

    await expect
      .poll(() => events.find((e) => e.startsWith('notify: EXTEND_TIMEOUT_USEC=')), { timeout: 60_000 })
      .toMatch(
        /^notify: EXTEND_TIMEOUT_USEC=180000000\|STATUS=resolving 1 journal entry left in flight before taking cards/,
      );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect.poll(() => events.at(-1)).toBe('notify: STOPPING=1');
    expect(events.some((e) => e.startsWith('notify: READY=1') || e === 'notify: WATCHDOG=1')).toBe(false);
    expect(events.some((e) => / ready: /.test(e))).toBe(false);
  }, 90_000);

  it('sends the reason of a refused configuration as one line of STATUS: a key cannot add assignments', async () => {
    // sd_notify's assignments are lines: a line break in STATUS's text would start another assignment, and a key of the
    // file naming one (READY=1, MAINPID=…) would be obeyed — a refused terminal "ready", its watchdog then starved.
    const { events, child, exited } = await underServiceManager({ 'x\nREADY=1\ny': 1 });

    await expect
      .poll(() => events.find((e) => e.startsWith('notify: EXTEND_TIMEOUT_USEC=')), { timeout: 60_000 })
      .toMatch(/\|STATUS=out of service: configuration refused \(CONFIG_UNKNOWN_KEY /);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = events
      .filter((e) => e.startsWith('notify: '))
      .flatMap((e) => e.slice('notify: '.length).split('|'));
    expect(lines).not.toContain('READY=1');
  }, 90_000);
});

/**
 * A `systemd-notify` standing in for the real one on PATH: it writes every message it is given, one line each, to
 * `sent`, and answers at once — except `STOPPING=1` when the file `hold` exists: then it says it got it (the file
 * `stopping`) and holds it until the test lets it go (the file `go`), the moments a stopping terminal spends telling
 * the service manager, closing its fleet link, before the terminal itself closes.
 */
function fakeNotifier(): {
  env: NodeJS.ProcessEnv;
  sent: () => string[];
  hold: string;
  stopping: string;
  go: string;
} {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const [sent, hold, stopping, go] = ['sent', 'hold', 'stopping', 'go'].map((f) => join(dir, f)) as [
    string,
    string,
    string,
    string,
  ];
  writeFileSync(
    join(bin, 'systemd-notify'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${sent}'\n` +
      `case " $* " in *" STOPPING=1 "*) if [ -e '${hold}' ]; then : > '${stopping}'; ` +
      `while [ ! -e '${go}' ]; do sleep 0.05; done; fi;; esac\nexit 0\n`,
    { mode: 0o755 },
  );
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, NOTIFY_SOCKET: join(dir, 'notify.sock') },
    sent: () =>
      existsSync(sent)
        ? readFileSync(sent, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [],
    hold,
    stopping,
    go,
  };
}

/** A configuration in the test's directory; `extra` merged in. */
const terminalConfig = (extra: Record<string, unknown> = {}): string => writeStartConfig(dir, extra);

describe('a terminal on its way out', () => {
  it('takes no new customer once it is stopping, while the service manager is told and before it closes', async () => {
    const notifier = fakeNotifier();
    writeFileSync(notifier.hold, '');
    const run = startCommand(dir, terminalConfig({ bridge: { urlFile: 'ui-url' } }), { env: notifier.env });
    children.push(run.child);
    const { port, secret } = await screenOf(run, / ready: /, join(dir, 'ui-url'), 60_000);

    run.child.kill('SIGTERM');
    await expect.poll(() => existsSync(notifier.stopping), { timeout: 60_000 }).toBe(true);
    const result = await bridgeRequest(port, secret, { method: 'send', params: { type: 'START' } });
    const snapshot = (await bridgeRequest(port, secret, { method: 'snapshot' })) as {
      ok: boolean;
      value?: TerminalSnapshot;
    };
    writeFileSync(notifier.go, '');
    expect(await run.exited).toEqual({ code: 0, signal: null });

    expect(snapshot.value?.customer.screen).toBe('out-of-service');
    expect(result.ok && (result.value as TerminalSnapshot).customer.screen).not.toBe('enter-ticket');
  }, 120_000);
});

describe('a terminal that fails at every start', () => {
  it('waits longer before each start once its starts fail, and says so in STATUS', async () => {
    const notifier = fakeNotifier();
    const record = join(dir, START_LOOP_FILE);
    // A good start (ready, then stopped cleanly) leaves no record.
    const good = startCommand(dir, terminalConfig(), { env: notifier.env });
    children.push(good.child);
    await printed(good, / ready: /, 60_000);
    good.child.kill('SIGTERM');
    expect(await good.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(record)).toBe(false);

    // The UI port held by another program: the start fails (exit 1), and the service manager would start it again.
    const holder = createServer();
    await new Promise<void>((ok) => holder.listen(0, '127.0.0.1', ok));
    const port = String((holder.address() as { port: number }).port);
    try {
      const failing = startCommand(dir, terminalConfig(), { env: notifier.env, port });
      children.push(failing.child);
      expect(await failing.exited).toEqual({ code: 1, signal: null });
      expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual({ failed: 1 });

      // The next start waits before it tries again, and says why; stopped meanwhile, it has tried nothing.
      const next = startCommand(dir, terminalConfig(), { env: notifier.env, port });
      children.push(next.child);
      await printed(next, /restart loop: the last 1 start\(s\) failed; starting again in 10 s$/, 60_000);
      await expect
        .poll(() => notifier.sent().at(-1), { timeout: 60_000 })
        .toMatch(/^EXTEND_TIMEOUT_USEC=\d+ STATUS=restart loop: the last 1 start\(s\) failed/);
      next.child.kill('SIGTERM');
      expect(await next.exited).toEqual({ code: 0, signal: null });
      expect(next.lines.some((l) => l.includes('BRIDGE_LISTEN'))).toBe(false);
      expect(notifier.sent().at(-1)).toBe('STOPPING=1');
      expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual({ failed: 1 });
    } finally {
      await new Promise<void>((ok) => holder.close(() => ok()));
    }
  }, 180_000);
});

describe('a terminal that dies soon after it is ready', () => {
  it('counts the start as failed until it has run ready for a while, and a clean stop clears it', async () => {
    const notifier = fakeNotifier();
    const record = join(dir, START_LOOP_FILE);
    // Ready, then killed at once (a crash, the watchdog): the next start must not come back at full speed.
    const crashed = startCommand(dir, terminalConfig(), { env: notifier.env });
    children.push(crashed.child);
    await printed(crashed, / ready: /, 60_000);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual({ failed: 1 });

    // Ready after its wait, then stopped cleanly: the loop is over.
    const next = startCommand(dir, terminalConfig(), { env: notifier.env });
    children.push(next.child);
    await printed(next, /restart loop: the last 1 start\(s\) failed; starting again in 10 s$/, 60_000);
    await printed(next, / ready: /, 60_000);
    next.child.kill('SIGTERM');
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(record)).toBe(false);
  }, 180_000);
});
