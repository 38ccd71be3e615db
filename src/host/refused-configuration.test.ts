import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../config/index.js';
import { SecretFileError } from '../config/secret-file.js';
import { silentLogger } from '../log/index.js';
import type { CustomerSnapshot } from './api.js';
import {
  checkStartConfiguration,
  RefusedConfigurationScreen,
  refusalOf,
  refusalText,
  waitOutOfService,
  type ConfigurationRefusal,
} from './refused-configuration.js';
import type { ServiceNotifier } from './systemd-notify.js';

/** Bounds each wait for the watch and the bridge on a busy machine; measures no speed. */
const POLL = { timeout: 15_000 };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-refused-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function refusedBy(file: string): ConfigurationRefusal {
  try {
    loadConfigFile(file);
  } catch (e) {
    const refusal = refusalOf(e);
    if (refusal) return refusal;
    throw e;
  }
  throw new Error(`${file} was not refused`);
}

describe('refusalOf', () => {
  it('reads the code, key and file of a configuration file refused, never a value of it', () => {
    const file = join(dir, 'terminal.json');
    writeFileSync(file, JSON.stringify({ gateway: { merchantId: 'secret-looking-value', kind: 'nowhere' } }));
    const refusal = refusedBy(file);
    expect(refusal).toMatchObject({ code: 'CONFIG_INVALID', key: 'gateway.kind', file });
    expect(refusalText(refusal)).toMatch(
      /^out of service: configuration refused \(CONFIG_INVALID gateway\.kind\): /,
    );
    expect(refusalText(refusal)).not.toContain('nowhere');
  });

  it('says where a file that does not parse is broken, never the text the parser quotes of it', () => {
    const yaml = join(dir, 'terminal.yml');
    writeFileSync(yaml, 'fleet:\n  url: mqtts://fleet:S3cretPass@broker.example:8883\n bad: : x\n');
    const json = join(dir, 'terminal.json');
    writeFileSync(json, '{"fleet": {"url": "mqtts://fleet:S3cretPass@broker.example:8883"}, S3cretPass}');
    const bare = join(dir, 'bare.json');
    writeFileSync(bare, '{"fleet": S3cretPass}');
    for (const file of [yaml, json, bare]) {
      const refusal = refusedBy(file);
      expect(refusal).toMatchObject({ code: 'CONFIG_SYNTAX', file });
      expect(refusalText(refusal)).not.toContain('S3cretPass');
    }
    expect(refusedBy(yaml).message).toMatch(/line 3, column 1/);
  });

  it('is not a refusal this state waits out for a secret file or any other error', () => {
    expect(
      refusalOf(new SecretFileError('SECRET_FILE_UNREADABLE', 'missing', 'terminal.operatorPinFile', '/x')),
    ).toBe(undefined);
    expect(refusalOf(new Error('boom'))).toBeUndefined();
    expect(refusalOf(new ConfigError('CONFIG_SYNTAX', 'f: not valid JSON', 'f'))).toMatchObject({
      code: 'CONFIG_SYNTAX',
    });
  });
});

describe('checkStartConfiguration', () => {
  it('refuses a simulated reader whose card is not a virtual card as CONFIG_INVALID naming reader.sim.card', () => {
    const file = join(dir, 'terminal.json');
    writeFileSync(file, JSON.stringify({ reader: { sim: { card: 'gold' } } }));
    expect(() => checkStartConfiguration(file, dir)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'reader.sim.card', file }),
    );
    writeFileSync(file, JSON.stringify({ reader: { kind: 'hid', sim: { card: 'gold' } } }));
    expect(checkStartConfiguration(file, dir).reader.kind).toBe('hid');
  });
});

describe('RefusedConfigurationScreen', () => {
  it('shows the out-of-service screen in the kiosk language, and in the language the customer chooses', async () => {
    const screen = new RefusedConfigurationScreen('fr-FR', 'kiosk');
    const first = await screen.snapshot();
    expect(first.ok && first.value.customer).toMatchObject({
      screen: 'out-of-service',
      title: 'Hors service',
    });
    const pushed: CustomerSnapshot[] = [];
    screen.subscribe((s) => pushed.push(s));
    const chosen = await screen.send({ type: 'SET_LANGUAGE', locale: 'de-DE' });
    expect(chosen.ok && chosen.value.customer.title).toBe('Außer Betrieb');
    expect(pushed.map((s) => s.locale)).toEqual(['de_DE']);
    expect(await screen.send({ type: 'SET_LANGUAGE', locale: 'xx-XX' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_LOCALE' },
    });
  });

  it('refuses every payment event and operator mode OUT_OF_SERVICE, with the customer text of that refusal', async () => {
    const screen = new RefusedConfigurationScreen('en-GB', 'meter');
    for (const event of [{ type: 'START' }, { type: 'CONFIRM' }, { type: 'TAP_ENTRY' }] as const) {
      const r = await screen.send(event);
      expect(r.ok ? 'ok' : r.error.code, event.type).toBe('OUT_OF_SERVICE');
      expect(r.ok ? undefined : r.error.customerText).toBeTruthy();
    }
    expect(await screen.operator()).toMatchObject({ ok: false, error: { code: 'OUT_OF_SERVICE' } });
  });
});

describe('waitOutOfService', () => {
  function staticDir(): string {
    const d = join(dir, 'renderer');
    mkdirSync(d);
    writeFileSync(join(d, 'index.html'), '<!doctype html><title>t</title>');
    return d;
  }
  function recordingNotifier(): ServiceNotifier & { sent: string[][] } {
    const sent: string[][] = [];
    return {
      active: true,
      sent,
      notify: (...assignments: string[]) => {
        sent.push(assignments);
        return Promise.resolve();
      },
    };
  }

  /** The refused state on `file`, what a test does not look at left quiet (no output, a stop never asked). */
  function waitingOn(
    file: string,
    options: Partial<Parameters<typeof waitOutOfService>[0]>,
  ): ReturnType<typeof waitOutOfService> {
    return waitOutOfService({
      configFile: file,
      cwd: dir,
      refusal: refusedBy(file),
      port: 0,
      staticDir: staticDir(),
      signal: new AbortController().signal,
      logger: silentLogger(),
      out: () => undefined,
      ...options,
    });
  }

  it('tells the service manager why, follows a still refused change, and resolves with the corrected configuration', async () => {
    const file = join(dir, 'terminal.json');
    writeFileSync(file, JSON.stringify({ reader: { colour: 'blue' } }));
    const notifier = recordingNotifier();
    const lines: string[] = [];
    const waiting = waitingOn(file, {
      out: (l) => lines.push(l),
      notifier,
      debounceMs: 20,
    });
    const statusOf = (): string[] => notifier.sent.flat().filter((a) => a.startsWith('STATUS='));
    await expect
      .poll(statusOf, POLL)
      .toEqual([expect.stringContaining('configuration refused (CONFIG_UNKNOWN_KEY reader.colour)')]);
    await expect
      .poll(() => lines.join('\n'), POLL)
      .toMatch(/configuration refused.*http:\/\/127\.0\.0\.1:\d+\/\?s=/);
    // Still refused, for another reason: the status says the new one.
    writeFileSync(file, JSON.stringify({ terminal: { model: 'bicycle' } }));
    await expect.poll(() => statusOf().at(-1), POLL).toContain('terminal.model');
    // Corrected, by a rename over the file.
    writeFileSync(join(dir, 'draft.json'), JSON.stringify({ terminal: { model: 'meter' } }));
    renameSync(join(dir, 'draft.json'), file);
    const config = await waiting;
    expect(config?.terminal.model).toBe('meter');
    // Started, not stopped: no STOPPING=1 (READY=1 comes from the start that follows).
    expect(notifier.sent.flat()).not.toContain('STOPPING=1');
  });

  it('says a secret file the corrected configuration names cannot be used, until it can', async () => {
    const file = join(dir, 'terminal.json');
    writeFileSync(file, JSON.stringify({ reader: { colour: 'blue' } }));
    const notifier = recordingNotifier();
    const waiting = waitingOn(file, {
      notifier,
      debounceMs: 20,
    });
    const lastStatus = (): string | undefined =>
      notifier.sent
        .flat()
        .filter((a) => a.startsWith('STATUS='))
        .at(-1);
    await expect.poll(lastStatus, POLL).toContain('CONFIG_UNKNOWN_KEY reader.colour');
    // The file corrected, naming a PIN file that is not there yet: refused for that now, not for the colour.
    writeFileSync(file, JSON.stringify({ terminal: { operatorPinFile: 'operator.pin' } }));
    await expect.poll(lastStatus, POLL).toContain('SECRET_FILE_UNREADABLE terminal.operatorPinFile');
    // The PIN file put in place, private to its owner; the next change of the configuration is read.
    writeFileSync(join(dir, 'operator.pin'), '73914826\n', { mode: 0o600 });
    writeFileSync(file, JSON.stringify({ terminal: { operatorPinFile: './operator.pin' } }));
    expect((await waiting)?.terminal.operatorPinFile).toBe('./operator.pin');
  });

  it('starts on a file written in place in two pieces once it is whole, not on its first piece', async () => {
    const file = join(dir, 'terminal.yml');
    writeFileSync(file, 'reader:\n  colour: blue\n');
    const debounceMs = 100;
    const waiting = waitingOn(file, {
      debounceMs,
    });
    // A first piece that passes the checks on its own (no gateway section: the sandbox gateway's defaults), then,
    // after a pause longer than the debounce (and shorter than two: file-watch.test.ts says why that cannot flake),
    // the rest.
    writeFileSync(file, 'terminal:\n  model: meter\n');
    await new Promise((r) => setTimeout(r, debounceMs * 1.9));
    appendFileSync(file, 'gateway:\n  merchantId: acme-parking\n');
    const config = await waiting;
    expect(config?.terminal.model).toBe('meter');
    expect(config?.gateway.merchantId).toBe('acme-parking');
  });

  it('resolves with nothing when stopped, telling the service manager it is stopping', async () => {
    const file = join(dir, 'terminal.json');
    writeFileSync(file, '{"colour":1}');
    const notifier = recordingNotifier();
    const stop = new AbortController();
    const lines: string[] = [];
    const waiting = waitingOn(file, {
      signal: stop.signal,
      out: (l) => lines.push(l),
      notifier,
    });
    await expect.poll(() => lines.length, POLL).toBe(1);
    stop.abort();
    expect(await waiting).toBeUndefined();
    expect(notifier.sent.flat()).toContain('STOPPING=1');
  });
});
