import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from './load.js';
import {
  assertConfiguredSecretFiles,
  configuredSecretFiles,
  withSecretFilesResolved,
} from './secret-file.js';

describe('fleet configuration', () => {
  it('is absent unless configured, with defaults once a broker is named', () => {
    expect(parseConfig({}).fleet).toBeUndefined();
    expect(parseConfig({ fleet: { url: 'mqtts://broker.example:8883' } }).fleet).toMatchObject({
      topicPrefix: 'parking',
      heartbeatSeconds: 60,
      reconnectMaxSeconds: 60,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    });
  });

  it('rejects an unknown key, a URL of another scheme, a bad prefix or window, naming the key', () => {
    expect(() => parseConfig({ fleet: { url: 'mqtt://b', color: 'red' } })).toThrow(
      /unknown key "fleet.color"/,
    );
    expect(() => parseConfig({ fleet: { url: 'http://b' } })).toThrow(/"fleet.url"/);
    expect(() => parseConfig({ fleet: { url: 'mqtt://b', topicPrefix: 'a/+/b' } })).toThrow(
      /fleet.topicPrefix/,
    );
    expect(() => parseConfig({ fleet: { url: 'mqtt://b', maintenanceWindow: { start: '25:00' } } })).toThrow(
      /fleet.maintenanceWindow.start/,
    );
    // MQTT 5, or 3.1.1 (protocol level 4) for a broker without MQTT 5: nothing else.
    expect(parseConfig({ fleet: { url: 'mqtt://b', mqttVersion: 4 } }).fleet?.mqttVersion).toBe(4);
    for (const mqttVersion of [3, '5', 5.1])
      expect(() => parseConfig({ fleet: { url: 'mqtt://b', mqttVersion } })).toThrow(/fleet.mqttVersion/);
  });

  it('checks its secret files like every secret file and resolves its paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-fleet-config-'));
    writeFileSync(join(dir, 'fleet.password'), 'secret', { mode: 0o644 });
    const config = parseConfig({
      fleet: {
        url: 'mqtts://b',
        caFile: 'ca.pem',
        passwordFile: 'fleet.password',
        commandKeyFile: 'fleet.key',
      },
    });
    expect(configuredSecretFiles(config, dir).map((f) => f.key)).toEqual([
      'fleet.passwordFile',
      'fleet.commandKeyFile',
    ]);
    expect(() => assertConfiguredSecretFiles(config, dir)).toThrow(/group or others/);
    expect(withSecretFilesResolved(config, dir).fleet?.caFile).toBe(join(dir, 'ca.pem'));
  });
});
