import { describe, expect, it } from 'vitest';
import { readerLinkCheck, ServiceWatchdog, uiCheck, type WatchedTerminal } from './service-watchdog.js';
import type { ServiceNotifier } from './systemd-notify.js';

class RecordingNotifier implements ServiceNotifier {
  readonly active = true;
  readonly sent: string[] = [];
  notify(...assignments: string[]): Promise<void> {
    this.sent.push(assignments.join('|'));
    return Promise.resolve();
  }
}

function setup(inFlight = 0) {
  let now = 1_000_000;
  let reader = 'ready';
  let uiAlive: number | undefined = now;
  let money = inFlight;
  const terminal: WatchedTerminal = { readerHealth: () => reader };
  const notifier = new RecordingNotifier();
  const watchdog = new ServiceWatchdog({
    notifier,
    intervalMs: undefined,
    checks: [readerLinkCheck(terminal, 60_000, now), uiCheck(() => uiAlive, 30_000, now)],
    moneyInFlight: () => money > 0,
    now: () => now,
  });
  return {
    watchdog,
    notifier,
    pings: () => notifier.sent.filter((m) => m === 'WATCHDOG=1').length,
    advance: (ms: number) => (now += ms),
    setReader: (h: string) => (reader = h),
    uiAnswered: () => (uiAlive = now),
    setMoney: (n: number) => (money = n),
  };
}

describe('service watchdog', () => {
  it('says READY=1 when told the terminal takes cards, then feeds the watchdog while healthy', async () => {
    const t = setup();
    expect(t.notifier.sent).toEqual([]);
    await t.watchdog.ready();
    expect(t.notifier.sent[0]).toBe('READY=1|STATUS=taking cards');
    expect(await t.watchdog.tick()).toEqual([]);
    expect(t.pings()).toBe(1);
  });

  it('stops WATCHDOG=1 when the reader link stays down past its grace, and resumes when it is back', async () => {
    const t = setup();
    t.setReader('reconnecting');
    t.advance(30_000);
    t.uiAnswered();
    expect(await t.watchdog.tick()).toEqual([]);
    t.advance(31_000);
    t.uiAnswered();
    expect(await t.watchdog.tick()).toEqual(['reader']);
    expect(t.pings()).toBe(1);
    t.setReader('ready');
    expect(await t.watchdog.tick()).toEqual([]);
    expect(t.pings()).toBe(2);
  });

  it('stops WATCHDOG=1 when the UI has not answered for too long', async () => {
    const t = setup();
    t.advance(29_000);
    await t.watchdog.tick();
    t.advance(2_000);
    expect(await t.watchdog.tick()).toEqual(['ui']);
    expect(t.pings()).toBe(1);
    expect(t.notifier.sent.at(-1)).toBe('STATUS=unhealthy: ui');
  });

  it('keeps feeding the watchdog while a request is in flight, so that no restart cuts a payment short', async () => {
    const t = setup(1);
    t.advance(120_000);
    t.setReader('disconnected');
    expect(await t.watchdog.tick()).toEqual(['reader', 'ui']);
    expect(t.pings()).toBe(1);
    t.setMoney(0);
    await t.watchdog.tick();
    expect(t.pings()).toBe(1);
  });

  it('withholds WATCHDOG=1 when a check fails and the journal cannot be read, rather than throwing', async () => {
    // A journal on a failing disk: whether a request is out cannot be known; recovery at the next start resolves it.
    const notifier = new RecordingNotifier();
    const watchdog = new ServiceWatchdog({
      notifier,
      intervalMs: undefined,
      checks: [{ name: 'ui', healthy: () => false }],
      moneyInFlight: () => {
        throw new Error('SQLITE_IOERR: disk I/O error');
      },
    });
    expect(await watchdog.tick()).toEqual(['ui']);
    expect(notifier.sent).toEqual(['STATUS=unhealthy: ui']);
  });

  it('counts a check that throws as failing', async () => {
    const notifier = new RecordingNotifier();
    const watchdog = new ServiceWatchdog({
      notifier,
      intervalMs: undefined,
      checks: [
        {
          name: 'broken',
          healthy: () => {
            throw new Error('x');
          },
        },
      ],
      moneyInFlight: () => false,
    });
    expect(await watchdog.tick()).toEqual(['broken']);
    expect(notifier.sent).not.toContain('WATCHDOG=1');
  });
});
