import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FleetLink, type FleetConfig } from '../../src/fleet/index.js';
import { SimulatedFleetTerminal } from '../../src/fleet/simulated-terminal.js';
import { silentLogger } from '../../src/log/index.js';
import { MOSQUITTO, startMosquitto, type Broker } from '../../bench/mosquitto.js';
import { brokerSettingsFor, password, writeFleetKeyPair } from './fixture.js';

/**
 * `fleet send` to a terminal that is away: the command waits at the broker in the terminal's session and is carried
 * out when the terminal comes back, if before its expiry. NO_REPLY must say so, or the operator sends it again.
 */

const suite = MOSQUITTO || process.env.CI ? describe : describe.skip;
const AWAY = 'PTAWAY1';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

suite('a command to a terminal that is away', () => {
  let broker: Broker;
  let dir: string;

  beforeAll(async () => {
    broker = await startMosquitto({
      prefix: 'parking',
      terminals: [{ name: AWAY, password: password(AWAY) }],
      operators: [{ name: 'operator', password: password('operator') }],
    });
    dir = await mkdtemp(join(tmpdir(), 'pt-fleet-away-'));
  });
  afterAll(async () => {
    await broker?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is answered NO_REPLY saying until when the terminal may still carry it out, which it then does', async () => {
    const { publicFile } = await writeFleetKeyPair(dir);
    const operator = await brokerSettingsFor(broker, 'operator');
    const operatorConfig = join(dir, 'operator.json');
    await writeFile(
      operatorConfig,
      JSON.stringify({
        fleet: {
          url: operator.url,
          caFile: operator.caFile,
          usernameFile: operator.usernameFile,
          passwordFile: operator.passwordFile,
          commandKeyFile: join(dir, 'fleet-private.pem'),
        },
      }),
    );
    const config: FleetConfig = {
      ...(await brokerSettingsFor(broker, AWAY)),
      topicPrefix: 'parking',
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      commandKeyFile: publicFile,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const sim = new SimulatedFleetTerminal(AWAY);
    // The terminal has its session at the broker, then goes away (a power cut, a network down).
    const first = FleetLink.start({ config, terminal: sim, logger: silentLogger() });
    await first.whenConnected();
    await first.close();

    const out = new Capture();
    const code = await main(
      ['fleet', 'send', AWAY, 'out-of-service', '--config', operatorConfig, '--timeout', '1'],
      { stdout: out, stderr: new Capture(), signal: new AbortController().signal, cwd: dir },
    );
    expect(code).toBe(1);
    const { error } = JSON.parse(out.text) as { error: { code: string; message: string; expiresAt: string } };
    expect(error.code).toBe('NO_REPLY');
    expect(error.message).toContain(`may still carry it out until ${error.expiresAt}`);

    // Back before the expiry: the command that got no reply is carried out.
    const back = FleetLink.start({ config, terminal: sim, logger: silentLogger() });
    try {
      await back.whenConnected();
      const deadline = Date.now() + 15_000;
      while (sim.executed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(sim.executed.map((e) => e.command)).toEqual(['out-of-service']);
    } finally {
      await back.close();
    }
  }, 30_000);
});
