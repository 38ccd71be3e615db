import { fdatasync, fdatasyncSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { waitFor } from '../../src/host/drive.js';
import { startKioskService } from '../../src/host/kiosk-service.js';
import type { ServiceNotifier } from '../../src/host/systemd-notify.js';
import { createTerminalHost } from '../../src/host/terminal-host.js';
import type { LogSync } from '../../src/journal/index.js';
import { saleEntry } from '../../src/journal/testing/entries.js';
import { silentLogger } from '../../src/log/index.js';

/**
 * A terminal whose disk fails the sync of a journal commit: the journal takes no more writes (a commit behind one that
 * may not be on disk could be lost with it), and the terminal goes out of service, with the reason for the operator,
 * until it is restarted; restarted on a working disk, it takes a sale again.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const eio = (): NodeJS.ErrnoException =>
  Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

describe('a journal sync the disk fails', () => {
  it('puts the terminal out of service until it is restarted, and a restarted terminal sells again', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-journal-sync-'));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const config = parseConfig({
      terminal: { model: 'kiosk' },
      reader: { sim: { presentDelayMs: 20 } },
    });
    let failing = false;
    const disk: LogSync = {
      background: (fd, done) => (failing ? setImmediate(() => done(eio())) : fdatasync(fd, done)),
      inline: (fd) => {
        if (failing) throw eio();
        fdatasyncSync(fd);
      },
    };
    const host = await createTerminalHost(config, { logger: silentLogger(), cwd, journalLogSync: disk });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await host.close();
    });
    await waitFor(host, ['idle'], 20_000);

    failing = true;
    // A durable write while an answer is awaited: its commit is made, and its sync, on the thread pool, fails.
    const answer = host.journal.expectWrite();
    await expect(host.journal.beginDurably(saleEntry('SYNC-1'))).rejects.toMatchObject({
      code: 'JOURNAL_IO',
    });
    answer();

    // At once: the failure puts it out of service before the write's caller resumes.
    await waitFor(host, ['out-of-service'], 0);
    expect(host.status().outOfService).toContain('the journal could not sync its log to disk');
    // No customer can start a payment.
    const start = await host.send({ type: 'START' });
    expect(start.ok ? undefined : start.error.code).toBe('OUT_OF_SERVICE');
    await host.close();
    closed = true;

    // Restarted (the disk works again): the journal opens from what is on disk and the terminal takes a sale.
    failing = false;
    const again = await createTerminalHost(config, { logger: silentLogger(), cwd });
    cleanups.push(() => again.close());
    await waitFor(again, ['idle'], 20_000);
    expect(again.status().outOfService).toBeUndefined();
    // Recovery ran before the first card: nothing the failed commit left is still in flight.
    expect(again.journal.inFlight()).toEqual([]);
    expect(again.journal.findByTransactionId('SYNC-1')).toMatchObject({ state: 'resolved' });
    const started = await again.send({ type: 'START' });
    expect(started.ok).toBe(true);
  }, 60_000);

  it('under the kiosk service, starves the watchdog so that the service manager restarts it from the disk', async () => {
    // Out of service until restarted, with the entry the failed commit left in flight: the daily restart and the
    // fleet's restart wait for an idle terminal, which this one never is again, so only the watchdog can bring it back.
    const cwd = mkdtempSync(join(tmpdir(), 'pt-journal-sync-'));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const config = parseConfig({ terminal: { model: 'kiosk' }, reader: { sim: { presentDelayMs: 20 } } });
    let failing = false;
    const disk: LogSync = {
      background: (fd, done) => (failing ? setImmediate(() => done(eio())) : fdatasync(fd, done)),
      inline: (fd) => {
        if (failing) throw eio();
        fdatasyncSync(fd);
      },
    };
    const host = await createTerminalHost(config, { logger: silentLogger(), cwd, journalLogSync: disk });
    cleanups.push(() => host.close());
    await waitFor(host, ['idle'], 20_000);
    const sent: string[] = [];
    const notifier: ServiceNotifier = {
      active: true,
      notify: (...assignments) => {
        sent.push(assignments.join('|'));
        return Promise.resolve();
      },
    };
    const service = await startKioskService(host, {
      uiAliveMs: () => Date.now(),
      restart: () => undefined,
      configFile: undefined,
      cwd,
      logger: silentLogger(),
      env: {},
      notifier,
    });
    cleanups.push(() => service.close());
    expect(await service.watchdog.tick()).toEqual([]);

    failing = true;
    const answer = host.journal.expectWrite();
    await expect(host.journal.beginDurably(saleEntry('SYNC-2'))).rejects.toMatchObject({
      code: 'JOURNAL_IO',
    });
    answer();
    await waitFor(host, ['out-of-service'], 0);
    expect(host.idle().idle).toBe(false);

    sent.length = 0;
    expect(await service.watchdog.tick()).toEqual(['journal']);
    expect(sent).toEqual(['STATUS=unhealthy: journal']);
  }, 60_000);
});
