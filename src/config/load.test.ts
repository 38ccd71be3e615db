import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadConfigFile, parseConfig, usableSectionsOf } from './load.js';

function tmpFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pt-config-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('configuration', () => {
  it('has an embedded default for everything', () => {
    const c = loadConfig();
    expect(c.terminal.model).toBe('kiosk');
    expect(c.reader.kind).toBe('sim');
    expect(c.gateway.kind).toBe('sandbox');
    expect(c.gateway.timeouts.connectMs).toBe(5000);
    expect(c.offline.policy).toBe('online-only');
  });

  it('overrides defaults from a JSON file and keeps the rest', () => {
    const c = loadConfigFile(tmpFile('c.json', JSON.stringify({ terminal: { model: 'meter' } })));
    expect(c.terminal.model).toBe('meter');
    expect(c.terminal.currency).toBe('GBP');
  });

  it('reads a JSON file that starts with a byte order mark, as some editors save it', () => {
    const c = loadConfigFile(tmpFile('c.json', `\uFEFF${JSON.stringify({ terminal: { model: 'meter' } })}`));
    expect(c.terminal.model).toBe('meter');
  });

  it('refuses a remote gateway at plain http on another host, and takes https or this machine', () => {
    expect(() => parseConfig({ gateway: { kind: 'remote', baseUrl: 'http://api.gateway.example' } })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'gateway.baseUrl' }),
    );
    for (const baseUrl of [
      'https://api.gateway.example',
      'http://127.0.0.1:8080',
      'http://localhost:1',
      'http://[::1]:2',
    ])
      expect(parseConfig({ gateway: { kind: 'remote', baseUrl } }).gateway.baseUrl).toBe(baseUrl);
  });

  it('reads YAML files', () => {
    const c = loadConfigFile(
      tmpFile('c.yaml', 'reader:\n  kind: serial\n  serial:\n    path: /dev/ttyUSB0\n'),
    );
    expect(c.reader.serial.path).toBe('/dev/ttyUSB0');
  });

  it('rejects an unknown key naming the key and the file', () => {
    const file = tmpFile('c.json', JSON.stringify({ gateway: { timeouts: { conectMs: 10 } } }));
    try {
      loadConfigFile(file);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const err = e as ConfigError;
      expect(err.code).toBe('CONFIG_UNKNOWN_KEY');
      expect(err.key).toBe('gateway.timeouts.conectMs');
      expect(err.message).toContain(file);
    }
  });

  it('rejects a bad value naming the key', () => {
    expect(() => parseConfig({ terminal: { currency: 'XYZ' } }, 'f.json')).toThrow(/terminal\.currency/);
    expect(() => parseConfig({ reader: { kind: 'usb' } }, 'f.json')).toThrow(/reader\.kind/);
  });

  it('refuses a printed receipt text that prints as nothing (blanks, control characters) naming its key', () => {
    for (const key of ['merchantName', 'merchantLocation', 'dccProvider', 'dccRateSource'])
      expect(() => parseConfig({ receipts: { [key]: ' \t\u0007 ' } }, 'f.json')).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', key: `receipts.${key}` }),
      );
  });

  it('refuses a serial printer without its path as CONFIG_INVALID naming printer.serial.path', () => {
    expect(() => parseConfig({ printer: { kind: 'serial' } }, 'f.json')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'printer.serial.path' }),
    );
    expect(parseConfig({ printer: { kind: 'serial', serial: { path: '/dev/ttyUSB1' } } }).printer.kind).toBe(
      'serial',
    );
  });

  it('refuses a serial reader without its path as CONFIG_INVALID naming reader.serial.path', () => {
    expect(() => parseConfig({ reader: { kind: 'serial' } }, 'f.json')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'reader.serial.path' }),
    );
    expect(parseConfig({ reader: { kind: 'serial', serial: { path: '/dev/ttyUSB0' } } }).reader.kind).toBe(
      'serial',
    );
  });

  it('rejects a time zone Intl does not know as CONFIG_INVALID naming terminal.timezone', () => {
    // Accepted as a string, "Europe/Londn" used to start the terminal and throw a RangeError on the first START.
    for (const timezone of ['Europe/Londn', '']) {
      expect(() => parseConfig({ terminal: { timezone } }, 'f.json')).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', key: 'terminal.timezone' }),
      );
    }
    expect(parseConfig({ terminal: { timezone: 'Europe/Berlin' } }).terminal.timezone).toBe('Europe/Berlin');
    expect(parseConfig({ terminal: { timezone: 'UTC' } }).terminal.timezone).toBe('UTC');
  });

  it('rejects a terminal.locale the terminal has no catalogue for as CONFIG_INVALID naming the key', () => {
    // Any two characters used to be accepted, and the screens then fell back to en_GB without a word.
    for (const locale of ['de-DR', 'xx', 'en', 'fr-CA', 'de_DE_x', '']) {
      let error: unknown;
      try {
        parseConfig({ terminal: { locale } }, 'f.json');
      } catch (e) {
        error = e;
      }
      expect(error, locale).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'terminal.locale', file: 'f.json' });
      expect((error as Error).message).toContain('en-GB');
    }
    for (const locale of ['de-DE', 'de_DE', 'ar-AE', 'en-US'])
      expect(parseConfig({ terminal: { locale } }).terminal.locale).toBe(locale);
    expect(loadConfig().terminal.locale).toBe('en-GB');
  });

  it('takes links.hostedPageHosts as host names, `*.` domains and bracketed IPv6, with a port, in lower case', () => {
    expect(parseConfig({}).links.hostedPageHosts).toBeUndefined();
    expect(
      parseConfig({
        links: {
          hostedPageHosts: [
            'Pay.Gateway.example',
            '*.links.example',
            'pages.example:8443',
            '[::1]:9000',
            'xn--bcher-kva.example',
          ],
        },
      }).links.hostedPageHosts,
    ).toEqual([
      'pay.gateway.example',
      '*.links.example',
      'pages.example:8443',
      '[::1]:9000',
      'xn--bcher-kva.example',
    ]);
  });

  it('rejects a links.hostedPageHosts entry that is no host, a URL, or a wildcard wider than a domain, naming the key', () => {
    for (const entry of [
      '',
      'https://pay.example',
      'pay.example/pay',
      'user@pay.example',
      '*',
      '*.com',
      'pay.*.example',
      '**.example.com',
      'pay..example',
      '-pay.example',
      'pay.example.',
      'pay.example:0',
      'pay.example:65536',
      'pay.example:080',
      'pay.example:',
      'bücher.example',
      '*.[::1]',
      '[nothost]',
    ]) {
      let error: unknown;
      try {
        parseConfig({ links: { hostedPageHosts: [entry] } }, 'f.json');
      } catch (e) {
        error = e;
      }
      expect(error, entry).toBeInstanceOf(ConfigError);
      expect(error, entry).toMatchObject({
        code: 'CONFIG_INVALID',
        key: 'links.hostedPageHosts.0',
        file: 'f.json',
      });
    }
    // An empty list would refuse every link.
    expect(() => parseConfig({ links: { hostedPageHosts: [] } })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'links.hostedPageHosts' }),
    );
  });

  it('bounds offline.maxCount at 1000 stored payments, naming the key', () => {
    expect(parseConfig({ offline: { maxCount: 1000 } }).offline.maxCount).toBe(1000);
    expect(parseConfig({ offline: { maxCount: 0 } }).offline.maxCount).toBe(0);
    for (const maxCount of [1001, 1e9, Number.MAX_SAFE_INTEGER])
      expect(() => parseConfig({ offline: { maxCount } }, 'f.json'), String(maxCount)).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', key: 'offline.maxCount' }),
      );
  });

  it('bounds offline.maxAgeHours at seven days, naming the key', () => {
    expect(parseConfig({ offline: { maxAgeHours: 168 } }).offline.maxAgeHours).toBe(168);
    expect(parseConfig({ offline: { maxAgeHours: 0.5 } }).offline.maxAgeHours).toBe(0.5);
    for (const maxAgeHours of [168.5, 720, 1e9])
      expect(() => parseConfig({ offline: { maxAgeHours } }, 'f.json'), String(maxAgeHours)).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', key: 'offline.maxAgeHours' }),
      );
  });

  it('refuses a meter capture window shorter than the longest stay, naming the key', () => {
    // A paid stay that outlasts the window would have its hold reversed before the end captures the fee.
    expect(
      parseConfig({ tariff: { maxStayMinutes: 240, captureWindowMinutes: 240 } }).tariff.captureWindowMinutes,
    ).toBe(240);
    expect(() =>
      parseConfig({ tariff: { maxStayMinutes: 300, captureWindowMinutes: 240 } }, 'f.json'),
    ).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', key: 'tariff.captureWindowMinutes' }));
  });

  it('has the meter pre-authorize the maximum stay unless the tariff says chosen', () => {
    expect(loadConfig().tariff.meterAuthorization).toBe('maximum');
    expect(
      parseConfig({ tariff: { meterAuthorization: 'chosen' } }, 'f.json').tariff.meterAuthorization,
    ).toBe('chosen');
    expect(() => parseConfig({ tariff: { meterAuthorization: 'duration' } }, 'f.json')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'tariff.meterAuthorization' }),
    );
  });

  it('keeps one stay per card at a tap-and-go gate unless the tariff allows one card for several vehicles', () => {
    expect(loadConfig().tariff.tapAndGoOneStayPerCard).toBe(true);
    expect(
      parseConfig({ tariff: { tapAndGoOneStayPerCard: false } }, 'f.json').tariff.tapAndGoOneStayPerCard,
    ).toBe(false);
    expect(() => parseConfig({ tariff: { tapAndGoOneStayPerCard: 'no' } }, 'f.json')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'tariff.tapAndGoOneStayPerCard' }),
    );
  });

  it('reports unreadable and malformed files as ConfigError', () => {
    expect(() => loadConfigFile('/nonexistent/config.json')).toThrow(ConfigError);
    expect(() => loadConfigFile(tmpFile('bad.json', '{ nope'))).toThrow(/CONFIG|not valid/);
  });

  it('refuses an empty file (YAML or JSON null) instead of running on the embedded sandbox defaults', () => {
    for (const [name, text] of [
      ['empty.yml', ''],
      ['comments.yaml', '# nothing yet\n'],
      ['null.json', 'null'],
    ] as const) {
      const file = tmpFile(name, text);
      expect(() => loadConfigFile(file)).toThrow(`${file}: the configuration file is empty`);
      expect(() => loadConfigFile(file)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', file }));
    }
  });

  it('refuses a path that is no regular file (a FIFO would block the start forever) and a huge file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-config-'));
    const fifo = join(dir, 'config.json');
    execFileSync('mkfifo', [fifo]);
    expect(() => loadConfigFile(fifo)).toThrow(/not a regular file/);
    expect(() => loadConfigFile(fifo)).toThrow(
      expect.objectContaining({ code: 'CONFIG_UNREADABLE', file: fifo }),
    );
    expect(() => loadConfigFile(dir)).toThrow(
      expect.objectContaining({ code: 'CONFIG_UNREADABLE', file: dir }),
    );
    const huge = tmpFile('huge.json', `{"terminal":{"id":"PT000001"}}${' '.repeat(5 * 1024 * 1024)}`);
    expect(() => loadConfigFile(huge)).toThrow(/too large/);
    expect(() => loadConfigFile(huge)).toThrow(
      expect.objectContaining({ code: 'CONFIG_UNREADABLE', file: huge }),
    );
  });
});

describe('usableSectionsOf', () => {
  it('keeps the sections valid on their own, with their defaults, and leaves out the refused one', () => {
    const file = tmpFile(
      'refused.yml',
      'terminal: { id: PT000009, locale: fr-FR }\nbridge: { port: 8123 }\nreader: { kind: sim, colour: blue }\n',
    );
    expect(() => loadConfigFile(file)).toThrow(ConfigError);
    const usable = usableSectionsOf(file);
    expect(usable.terminal).toMatchObject({ id: 'PT000009', locale: 'fr-FR', model: 'kiosk' });
    expect(usable.bridge).toEqual({ port: 8123 });
    expect(usable.reader).toBeUndefined();
    // A section the file leaves out is its default; an optional one left out is absent.
    expect(usable.log).toMatchObject({ level: 'info' });
    expect(usable.fleet).toBeUndefined();
  });

  it('gives nothing for a file that cannot be read or parsed', () => {
    expect(usableSectionsOf(tmpFile('broken.json', '{"terminal":'))).toEqual({});
    expect(usableSectionsOf(join(tmpdir(), 'pt-no-such-dir', 'missing.json'))).toEqual({});
  });
});
