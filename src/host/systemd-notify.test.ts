import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SystemdNotifier, watchdogIntervalMs } from './systemd-notify.js';

/**
 * The datagram really sent: `systemd-notify` run by the notifier, a unix datagram socket standing in for systemd's
 * (Python's socket module, which Node lacks), closing the barrier descriptor as systemd does.
 */
const RECEIVER = `
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("LISTENING", flush=True)
while True:
    msg, fds, _flags, _addr = socket.recv_fds(s, 4096, 8)
    for fd in fds:
        os.close(fd)
    print(msg.decode().replace("\\n", "|"), flush=True)
`;

const tools =
  spawnSync('systemd-notify', ['--version']).status === 0 &&
  spawnSync('python3', ['-c', 'import socket; socket.recv_fds']).status === 0;

describe.skipIf(!tools)('sd_notify through systemd-notify', () => {
  let dir: string;
  let receiver: ChildProcess;
  const lines: string[] = [];
  let socket: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'notify-'));
    socket = join(dir, 'notify.sock');
    receiver = spawn('python3', ['-c', RECEIVER, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
    const rl = createInterface({ input: receiver.stdout! });
    await new Promise<void>((ready) =>
      rl.on('line', (line) => (line === 'LISTENING' ? ready() : lines.push(line))),
    );
  });

  afterAll(() => {
    receiver.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers READY=1 and WATCHDOG=1 to $NOTIFY_SOCKET, each before notify resolves', async () => {
    const notifier = new SystemdNotifier({ ...process.env, NOTIFY_SOCKET: socket });
    expect(notifier.active).toBe(true);
    await notifier.notify('READY=1', 'STATUS=taking cards');
    await notifier.notify('WATCHDOG=1');
    await expect
      .poll(() => lines.filter((l) => !l.startsWith('BARRIER')))
      .toEqual(['READY=1|STATUS=taking cards', 'WATCHDOG=1']);
  });

  it('sends each assignment as one line, whatever its text holds', async () => {
    lines.length = 0;
    const notifier = new SystemdNotifier({ ...process.env, NOTIFY_SOCKET: socket });
    await notifier.notify('STATUS=refused (key "a\nREADY=1\r\nb")');
    await expect
      .poll(() => lines.filter((l) => !l.startsWith('BARRIER')))
      .toEqual(['STATUS=refused (key "a READY=1  b")']);
  });
});

describe('notifier without a service manager', () => {
  it('does nothing when $NOTIFY_SOCKET is not set', async () => {
    const notifier = new SystemdNotifier({}, '/nonexistent/systemd-notify', () => {
      throw new Error('must not run');
    });
    expect(notifier.active).toBe(false);
    await notifier.notify('READY=1');
  });

  it('never rejects when the program is missing: the error is reported', async () => {
    const errors: Error[] = [];
    const notifier = new SystemdNotifier({ NOTIFY_SOCKET: '/tmp/x' }, '/nonexistent/systemd-notify', (e) =>
      errors.push(e),
    );
    await notifier.notify('READY=1');
    expect(errors).toHaveLength(1);
  });

  it('feeds the watchdog at half of $WATCHDOG_USEC, for the process it names or its child', () => {
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' })).toBe(15_000);
    expect(watchdogIntervalMs({})).toBeUndefined();
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) })).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.ppid) })).toBe(
      15_000,
    );
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' })).toBeUndefined();
  });

  it('keeps a watchdog of weeks (WatchdogSec=60d) to a timer Node can hold, never a ping every millisecond', () => {
    // Node runs a timer longer than 2^31 - 1 ms after 1 ms (TimeoutOverflowWarning): the health loop would spawn
    // systemd-notify without pause.
    expect(watchdogIntervalMs({ WATCHDOG_USEC: String(60 * 86_400 * 1_000_000) })).toBe(2 ** 31 - 1);
  });
});
