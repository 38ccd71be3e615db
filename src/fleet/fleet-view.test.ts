import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';

/** A broker client that connects at once and delivers what a test emits. */
class FakeClient extends EventEmitter {
  connected = true;
  subscribeAsync(): Promise<unknown[]> {
    return Promise.resolve([]);
  }
  /** What `publishAsync` returns: resolved (the broker's PUBACK) unless a test holds it. */
  puback: Promise<unknown> = Promise.resolve();
  publishAsync(): Promise<unknown> {
    return this.puback;
  }
  end(): void {
    this.connected = false;
  }
}
let fake = new FakeClient();
vi.mock('./connection.js', () => ({
  connectBroker: () => {
    fake = new FakeClient();
    setImmediate(() => fake.emit('connect'));
    return { client: fake, backoff: { stop: () => undefined } };
  },
}));
const { FleetView } = await import('./fleet-view.js');

/** A heartbeat as the terminal sends it. */
function heartbeat(terminalId: string): Record<string, unknown> {
  return {
    terminalId,
    at: new Date().toISOString(),
    intervalSeconds: 60,
    appVersion: '0.1.0',
    model: 'kiosk',
    inService: true,
    customerSession: false,
    reader: { kind: 'sim', health: 'ready' },
    gateway: { online: true, clockSkewSeconds: 0 },
    offline: { depth: 0, totals: [], oldestAgeSeconds: null, declinedAfterForward: 0 },
    openAuthorizations: 0,
    journal: { unknown: 0, inFlight: 0 },
    diskFreeMegabytes: 4096,
  };
}

describe("the operator's view of the fleet", () => {
  it('lists every terminal though one of them publishes a heartbeat that is not one', async () => {
    // Whoever may write a terminal's heartbeat (that terminal's broker user) publishes it retained: a heartbeat the
    // view could not read threw on every listing, and `fleet status` and `fleet watch` failed for the whole fleet.
    const view = await FleetView.connect(
      { url: 'mqtts://broker.invalid', reconnectMaxSeconds: 1 },
      'parking',
    );
    fake.emit('message', 'parking/PT000001/status', Buffer.from('online'));
    fake.emit('message', 'parking/PT000001/heartbeat', Buffer.from(JSON.stringify(heartbeat('PT000001'))));
    const odd = [
      '{}',
      '[]',
      '"text"',
      JSON.stringify({ ...heartbeat('PT000002'), offline: null }),
      JSON.stringify({ ...heartbeat('PT000002'), gateway: 'down' }),
      JSON.stringify({ ...heartbeat('PT000002'), reader: { kind: 'sim', health: '\u001b[2J' } }),
      JSON.stringify({ ...heartbeat('PT000002'), appVersion: '\u001b]0;owned\u0007' }),
    ];
    for (const payload of odd) {
      fake.emit('message', 'parking/PT000002/heartbeat', Buffer.from(payload));
      const rows = view.rows();
      expect(
        rows.find((r) => r.terminalId === 'PT000001'),
        payload,
      ).toMatchObject({
        online: true,
        queueDepth: 0,
        alerts: [],
      });
      // The odd one is listed without a heartbeat: what the operator should look at.
      expect(
        rows.find((r) => r.terminalId === 'PT000002'),
        payload,
      ).toMatchObject({
        heartbeatAgeSeconds: null,
        alerts: ['no-heartbeat'],
      });
    }
    view.close();
  });

  it('lists a terminal whose configuration is refused as out of service with its reason, not as broken data', async () => {
    const view = await FleetView.connect(
      { url: 'mqtts://broker.invalid', reconnectMaxSeconds: 1 },
      'parking',
    );
    const reason =
      'configuration refused (CONFIG_INVALID offline.policy): /etc/pt.json: "offline.policy": invalid';
    // What src/host/refused-fleet.ts sends: no journal, reader or gateway behind it, so the counts are not known.
    const refused = {
      ...heartbeat('PT000003'),
      inService: false,
      outOfService: reason,
      reader: { kind: 'none', health: 'none' },
      gateway: { online: null, clockSkewSeconds: null },
      offline: { depth: null, totals: [], oldestAgeSeconds: null, declinedAfterForward: null },
      openAuthorizations: null,
      journal: { unknown: null, inFlight: null },
      diskFreeMegabytes: null,
    };
    fake.emit('message', 'parking/PT000003/status', Buffer.from('online'));
    fake.emit('message', 'parking/PT000003/heartbeat', Buffer.from(JSON.stringify(refused)));
    expect(view.rows()).toEqual([
      expect.objectContaining({
        terminalId: 'PT000003',
        online: true,
        queueDepth: null,
        alerts: ['out-of-service'],
        heartbeat: expect.objectContaining({ outOfService: reason }) as unknown,
      }),
    ]);
    const { fleetTable } = await import('../cli/commands/fleet.js');
    const table = fleetTable(view.rows());
    expect(table).toContain('REASON');
    expect(table).toContain(reason);
    // Its gateway is not known (no gateway client behind it): no host named.
    expect(table).toMatch(/out-of-service +- +configuration refused \(CONFIG_INVALID offline\.policy\)/);
    // The reason came from the broker: no terminal escape reaches the operator's screen.
    fake.emit(
      'message',
      'parking/PT000003/heartbeat',
      Buffer.from(JSON.stringify({ ...refused, outOfService: 'bad\u001b[2J\nline' })),
    );
    expect(fleetTable(view.rows())).toContain('bad?[2J?line');
    view.close();
  });

  it('names in the table the host a terminal could not connect to, beside its gateway alert', async () => {
    // The heartbeat's gateway.unreachableHost: with the OAuth token host down the gateway itself answers, and an
    // operator reading only `gateway-unreachable` would look at the wrong host.
    const view = await FleetView.connect(
      { url: 'mqtts://broker.invalid', reconnectMaxSeconds: 1 },
      'parking',
    );
    const gateways: Record<string, Record<string, unknown>> = {
      PT000011: { online: true, clockSkewSeconds: 0 },
      PT000012: {
        online: false,
        problem: 'unreachable',
        lastError: 'GW_CONNECTION',
        unreachableHost: 'OAuth token host auth.example:443',
        clockSkewSeconds: 0,
      },
      // A terminal older than the field.
      PT000013: { online: false, problem: 'unreachable', clockSkewSeconds: 0 },
      PT000014: { online: false, problem: 'credentials', lastError: 'GW_AUTH', clockSkewSeconds: 0 },
      PT000015: { online: null, clockSkewSeconds: null },
      // Whoever may write the heartbeat topic wrote this one: no terminal escape reaches the operator's screen.
      PT000016: { online: false, unreachableHost: 'gateway \u001b[2Jgw.example:443', clockSkewSeconds: 0 },
    };
    for (const [id, gateway] of Object.entries(gateways)) {
      fake.emit('message', `parking/${id}/status`, Buffer.from('online'));
      fake.emit(
        'message',
        `parking/${id}/heartbeat`,
        Buffer.from(JSON.stringify({ ...heartbeat(id), gateway })),
      );
    }
    const { fleetTable } = await import('../cli/commands/fleet.js');
    const lines = fleetTable(view.rows()).split('\n');
    const cells = (id: string): string[] => (lines.find((l) => l.startsWith(id)) ?? '').split(/ {2,}/);
    expect(lines.find((l) => l.startsWith('PT000012'))).toContain('OAuth token host auth.example:443');
    expect(lines[0]?.split(/ {2,}/)).toEqual([
      'TERMINAL',
      'ONLINE',
      'HEARTBEAT',
      'QUEUE',
      'VERSION',
      'ALERTS',
      'UNREACHABLE',
      'REASON',
    ]);
    expect(cells('PT000011').slice(5, 7)).toEqual(['-', '-']);
    expect(cells('PT000012').slice(5, 7)).toEqual([
      'gateway-unreachable',
      'OAuth token host auth.example:443',
    ]);
    expect(cells('PT000013').slice(5, 7)).toEqual(['gateway-unreachable', '-']);
    expect(cells('PT000014').slice(5, 7)).toEqual(['gateway-credentials', '-']);
    expect(cells('PT000015').slice(5, 7)).toEqual(['-', '-']);
    expect(cells('PT000016')[6]).toBe('gateway ?[2Jgw.example:443');
    // Read at 80-120 columns: the host widens the table only as far as it needs.
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(120);
    view.close();
  });

  it('sends a command and gives up at its timeout though the broker never acknowledges it', async () => {
    // A publish the broker does not take (the connection dropped, or closed by the broker over the topic): MQTT.js
    // sends it again at each reconnection and never settles it. `fleet send --timeout 2` waited for ever.
    const view = await FleetView.connect(
      { url: 'mqtts://broker.invalid', reconnectMaxSeconds: 1 },
      'parking',
    );
    fake.puback = new Promise(() => undefined);
    const command = {
      v: 1 as const,
      id: 'cmd-1',
      terminalId: 'PT000001',
      command: 'flush-queue',
      args: {},
      issuedAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      signature: { alg: 'hmac-sha256' as const, value: 'AAAA' },
    };
    await expect(view.send(command, 10)).resolves.toBeUndefined();
    // A reply that comes before the broker's acknowledgement is the answer all the same.
    const answered = view.send({ ...command, id: 'cmd-2' }, 60_000);
    await new Promise((r) => setImmediate(r));
    fake.emit(
      'message',
      'parking/PT000001/replies',
      Buffer.from(
        JSON.stringify({ v: 1, id: 'cmd-2', terminalId: 'PT000001', ok: true, code: 'OK', at: '' }),
      ),
    );
    await expect(answered).resolves.toMatchObject({ id: 'cmd-2', code: 'OK' });
    view.close();
  });

  it('prints a terminal id from the broker without the terminal escapes it may hold', async () => {
    // The id is the topic's level: whoever may publish under the prefix chose it, as they chose the heartbeat's texts.
    const view = await FleetView.connect(
      { url: 'mqtts://broker.invalid', reconnectMaxSeconds: 1 },
      'parking',
    );
    fake.emit('message', 'parking/\u001b]0;owned\u0007\u001b[2J/status', Buffer.from('online'));
    const { fleetTable } = await import('../cli/commands/fleet.js');
    const table = fleetTable(view.rows());
    // Line breaks only where the table puts them.
    // eslint-disable-next-line no-control-regex
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(table).toContain('?]0;owned??[2J');
    view.close();
  });
});
