import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';

/** A broker client that records what the link publishes, and delivers what a test emits. */
class FakeClient extends EventEmitter {
  connected = false;
  disconnected = false;
  published: Array<{ topic: string; payload: string; retain: boolean }> = [];
  publish(topic: string, payload: string, opts: { retain?: boolean }, cb?: (err?: Error) => void): void {
    this.published.push({ topic, payload, retain: opts.retain ?? false });
    cb?.();
  }
  subscribe(_topic: string, _opts: unknown, cb?: (err?: Error) => void): void {
    cb?.();
  }
  end(_force?: boolean, _opts?: unknown, cb?: () => void): void {
    this.connected = false;
    this.disconnected = true;
    cb?.();
  }
}
let fake = new FakeClient();
const connections: Array<Record<string, unknown>> = [];
vi.mock('../fleet/connection.js', () => ({
  connectBroker: (_settings: unknown, extra: Record<string, unknown>) => {
    fake = new FakeClient();
    connections.push(extra);
    return { client: fake, backoff: { stop: () => undefined } };
  },
}));
const { startRefusedFleetLink } = await import('./refused-fleet.js');
const { alertsOf, heartbeatSchema, signCommand, readFleetKey } = await import('../fleet/index.js');

const dir = mkdtempSync(join(tmpdir(), 'pt-refused-fleet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'fleet.hmac'), 'a shared fleet key of at least thirty-two characters', {
  mode: 0o600,
});
const KEY = readFleetKey(join(dir, 'fleet.hmac'));
const REASON =
  'configuration refused (CONFIG_UNKNOWN_KEY tariff.colour): /etc/pt.json: unknown key "tariff.colour"';

const sections = parseConfig({
  terminal: { id: 'PT000009' },
  fleet: { url: 'mqtt://broker.invalid', heartbeatSeconds: 30, commandKeyFile: 'fleet.hmac' },
});

function start(fleet = sections.fleet) {
  const link = startRefusedFleetLink({
    fleet,
    terminal: sections.terminal,
    reason: REASON,
    cwd: dir,
    logger: silentLogger(),
  });
  if (!link) throw new Error('no link');
  fake.connected = true;
  fake.emit('connect');
  return link;
}

const on = (leaf: string) => fake.published.filter((p) => p.topic === `parking/PT000009/${leaf}`);

function command(name: string, key = KEY): string {
  const now = Date.now();
  return JSON.stringify(
    signCommand(
      {
        v: 1,
        id: randomUUID(),
        terminalId: 'PT000009',
        command: name,
        args: {},
        issuedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 60_000).toISOString(),
      },
      key,
    ),
  );
}

/** Delivers `payload` on the commands topic (handled in order; the link's close waits for what it is handling). */
function deliver(payload: string, retain = false): void {
  fake.emit('message', 'parking/PT000009/commands', Buffer.from(payload), { cmd: 'publish', retain });
}

describe('the fleet link of a terminal whose configuration is refused', () => {
  it("connects as the terminal's own link: its client id, its topics, the last will offline", async () => {
    const link = start();
    expect(connections.at(-1)).toMatchObject({
      clientId: 'parking-terminal-PT000009',
      clean: false,
      will: { topic: 'parking/PT000009/status', payload: Buffer.from('offline'), retain: true },
    });
    expect(on('status')).toEqual([{ topic: 'parking/PT000009/status', payload: 'online', retain: true }]);
    await link.close();
  });

  it('heartbeats out of service with the reason, the unknown as null, read by the fleet as out of service only', async () => {
    const link = start();
    const [beat] = on('heartbeat').map((p) => JSON.parse(p.payload) as Record<string, unknown>);
    expect(beat).toMatchObject({
      terminalId: 'PT000009',
      intervalSeconds: 30,
      inService: false,
      outOfService: REASON,
      reader: { kind: 'none', health: 'none' },
      gateway: { online: null, clockSkewSeconds: null },
      offline: { depth: null, declinedAfterForward: null },
      openAuthorizations: null,
      journal: { unknown: null, inFlight: null },
      diskFreeMegabytes: null,
    });
    const read = heartbeatSchema.safeParse(beat);
    expect(read.success).toBe(true);
    expect(alertsOf({ online: true, heartbeat: read.data as never, ageSeconds: 0 })).toEqual([
      'out-of-service',
    ]);
    await link.close();
  });

  it('tells the fleet it is out of service once, and again when the refusal changes', async () => {
    const link = start();
    link.terminal.refused(REASON);
    link.terminal.refused('configuration refused (CONFIG_SYNTAX): /etc/pt.json: not valid JSON');
    const events = on('events').map((p) => JSON.parse(p.payload) as Record<string, unknown>);
    expect(events).toEqual([
      expect.objectContaining({ terminalId: 'PT000009', type: 'out-of-service', reason: REASON }),
      expect.objectContaining({
        type: 'out-of-service',
        reason: 'configuration refused (CONFIG_SYNTAX): /etc/pt.json: not valid JSON',
      }),
    ]);
    link.terminal.refused('configuration refused (CONFIG_SYNTAX): /etc/pt.json: not valid JSON');
    expect(on('events')).toHaveLength(2);
    await link.close();
  });

  it('answers a signed command CONFIG_REFUSED, executes and claims nothing; a wrong signature BAD_SIGNATURE', async () => {
    const link = start();
    deliver(command('flush-queue'));
    deliver(command('in-service', { kind: 'hmac-sha256', secret: Buffer.from('x'.repeat(40)) }));
    // A retained command is only logged: answering it would answer again at every reconnection.
    deliver(command('restart'), true);
    await link.close();
    const replies = on('replies').map((p) => JSON.parse(p.payload) as Record<string, unknown>);
    expect(replies).toEqual([
      expect.objectContaining({ command: 'flush-queue', ok: false, code: 'CONFIG_REFUSED' }),
      expect.objectContaining({ command: 'in-service', ok: false, code: 'BAD_SIGNATURE' }),
    ]);
    expect(replies[0]!.message).toContain(REASON);
  });

  it('takes no command without a usable fleet key (COMMANDS_DISABLED), and has no link without a fleet section', async () => {
    const link = start({ ...sections.fleet!, commandKeyFile: join(dir, 'missing.key') });
    deliver(command('flush-queue'));
    await link.close();
    expect(on('replies').map((p) => (JSON.parse(p.payload) as { code: string }).code)).toEqual([
      'COMMANDS_DISABLED',
    ]);
    const before = connections.length;
    expect(
      startRefusedFleetLink({
        fleet: undefined,
        terminal: sections.terminal,
        reason: REASON,
        cwd: dir,
        logger: silentLogger(),
      }),
    ).toBeUndefined();
    expect(connections).toHaveLength(before);
  });

  it('closes cleanly: offline published, then the connection ended (no last will)', async () => {
    const link = start();
    await link.close();
    expect(on('status').map((p) => p.payload)).toEqual(['online', 'offline']);
    expect(fake.disconnected).toBe(true);
  });
});
