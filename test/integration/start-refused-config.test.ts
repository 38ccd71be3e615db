import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { CustomerSnapshot } from '../../src/host/api.js';
import { openJournal } from '../../src/journal/index.js';
import { leaveSaleInFlight } from './down-gateway.js';
import {
  bridgeRequest as ask,
  printed as printedWithin,
  screenOf,
  startCommand,
  type StartRun,
  startTestDirectories,
} from './start-command.js';

/**
 * `parking-terminal start` with a configuration file it refuses: out of service instead of ending (a kiosk service
 * would otherwise stay down, out of the fleet's reach), no reader, the journal left as it was; the file corrected —
 * replaced by a rename, as an editor saves it — the terminal starts, recovering what an earlier run left in flight.
 */

/** Bounds a hang, measures no speed: loading the TypeScript sources on a busy machine. */
const HANG_MS = 90_000;

let dir: string;
const children = startTestDirectories('pt-start-refused-', (d) => (dir = d));

type Run = StartRun;

/** Waits, bounded by {@link HANG_MS}, until `run` printed a line matching `re`. */
const printed = (run: Run, re: RegExp): Promise<RegExpExecArray> => printedWithin(run, re, HANG_MS);

/**
 * The screen's port and secret once `run` printed a line matching `re`, from the `bridge.urlFile` of the configurations
 * here ({@link URL_FILE}): standard output (a pipe) carries the URL without its secret.
 */
const screen = (run: Run, re: RegExp): Promise<{ port: string; secret: string }> =>
  screenOf(run, re, join(dir, URL_FILE), HANG_MS);

/** `bridge.urlFile` of the configurations here, relative to the working directory. */
const URL_FILE = 'ui-url';

function start(configFile: string, options: { headless?: boolean; env?: NodeJS.ProcessEnv } = {}): Run {
  const run = startCommand(dir, configFile, options);
  children.push(run.child);
  return run;
}

async function snapshotOf(port: string, secret: string): Promise<CustomerSnapshot> {
  const result = await ask(port, secret, { method: 'snapshot' });
  if (!result.ok) throw new Error(`snapshot refused: ${JSON.stringify(result)}`);
  return result.value as CustomerSnapshot;
}

/** The bytes of every file of the journal's directory: the journal, and a -wal or -shm beside it if one appears. */
function journalDirectoryDigest(journalDir: string): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(journalDir).sort())
    hash.update(name).update(readFileSync(join(journalDir, name)));
  return hash.digest('hex');
}

describe('parking-terminal start with a configuration file it refuses', () => {
  it('stays out of service with no reader and its journal untouched, then starts once the file is corrected', async () => {
    const journalPath = join(dir, 'var', 'journal.db');
    await leaveSaleInFlight(journalPath, 'LEFT-BY-LAST-RUN');
    const before = journalDirectoryDigest(join(dir, 'var'));
    const good = {
      terminal: { model: 'attended', locale: 'de-DE' },
      journal: { path: journalPath, timeoutReversalDelayMs: 0, resolutionRetryMs: 100 },
      offline: { keyFile: join(dir, 'var', 'offline.key') },
      bridge: { urlFile: URL_FILE },
    };
    const configFile = join(dir, 'terminal.json');
    // An unknown key in the reader section: the whole configuration is refused.
    writeFileSync(configFile, JSON.stringify({ ...good, reader: { kind: 'sim', colour: 'blue' } }));

    const run = start(configFile);
    const { port, secret } = await screen(
      run,
      /out of service: configuration refused \(CONFIG_UNKNOWN_KEY reader\.colour\).*: http:\/\/127\.0\.0\.1:\d+\//,
    );
    const refused = await snapshotOf(port, secret);
    expect(refused.customer.screen).toBe('out-of-service');
    // The kiosk's language (terminal.locale is valid on its own), the terminal's own out-of-service texts.
    expect(refused.locale).toBe('de_DE');
    expect(refused.customer.title).toBe('Außer Betrieb');
    // Nothing takes a card: a payment is refused, as on every out-of-service screen, and no reader was opened.
    const payment = await ask(port, secret, { method: 'send', params: { type: 'START' } });
    expect(payment).toMatchObject({ ok: false, error: { code: 'OUT_OF_SERVICE' } });
    expect(run.stderr()).not.toMatch(/reader (connected|ready)/i);
    expect(run.lines.join('\n')).not.toMatch(/ready:|Sandbox gateway/);
    // The journal is left exactly as the last run left it, its payment in flight for the real start's recovery.
    expect(journalDirectoryDigest(join(dir, 'var'))).toBe(before);

    // The corrected file, renamed over the refused one (an editor's atomic save).
    const draft = join(dir, 'terminal.json.draft');
    writeFileSync(draft, JSON.stringify(good));
    renameSync(draft, configFile);
    const { port: readyPort, secret: readySecret } = await screen(run, / ready: /);
    expect((await snapshotOf(readyPort, readySecret)).customer.screen).not.toBe('out-of-service');

    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    // "ready" comes after recovery (money safety rule 3): the sale the last run left is resolved.
    const journal = openJournal(journalPath);
    try {
      expect(journal.inFlight()).toEqual([]);
    } finally {
      journal.close();
    }
  }, 240_000);

  it('started once the file is corrected, serves the browser that showed its out-of-service screen', async () => {
    // The kiosk's browser was given the URL of the refused state (the only one printed) and holds the session cookie
    // it exchanged the secret for: it must show the terminal once the terminal starts in this process, without anyone
    // giving it a new URL.
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = String((holder.address() as AddressInfo).port);
    await new Promise<void>((r) => holder.close(() => r()));
    const good = {
      journal: { path: join(dir, 'var', 'journal.db') },
      offline: { keyFile: join(dir, 'var', 'offline.key') },
      bridge: { urlFile: URL_FILE },
    };
    const configFile = join(dir, 'terminal.json');
    writeFileSync(configFile, JSON.stringify({ ...good, reader: { kind: 'sim', colour: 'blue' } }));
    const run = startCommand(dir, configFile, { port });
    children.push(run.child);
    const { secret } = await screen(
      run,
      /out of service: configuration refused .*: http:\/\/127\.0\.0\.1:\d+\//,
    );
    const opened = await fetch(`http://127.0.0.1:${port}/?s=${secret}`, { redirect: 'manual' });
    const cookie = opened.headers.get('set-cookie')?.split(';')[0];
    expect(cookie).toMatch(new RegExp(`^pt_session_${port}=`));

    const draft = join(dir, 'terminal.json.draft');
    writeFileSync(draft, JSON.stringify(good));
    renameSync(draft, configFile);
    await printed(run, / ready: http:\/\/127\.0\.0\.1:\d+\//);

    // The page's WebSocket, reconnecting with its cookie.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, {
      headers: { Origin: `http://127.0.0.1:${port}`, Cookie: cookie ?? '' },
    });
    try {
      const answer = await new Promise<{ result?: { ok: boolean; value?: CustomerSnapshot } }>(
        (resolve, reject) => {
          ws.once('error', reject);
          ws.once('open', () => ws.send(JSON.stringify({ id: 1, method: 'snapshot' })));
          ws.on('message', (data: Buffer) => {
            const m = JSON.parse(data.toString('utf8')) as {
              id?: number;
              result?: { ok: boolean; value?: CustomerSnapshot };
            };
            if (m.id === 1) resolve(m);
          });
        },
      );
      expect(answer.result?.value?.customer.screen).not.toBe('out-of-service');
    } finally {
      ws.terminate();
    }
    // And the printed URL, opened again (the browser reloaded), still opens it.
    expect((await snapshotOf(port, secret)).customer.screen).not.toBe('out-of-service');
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('stopped while it leaves the refused state, it stops: the kiosk window is not opened', async () => {
    // A broker that accepts the link and acknowledges nothing after: the refused link's close waits for its `offline`.
    const sockets: Socket[] = [];
    const broker = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => socket.write(Buffer.from([0x20, 0x02, 0x00, 0x00])));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => broker.listen(0, '127.0.0.1', r));
    // An Electron binary that says it was started.
    const electronDir = join(dir, 'electron');
    mkdirSync(electronDir);
    const marker = join(dir, 'electron-started');
    writeFileSync(join(electronDir, 'electron'), `#!/bin/sh\necho started > '${marker}'\nexec sleep 20\n`, {
      mode: 0o755,
    });
    try {
      const good = {
        terminal: { id: 'TSTOP' },
        journal: { path: join(dir, 'var', 'journal.db') },
        offline: { keyFile: join(dir, 'var', 'offline.key') },
        fleet: { url: `mqtt://127.0.0.1:${(broker.address() as AddressInfo).port}`, mqttVersion: 4 },
      };
      const configFile = join(dir, 'terminal.json');
      writeFileSync(configFile, JSON.stringify({ ...good, reader: { kind: 'sim', colour: 'blue' } }));
      const run = start(configFile, { headless: false, env: { ELECTRON_OVERRIDE_DIST_PATH: electronDir } });
      await printed(run, /out of service: configuration refused/);
      const draft = join(dir, 'terminal.json.draft');
      writeFileSync(draft, JSON.stringify(good));
      renameSync(draft, configFile);
      // Stopped as the refused state ends (its fleet link closing).
      const until = Date.now() + HANG_MS;
      while (!run.stderr().includes('the configuration is usable') && Date.now() < until)
        await new Promise((r) => setTimeout(r, 10));
      run.child.kill('SIGTERM');
      const exited = await Promise.race([
        run.exited,
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000)),
      ]);
      expect(exited).toEqual({ code: 0, signal: null });
      expect(existsSync(marker)).toBe(false);
    } finally {
      for (const s of sockets) s.destroy();
      broker.close();
    }
  }, 240_000);
});
