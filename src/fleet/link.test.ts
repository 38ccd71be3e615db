import { generateKeyPairSync } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../log/index.js';
import { signCommand, type FleetKey } from './command-signature.js';
import type { FleetConfig } from './connection.js';
import type { CommandReply } from './messages.js';
import type { FleetTerminal } from './terminal.js';
import { FleetCommandLog, openJournal } from '../journal/index.js';

/** A broker client that records what the link publishes, and delivers what a test emits. */
class FakeClient extends EventEmitter {
  connected = true;
  disconnected = false;
  published: Array<{ topic: string; payload: string }> = [];
  publish(topic: string, payload: string, _opts: unknown, cb?: (err?: Error) => void): void {
    this.published.push({ topic, payload });
    cb?.();
  }
  subscribe(_topic: string, _opts: unknown, cb?: (err?: Error) => void): void {
    cb?.();
  }
  /** MQTT.js passes every message its packet: a test that gives none delivers a live (unretained) one. */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' && args.length === 2) args.push({ cmd: 'publish', retain: false });
    return super.emit(event, ...args);
  }
  end(_force?: boolean, _opts?: unknown, cb?: () => void): void {
    this.connected = false;
    this.disconnected = true;
    cb?.();
  }
}
const fake = new FakeClient();
vi.mock('./connection.js', () => ({
  connectBroker: () => ({ client: fake, backoff: { stop: () => undefined } }),
}));
const { FleetLink } = await import('./link.js');

const KEY = {
  kind: 'hmac-sha256' as const,
  secret: Buffer.from('a shared fleet key of at least thirty-two characters'),
};
/** The fleet's Ed25519 pair: the operator signs with the private key, the terminal verifies with the public one. */
const PAIR = generateKeyPairSync('ed25519');
const OPERATOR_KEY: FleetKey = { kind: 'ed25519', publicKey: PAIR.publicKey, privateKey: PAIR.privateKey };
const TERMINAL_KEY: FleetKey = { kind: 'ed25519', publicKey: PAIR.publicKey };

/** `name` with `args` for `terminalId`, valid for a minute from now, signed with `key`. */
function signed(
  id: string,
  name: string,
  args: Record<string, unknown>,
  key: FleetKey,
  terminalId = 'PT000001',
): string {
  const now = Date.now();
  return JSON.stringify(
    signCommand(
      {
        v: 1,
        id,
        terminalId,
        command: name,
        args,
        issuedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 60_000).toISOString(),
      },
      key,
    ),
  );
}

/** A terminal of these tests (PT000001, no heartbeat, no events) with its command handling. */
function testTerminal(
  commands: Pick<FleetTerminal, 'claimCommand' | 'finishCommand' | 'execute' | 'audit'> &
    Partial<Pick<FleetTerminal, 'beginCommand'>>,
): FleetTerminal {
  return {
    terminalId: 'PT000001',
    health: () => {
      throw new Error('no heartbeat in these tests');
    },
    onEvent: () => () => undefined,
    // The start of each command recorded (the tests of the journal's own store give theirs).
    beginCommand: () => ({ begun: true }),
    ...commands,
  };
}

/** The fleet link of these tests, on the fake client, for `terminal`, verifying with `key`. */
function startLink(terminal: FleetTerminal, key: FleetKey) {
  return FleetLink.start({
    config: { topicPrefix: 'parking', heartbeatSeconds: 60, commandMaxAgeSeconds: 600 } as FleetConfig,
    terminal,
    logger: silentLogger(),
    key,
  });
}

/**
 * Delivers `payload` on the terminal's commands topic; resolves with the replies published and the audit records,
 * and whether the command was executed.
 */
async function deliver(
  payload: string,
  key: FleetKey = KEY,
): Promise<{
  replies: Array<{ ok: boolean; code: string; id: string | null }>;
  audits: unknown[];
  executed: number;
}> {
  fake.published = [];
  // The links of earlier deliveries are closed, but the fake client keeps their listeners.
  fake.removeAllListeners('message');
  const audits: unknown[] = [];
  let executed = 0;
  const terminal = testTerminal({
    claimCommand: () => ({ fresh: true }),
    finishCommand: () => undefined,
    execute: () => {
      executed += 1;
      return Promise.resolve({ ok: true });
    },
    audit: (entry) => void audits.push(entry),
  });
  const link = startLink(terminal, key);
  fake.emit('message', 'parking/PT000001/commands', Buffer.from(payload));
  await link.close();
  const replies = fake.published
    .filter((p) => p.topic.endsWith('/replies'))
    .map((r) => JSON.parse(r.payload) as { ok: boolean; code: string; id: string | null });
  return { replies, audits, executed };
}

/** An unsigned `out-of-service` command whose notice is `depth` arrays nested in one another. */
function nestedCommand(depth: number): string {
  const now = new Date();
  return (
    `{"v":1,"id":"stranger-1","terminalId":"PT000001","command":"out-of-service",` +
    `"args":{"notice":${'['.repeat(depth)}${']'.repeat(depth)}},` +
    `"issuedAt":"${now.toISOString()}","expiresAt":"${new Date(now.getTime() + 60_000).toISOString()}",` +
    `"signature":{"alg":"hmac-sha256","value":"AAAA"}}`
  );
}

describe('the fleet link refuses bad commands with a reply and an audit record', () => {
  it('an unsigned command nested a little: BAD_SIGNATURE', async () => {
    const { replies, audits, executed } = await deliver(nestedCommand(2));
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_SIGNATURE', id: 'stranger-1' }]);
    expect(audits).toMatchObject([{ result: 'refused', code: 'BAD_SIGNATURE' }]);
    expect(executed).toBe(0);
  });

  it('a command nested 50,000 deep (100 KB, under the size limit): BAD_COMMAND, before the signature check', async () => {
    // The signature's canonical JSON is recursive: it used to overflow the stack, and the link only logged it.
    const payload = nestedCommand(50_000);
    expect(payload.length).toBeLessThan(256 * 1024);
    const { replies, audits, executed } = await deliver(payload);
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_COMMAND', id: 'stranger-1' }]);
    expect(audits).toMatchObject([{ result: 'refused', code: 'BAD_COMMAND' }]);
    expect(executed).toBe(0);
  });

  it('a check that throws is a refusal too: BAD_COMMAND, replied and audited, never executed', async () => {
    // A key the HMAC cannot use makes the signature check throw (TypeError from node:crypto).
    const broken = { kind: 'hmac-sha256', secret: 42 } as unknown as FleetKey;
    const { replies, audits, executed } = await deliver(nestedCommand(1), broken);
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_COMMAND', id: 'stranger-1' }]);
    expect(audits).toMatchObject([{ result: 'refused', code: 'BAD_COMMAND' }]);
    expect(executed).toBe(0);
  });

  it("answers with the command's UUID as it came, though its digits read like a card number", async () => {
    // "50-8536-341381880247" is a Luhn-valid run of 18 digits: redacted, the reply answered no command.
    const id = '88e4d409-0f54-4a50-8536-341381880247';
    const { replies } = await deliver(nestedCommand(1).replace('"stranger-1"', `"${id}"`));
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_SIGNATURE', id }]);
    // An id of another form that carries a card number is still redacted.
    const pan = await deliver(nestedCommand(1).replace('"stranger-1"', '"4111111111111111"'));
    expect(pan.replies).toMatchObject([{ ok: false, code: 'BAD_SIGNATURE', id: '[REDACTED]' }]);
  });

  it('a command larger than a command may be: BAD_COMMAND that says so, not "not JSON"', async () => {
    // What a broker without MQTT 5 delivers whole (fleet.mqttVersion 4): a signed command, only too large.
    const command = signed('big-2', 'out-of-service', { notice: 'x'.repeat(300 * 1024) }, KEY);
    const { replies, executed } = await deliver(command);
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_COMMAND', id: null }]);
    expect((replies[0] as { message?: string }).message).toBe(
      `${Buffer.byteLength(command)} bytes: larger than a command may be (262144 bytes)`,
    );
    expect(executed).toBe(0);
  });

  it('not JSON, or not a command: BAD_COMMAND', async () => {
    for (const payload of ['{ nope', '[]', 'null', '{"v":1}']) {
      const { replies, audits } = await deliver(payload);
      expect(replies, payload).toMatchObject([{ ok: false, code: 'BAD_COMMAND' }]);
      expect(audits, payload).toMatchObject([{ result: 'refused', code: 'BAD_COMMAND' }]);
    }
  });
});

describe('a command that can change where money or card data goes', () => {
  it('apply-config under the shared HMAC key: refused NEEDS_ASYMMETRIC_KEY, answered and audited, never executed', async () => {
    const config = { gateway: { kind: 'remote', baseUrl: 'https://elsewhere.example' } };
    const { replies, audits, executed } = await deliver(signed('apply-h', 'apply-config', { config }, KEY));
    expect(replies).toMatchObject([{ ok: false, code: 'NEEDS_ASYMMETRIC_KEY', id: 'apply-h' }]);
    expect(audits).toMatchObject([
      { id: 'apply-h', command: 'apply-config', result: 'refused', code: 'NEEDS_ASYMMETRIC_KEY' },
    ]);
    expect(executed).toBe(0);
  });

  it('apply-config verified with the Ed25519 public key is executed; other commands still run under HMAC', async () => {
    const apply = await deliver(
      signed('apply-e', 'apply-config', { config: {} }, OPERATOR_KEY),
      TERMINAL_KEY,
    );
    expect(apply.replies).toMatchObject([{ ok: true, code: 'OK', id: 'apply-e' }]);
    expect(apply.executed).toBe(1);
    const flush = await deliver(signed('flush-h', 'flush-queue', {}, KEY));
    expect(flush.replies).toMatchObject([{ ok: true, code: 'OK', id: 'flush-h' }]);
    expect(flush.executed).toBe(1);
  });
});

describe('a retained message on the commands topic', () => {
  it('is never executed: refused RETAINED once per id, and each later delivery only logged', async () => {
    // A broker sends the retained message again at every subscription, so at each reconnection: each one was a
    // refusal (DUPLICATE, EXPIRED, BAD_SIGNATURE …) with its durable audit record, for as long as it stayed retained.
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    let executed = 0;
    const audits: Array<Record<string, unknown>> = [];
    const claimed = new Map<string, Record<string, unknown> | undefined>();
    const terminal = testTerminal({
      claimCommand: ({ id }) => {
        if (claimed.has(id)) return { fresh: false, reply: claimed.get(id) };
        claimed.set(id, undefined);
        return { fresh: true };
      },
      finishCommand: (id, reply) => void claimed.set(id, reply),
      execute: () => {
        executed += 1;
        return Promise.resolve({ ok: true });
      },
      audit: (entry) => void audits.push(entry),
    });
    const link = startLink(terminal, KEY);
    const retained = { cmd: 'publish', retain: true };
    const command = Buffer.from(signed('kept-1', 'out-of-service', {}, KEY));
    const unsignedJunk = Buffer.from(nestedCommand(1).replace('"stranger-1"', '"junk-1"'));
    // Three subscriptions: each time the broker sends both retained messages.
    for (let i = 0; i < 3; i++) {
      fake.emit('message', 'parking/PT000001/commands', command, retained);
      fake.emit('message', 'parking/PT000001/commands', unsignedJunk, retained);
    }
    // The same id published later without retain: its id was refused, it is not executed either.
    fake.emit('message', 'parking/PT000001/commands', command, { cmd: 'publish', retain: false });
    await link.close(10_000);
    const replies = fake.published
      .filter((p) => p.topic.endsWith('/replies'))
      .map((r) => JSON.parse(r.payload) as { ok: boolean; code: string; id: string | null });
    expect(executed).toBe(0);
    expect(replies).toMatchObject([
      { ok: false, code: 'RETAINED', id: 'kept-1' },
      { ok: false, code: 'DUPLICATE', id: 'kept-1', first: { ok: false, code: 'RETAINED' } },
    ]);
    expect(audits).toMatchObject([
      { id: 'kept-1', result: 'refused', code: 'RETAINED' },
      { id: 'kept-1', result: 'refused', code: 'DUPLICATE' },
    ]);
    expect(claimed.get('kept-1')).toMatchObject({ ok: false, code: 'RETAINED' });
  });
});

describe('the fleet link of a terminal that carries out no command (its configuration refused)', () => {
  it('answers a verified command with its refusal, claiming and executing nothing; a retained one is only logged', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    let claims = 0;
    let executed = 0;
    const audits: Array<Record<string, unknown>> = [];
    const terminal: FleetTerminal = {
      ...testTerminal({
        claimCommand: () => {
          claims += 1;
          return { fresh: true };
        },
        finishCommand: () => undefined,
        execute: () => {
          executed += 1;
          return Promise.resolve({ ok: true });
        },
        audit: (entry) => void audits.push(entry),
      }),
      commandsRefused: () => ({ code: 'CONFIG_REFUSED', message: 'out of service: configuration refused' }),
    };
    const link = startLink(terminal, KEY);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed('r-1', 'flush-queue', {}, KEY)));
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed('r-2', 'restart', {}, KEY)), {
      cmd: 'publish',
      retain: true,
    });
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(nestedCommand(1)));
    await link.close(10_000);
    const replies = fake.published
      .filter((p) => p.topic.endsWith('/replies'))
      .map((r) => JSON.parse(r.payload) as Record<string, unknown>);
    expect(replies).toMatchObject([
      { id: 'r-1', command: 'flush-queue', ok: false, code: 'CONFIG_REFUSED' },
      { id: 'stranger-1', ok: false, code: 'BAD_SIGNATURE' },
    ]);
    expect(audits).toMatchObject([
      { id: 'r-1', result: 'refused', code: 'CONFIG_REFUSED' },
      { id: 'stranger-1', result: 'refused', code: 'BAD_SIGNATURE' },
    ]);
    expect(claims).toBe(0);
    expect(executed).toBe(0);
  });
});

describe('the fleet link under a command that takes long', () => {
  it('closes within its time limit while a command is still running (a recovery waiting for the gateway)', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    let started = (): void => undefined;
    const running = new Promise<void>((r) => (started = r));
    const terminal = testTerminal({
      claimCommand: () => ({ fresh: true }),
      finishCommand: () => undefined,
      // rerun-recovery while the gateway is down: recovery retries until the gateway answers, or the host stops it.
      execute: () => {
        started();
        return new Promise(() => undefined);
      },
      audit: () => undefined,
    });
    const link = startLink(terminal, KEY);
    const command = signed('rerun-1', 'rerun-recovery', {}, KEY);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(command));
    await running;
    // The terminal's stop closes the fleet link before the host: a close that waited for the command would wait for
    // the host's stop, which waits for it.
    const closed = await Promise.race([
      link.close(200).then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 5_000)),
    ]);
    // Closed while the command still runs (it never ends).
    expect(closed).toBe(true);
  });
});

describe('what the fleet link keeps of a reply', () => {
  it('keeps the reply as published, without card data, for a redelivery to repeat', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    const kept: Array<Record<string, unknown>> = [];
    const terminal = testTerminal({
      claimCommand: () => ({ fresh: true }),
      finishCommand: (_id, reply) => void kept.push(reply),
      // The schema's error names an unknown key as it came: here a card number pasted into the configuration.
      execute: () =>
        Promise.resolve({
          ok: false,
          code: 'CONFIG_INVALID',
          message: 'the configuration of the command: unknown key "4111111111111111"',
        }),
      audit: () => undefined,
    });
    const link = startLink(terminal, TERMINAL_KEY);
    const command = signed('apply-1', 'apply-config', { config: { '4111111111111111': 1 } }, OPERATOR_KEY);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(command));
    await link.close();
    const published = fake.published.filter((p) => p.topic.endsWith('/replies'));
    expect(published).toHaveLength(1);
    expect(published[0]!.payload).not.toContain('4111111111111111');
    // finishCommand writes it to the journal database (fleet_commands): no card data in SQLite in clear (rule 4).
    expect(kept).toHaveLength(1);
    expect(JSON.stringify(kept[0])).not.toContain('4111111111111111');
    expect(kept[0]).toMatchObject({ ok: false, code: 'CONFIG_INVALID' });
  });
});

describe('the id a refusal names', () => {
  it('is the command id only when it reads as one: an empty or non-ASCII id is answered and audited as null', async () => {
    // The audit log refuses an empty subject: a refusal audited with the id "" was logged as an audit failure and
    // left no record. Control characters and other text a stranger chose do not reach the audit log or the reply.
    for (const id of ['', '\u001b[2J', 'commande-é', 'a b']) {
      const { replies, audits } = await deliver(JSON.stringify({ v: 1, id }));
      expect(replies, JSON.stringify(id)).toMatchObject([{ ok: false, code: 'BAD_COMMAND', id: null }]);
      expect(audits, JSON.stringify(id)).toMatchObject([
        { id: null, result: 'refused', code: 'BAD_COMMAND' },
      ]);
    }
    // An id of the command's form is named, though the command is not one.
    const { replies } = await deliver(JSON.stringify({ v: 1, id: 'cmd-7' }));
    expect(replies).toMatchObject([{ ok: false, code: 'BAD_COMMAND', id: 'cmd-7' }]);
  });
});

describe('the acknowledgement of a command (PUBACK)', () => {
  it('goes out once its claim or its refusal is recorded, not after it ran; never when the journal refused the write', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    fake.disconnected = false;
    const recorded: string[] = [];
    let journalFull = false;
    const write = (what: string): void => {
      if (journalFull) throw new Error('SQLITE_FULL: database or disk is full');
      recorded.push(what);
    };
    let endRun: (() => void) | undefined;
    const terminal = testTerminal({
      claimCommand: ({ id }) => {
        write(`claim ${id}`);
        return { fresh: true };
      },
      finishCommand: () => undefined,
      execute: () => new Promise((resolve) => (endRun = () => resolve({ ok: true }))),
      audit: (entry) => write(`audit ${entry.id} ${entry.code}`),
    });
    const link = startLink(terminal, KEY);
    // As MQTT.js delivers a QoS 1 message: the 'message' event, then `handleMessage`, whose callback sends the PUBACK
    // (or, given an error, sends none).
    const client = fake as unknown as {
      handleMessage: (packet: object, callback: (err?: Error) => void) => void;
    };
    const acknowledged = (payload: string) =>
      new Promise<{ err: Error | undefined; recorded: string[] }>((resolve) => {
        const packet = { cmd: 'publish', qos: 1, retain: false };
        fake.emit('message', 'parking/PT000001/commands', Buffer.from(payload), packet);
        client.handleMessage(packet, (err) => resolve({ err, recorded: [...recorded] }));
      });
    expect(await acknowledged(signed('ack-1', 'flush-queue', {}, KEY))).toEqual({
      err: undefined,
      recorded: ['claim ack-1'],
    });
    // A stranger's command: acknowledged once its refusal is audited, so that the broker does not deliver it again.
    expect(await acknowledged(nestedCommand(1))).toEqual({
      err: undefined,
      recorded: ['claim ack-1', 'audit stranger-1 BAD_SIGNATURE'],
    });
    journalFull = true;
    expect((await acknowledged(signed('ack-2', 'flush-queue', {}, KEY))).err).toBeInstanceOf(Error);
    expect((await acknowledged(nestedCommand(1))).err).toBeInstanceOf(Error);
    journalFull = false;
    endRun?.();
    await link.close();
    expect(recorded).toEqual(['claim ack-1', 'audit stranger-1 BAD_SIGNATURE', 'audit ack-1 OK']);
  });
});

describe('a command claimed while another runs', () => {
  it('is refused EXPIRED, not begun, when its turn comes past its signed expiry', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    fake.disconnected = false;
    let clock = Date.now();
    const ran: string[] = [];
    const claimed: string[] = [];
    const audits: Array<{ id: string | null; code: string }> = [];
    let endRun: (() => void) | undefined;
    const terminal = testTerminal({
      claimCommand: ({ id }) => {
        claimed.push(id);
        return { fresh: true };
      },
      finishCommand: () => undefined,
      execute: (command) => {
        ran.push(command);
        return new Promise((resolve) => (endRun = () => resolve({ ok: true })));
      },
      audit: (entry) => void audits.push(entry),
    });
    const link = FleetLink.start({
      config: { topicPrefix: 'parking', heartbeatSeconds: 60, commandMaxAgeSeconds: 600 } as FleetConfig,
      terminal,
      logger: silentLogger(),
      key: KEY,
      now: () => new Date(clock),
    });
    fake.emit(
      'message',
      'parking/PT000001/commands',
      Buffer.from(signed('long-1', 'rerun-recovery', {}, KEY)),
    );
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed('next-1', 'flush-queue', {}, KEY)));
    while (claimed.length < 2) await new Promise((r) => setImmediate(r));
    // Both claimed by now; the first runs two minutes, past the second's expiry (a minute after it was signed).
    clock += 120_000;
    endRun?.();
    await link.close();
    expect(ran).toEqual(['rerun-recovery']);
    expect(audits.map((a) => [a.id, a.code])).toEqual([
      ['long-1', 'OK'],
      ['next-1', 'EXPIRED'],
    ]);
  });
});

describe('a redelivery of a command whose end was never recorded', () => {
  it('is answered DUPLICATE without saying it was carried out: it began, and the terminal stopped during it', async () => {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    fake.disconnected = false;
    let executed = 0;
    const terminal = testTerminal({
      // Claimed by the run before (state `executing`, no reply): that run stopped in the middle of it.
      claimCommand: () => ({ fresh: false }),
      finishCommand: () => undefined,
      execute: () => {
        executed += 1;
        return Promise.resolve({ ok: true });
      },
      audit: () => undefined,
    });
    const link = startLink(terminal, KEY);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed('begun-1', 'flush-queue', {}, KEY)));
    await link.close();
    const replies = fake.published
      .filter((p) => p.topic.endsWith('/replies'))
      .map((r) => JSON.parse(r.payload) as { code: string; message: string; first?: unknown });
    expect(executed).toBe(0);
    expect(replies).toMatchObject([{ code: 'DUPLICATE' }]);
    expect(replies[0]!.first).toBeUndefined();
    // The operator must not read it as applied: whether it finished is not known.
    expect(replies[0]!.message).not.toMatch(/was executed/);
    expect(replies[0]!.message).toMatch(/not recorded/);
  });
});

describe('a journal that cannot record what a command needs before it runs', () => {
  it.each([
    {
      // The journal's disk sync failed: it takes no more writes (the terminal goes out of service).
      what: 'its id',
      id: 'flush-1',
      journal: {
        claimCommand: () => {
          throw new Error('the journal takes no more writes');
        },
      },
    },
    {
      what: 'its start',
      id: 'start-1',
      journal: {
        claimCommand: () => ({ fresh: true }) as const,
        beginCommand: () => {
          throw new Error('SQLITE_IOERR: disk I/O error');
        },
      },
    },
  ])(
    'answers FAILED and does not execute the command when it cannot record $what',
    async ({ id, journal }) => {
      fake.published = [];
      fake.removeAllListeners('message');
      fake.connected = true;
      let executed = 0;
      const audits: unknown[] = [];
      const terminal = testTerminal({
        ...journal,
        finishCommand: () => undefined,
        execute: () => {
          executed += 1;
          return Promise.resolve({ ok: true });
        },
        audit: (entry) => void audits.push(entry),
      });
      const link = startLink(terminal, KEY);
      fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed(id, 'flush-queue', {}, KEY)));
      await link.close();
      const replies = fake.published
        .filter((p) => p.topic.endsWith('/replies'))
        .map(
          (r) => JSON.parse(r.payload) as { ok: boolean; code: string; id: string | null; message: string },
        );
      // `fleet send` waits for a reply: without one it says NO_REPLY, as though the terminal were away.
      expect(replies).toMatchObject([{ ok: false, code: 'FAILED', id }]);
      expect(replies[0]!.message).toMatch(/not executed/);
      expect(audits).toMatchObject([{ id, result: 'failed', code: 'FAILED' }]);
      expect(executed).toBe(0);
    },
  );
});

describe('a burst of commands', () => {
  it('is handled one command per turn of the event loop: the screen, the reader and payments keep running', async () => {
    // MQTT.js emits every message of a socket read in one go. Handled in one run of microtasks, a burst of refusals
    // (each an audit record synced to disk) held the event loop until the last one: no I/O, no timer in between.
    // Signed commands for another terminal: refused WRONG_TERMINAL, each one answered (a refusal of a correctly signed
    // command is never dropped by the limit on strangers' refusals).
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    const terminal = testTerminal({
      claimCommand: () => ({ fresh: true }),
      finishCommand: () => undefined,
      execute: () => Promise.resolve({ ok: true }),
      audit: () => undefined,
    });
    const answered = (): number =>
      fake.published.filter(
        (p) => p.topic.endsWith('/replies') && p.payload.includes('"code":"WRONG_TERMINAL"'),
      ).length;
    const link = startLink(terminal, KEY);
    const burst = 200;
    for (let i = 0; i < burst; i++)
      fake.emit(
        'message',
        'parking/PT000001/commands',
        Buffer.from(signed(`elsewhere-${i}`, 'in-service', {}, KEY, 'PT000002')),
      );
    const seenByATimer = await new Promise<number>((r) => setTimeout(() => r(answered()), 0));
    expect(seenByATimer).toBeLessThan(burst);
    await link.close(10_000);
    expect(answered()).toBe(burst);
  });
});

/** A link of these tests on the fake client whose terminal answers with `execute`; what it published and kept. */
function recordingLink(execute: FleetTerminal['execute'], key: FleetKey = KEY) {
  fake.published = [];
  fake.removeAllListeners('message');
  fake.connected = true;
  const kept: Array<Record<string, unknown>> = [];
  const audits: Array<{ id: string | null; code: string; result: string }> = [];
  const terminal = testTerminal({
    claimCommand: () => ({ fresh: true }),
    finishCommand: (_id, reply) => void kept.push(reply),
    execute,
    audit: (entry) => void audits.push(entry),
  });
  const link = startLink(terminal, key);
  const replies = () =>
    fake.published
      .filter((p) => p.topic.endsWith('/replies'))
      .map((p) => ({ ...(JSON.parse(p.payload) as CommandReply), bytes: Buffer.byteLength(p.payload) }));
  return { link, kept, audits, replies };
}

describe('the size of a reply', () => {
  it('is capped, published and kept: a long message cut with a marker, a result too large left out and said so', async () => {
    const { link, kept, replies } = recordingLink(
      (name) =>
        Promise.resolve(
          name === 'apply-config'
            ? { ok: false, code: 'CONFIG_INVALID', message: `unknown keys: ${'"k", '.repeat(200_000)}` }
            : {
                ok: true,
                message: 'many records',
                result: { records: Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x'.repeat(50) })) },
              },
        ),
      TERMINAL_KEY,
    );
    fake.emit(
      'message',
      'parking/PT000001/commands',
      Buffer.from(signed('big-1', 'apply-config', { config: {} }, OPERATOR_KEY)),
    );
    fake.emit(
      'message',
      'parking/PT000001/commands',
      Buffer.from(signed('big-2', 'audit-log', {}, OPERATOR_KEY)),
    );
    await link.close(10_000);
    const [message, result] = replies();
    expect(message).toMatchObject({ id: 'big-1', ok: false, code: 'CONFIG_INVALID' });
    expect(message!.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(message!.message).toMatch(/… \[truncated: \d+ characters in all\]$/);
    expect(result).toMatchObject({ id: 'big-2', ok: true, code: 'OK', truncated: { omitted: ['result'] } });
    expect(result!.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(result).not.toHaveProperty('result');
    // What fleet_commands.reply keeps (a redelivery repeats it under `first`) is the reply as published.
    expect(kept).toHaveLength(2);
    for (const reply of kept) expect(JSON.stringify(reply).length).toBeLessThanOrEqual(64 * 1024);
    expect(kept[0]!.message).toBe(message!.message);
    expect(kept[1]).toMatchObject({ truncated: { omitted: ['result'] } });
  });
});

describe('refusals to strangers', () => {
  it('are limited in rate, summed up once; a correctly signed command is always answered', async () => {
    // Each refusal is a reply on the broker and an audit record synced to disk: a stranger flooding the commands topic
    // made the terminal publish and write one per message.
    let executed = 0;
    const { link, audits, replies } = recordingLink(() => {
      executed += 1;
      return Promise.resolve({ ok: true });
    });
    const flood = 1_000;
    for (let i = 0; i < flood; i++) {
      fake.emit('message', 'parking/PT000001/commands', Buffer.from(i % 2 ? '{ nope' : nestedCommand(1)));
      if (i === flood / 2)
        fake.emit(
          'message',
          'parking/PT000001/commands',
          Buffer.from(signed('flush-1', 'flush-queue', {}, KEY)),
        );
    }
    fake.emit(
      'message',
      'parking/PT000001/commands',
      Buffer.from(signed('other-1', 'in-service', {}, KEY, 'PT000002')),
    );
    await link.close(30_000);
    const all = replies();
    expect(all.filter((r) => r.id === 'flush-1')).toMatchObject([{ ok: true, code: 'OK' }]);
    expect(all.filter((r) => r.id === 'other-1')).toMatchObject([{ ok: false, code: 'WRONG_TERMINAL' }]);
    expect(executed).toBe(1);
    const answered = all.filter((r) => r.code === 'BAD_COMMAND' || r.code === 'BAD_SIGNATURE');
    expect(answered.length).toBeLessThanOrEqual(30);
    const summaries = all.filter((r) => r.code === 'RATE_LIMITED');
    expect(summaries).toHaveLength(1);
    const dropped = summaries[0]!.result as { dropped: number; codes: Record<string, number> };
    expect(dropped.dropped + answered.length).toBe(flood);
    expect(dropped.codes.BAD_COMMAND! + dropped.codes.BAD_SIGNATURE!).toBe(dropped.dropped);
    expect(audits.filter((a) => a.code === 'RATE_LIMITED')).toHaveLength(1);
    expect(audits.length).toBeLessThanOrEqual(answered.length + 3);
  });
});

describe('replays of a signed command', () => {
  it('are each answered, and audited at most at the limited rate; the rest summed up in one record', async () => {
    // A captured command published again and again (or one signed for another terminal, or expired): each refusal was
    // an audit record synced to disk in the journal database, at whatever rate the broker let a publisher send.
    const executed: string[] = [];
    const claimed = new Map<string, { ok: boolean; code: string; at: string }>();
    const audits: Array<{
      id: string | null;
      code: string;
      unaudited?: { count: number; codes: Record<string, number> };
    }> = [];
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    const link = startLink(
      testTerminal({
        claimCommand: ({ id }) => {
          const reply = claimed.get(id);
          if (claimed.has(id)) return reply ? { fresh: false, reply } : { fresh: false };
          claimed.set(id, undefined as never);
          return { fresh: true };
        },
        finishCommand: (id, reply) =>
          void claimed.set(id, reply as { ok: boolean; code: string; at: string }),
        execute: (name) => {
          executed.push(name);
          return Promise.resolve({ ok: true });
        },
        audit: (entry) => void audits.push(entry),
      }),
      KEY,
    );
    const command = signed('flush-1', 'flush-queue', {}, KEY);
    const elsewhere = signed('other-1', 'in-service', {}, KEY, 'PT000002');
    const replays = 600;
    for (let i = 0; i < replays; i++) {
      fake.emit('message', 'parking/PT000001/commands', Buffer.from(command));
      fake.emit('message', 'parking/PT000001/commands', Buffer.from(elsewhere));
    }
    await link.close(60_000);
    const all = fake.published
      .filter((p) => p.topic.endsWith('/replies'))
      .map((p) => JSON.parse(p.payload) as CommandReply);
    expect(executed).toEqual(['flush-queue']);
    // A command whose signature verifies is always answered.
    expect(all.filter((r) => r.id === 'flush-1').map((r) => r.code)).toEqual([
      'OK',
      ...Array<string>(replays - 1).fill('DUPLICATE'),
    ]);
    expect(all.filter((r) => r.id === 'other-1' && r.code === 'WRONG_TERMINAL')).toHaveLength(replays);
    // Audited: the command itself, at most a burst of the refusals, and one summary of those not audited.
    const refusals = audits.filter((a) => a.code === 'DUPLICATE' || a.code === 'WRONG_TERMINAL');
    expect(refusals.length).toBeLessThanOrEqual(40);
    const summaries = audits.filter((a) => a.code === 'RATE_LIMITED');
    expect(summaries).toHaveLength(1);
    const unaudited = summaries[0]!.unaudited!;
    expect(unaudited.count + refusals.length).toBe(2 * replays - 1);
    expect(unaudited.codes.DUPLICATE! + unaudited.codes.WRONG_TERMINAL!).toBe(unaudited.count);
    const summary = all.find((r) => r.code === 'RATE_LIMITED');
    expect(summary?.result).toMatchObject({ dropped: 0, unaudited: { count: unaudited.count } });
  });
});

describe('a command that comes while the link closes', () => {
  /** A terminal whose `rerun-recovery` runs until `finish`, and the link of these tests on it. */
  function stoppingTerminal() {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    fake.disconnected = false;
    const executed: string[] = [];
    const audits: unknown[] = [];
    const finished: string[] = [];
    let started = (): void => undefined;
    const running = new Promise<void>((r) => (started = r));
    let finish = (): void => undefined;
    const terminal = testTerminal({
      claimCommand: () => ({ fresh: true }),
      finishCommand: (id, reply) => void finished.push(`${id} ${String(reply.code)}`),
      execute: (name) => {
        executed.push(name);
        if (name !== 'rerun-recovery') return Promise.resolve({ ok: true });
        started();
        return new Promise((r) => (finish = () => r({ ok: true })));
      },
      audit: (entry) => void audits.push(entry),
    });
    const link = startLink(terminal, KEY);
    const deliver = (id: string, name: string): void =>
      void fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed(id, name, {}, KEY)));
    /** What the link published, in order: `<id> <code>` for a reply, `<leaf> <payload>` for the rest. */
    const sent = (): string[] =>
      fake.published.map((p) => {
        if (!p.topic.endsWith('/replies')) return `${p.topic.split('/').pop()} ${p.payload}`;
        const reply = JSON.parse(p.payload) as { id: string; code: string };
        return `${reply.id} ${reply.code}`;
      });
    return { link, deliver, running, finish: () => finish(), executed, audits, finished, sent };
  }

  /** Lets whatever the link left behind have its turn. */
  const settled = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };

  it('is not carried out on a terminal that stops: refused NOT_ALLOWED, answered before the link says offline', async () => {
    const t = stoppingTerminal();
    // A recovery runs; a flush waits behind it.
    t.deliver('running-1', 'rerun-recovery');
    await t.running;
    t.deliver('queued-1', 'flush-queue');
    // The terminal stops (a restart, a signal): its fleet link closes first, then the host.
    const closing = t.link.close(60_000);
    t.deliver('late-1', 'out-of-service');
    t.finish();
    await closing;
    await settled();
    // What came before the close had its time to run; what came after, none.
    expect(t.executed).toEqual(['rerun-recovery', 'flush-queue']);
    expect(t.sent()).toEqual(['running-1 OK', 'queued-1 OK', 'late-1 NOT_ALLOWED', 'status offline']);
    expect(t.audits).toMatchObject([
      { id: 'running-1', code: 'OK' },
      { id: 'queued-1', code: 'OK' },
      { id: 'late-1', result: 'refused', code: 'NOT_ALLOWED' },
    ]);
    // Its id claimed with the refusal: a redelivery after the restart is answered DUPLICATE, never carried out.
    expect(t.finished).toEqual(['running-1 OK', 'queued-1 OK', 'late-1 NOT_ALLOWED']);
  });

  it('still waiting its turn when the close stopped waiting, it never begins', async () => {
    const t = stoppingTerminal();
    t.deliver('running-2', 'rerun-recovery');
    await t.running;
    t.deliver('queued-2', 'flush-queue');
    await t.link.close(10);
    // The recovery ends after the link closed, as the host stops it.
    t.finish();
    await settled();
    expect(t.executed).toEqual(['rerun-recovery']);
    expect(t.audits).toMatchObject([
      { id: 'running-2', code: 'OK' },
      { id: 'queued-2', result: 'refused', code: 'NOT_ALLOWED' },
    ]);
  });
});

describe("a command claimed in the journal and never begun (the journal's fleet_commands)", () => {
  /** A terminal whose command ids are the real journal store's, `rerun-recovery` running until the host stops. */
  function journalTerminal(log: FleetCommandLog, options: { claimFails?: (id: string) => boolean } = {}) {
    const executed: string[] = [];
    const audits: Array<{ id: string | null; code: string }> = [];
    let started = (): void => undefined;
    const running = new Promise<void>((r) => (started = r));
    const terminal = testTerminal({
      claimCommand: (input) => {
        const claim = log.claim(input);
        // Its id written, then the write reported failed (a sync that failed after the commit reached the disk).
        if (options.claimFails?.(input.id)) throw new Error('SQLITE_IOERR: disk I/O error');
        return claim;
      },
      beginCommand: (id) => log.begin(id),
      finishCommand: (id, reply) => log.finish(id, reply),
      execute: (name) => {
        executed.push(name);
        if (name !== 'rerun-recovery') return Promise.resolve({ ok: true });
        started();
        return new Promise(() => undefined);
      },
      audit: (entry) => void audits.push(entry),
    });
    return { terminal, executed, audits, running };
  }

  /** A fresh link on the fake client for `terminal`; `replies()`: `<id> <code>` of what it answered since. */
  function linkOn(terminal: FleetTerminal) {
    fake.published = [];
    fake.removeAllListeners('message');
    fake.connected = true;
    fake.disconnected = false;
    const link = startLink(terminal, KEY);
    const replies = () =>
      fake.published
        .filter((p) => p.topic.endsWith('/replies'))
        .map((p) => JSON.parse(p.payload) as CommandReply);
    return { link, replies };
  }

  const settled = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };

  it('is carried out when delivered again after the terminal stopped; one begun and not ended is not', async () => {
    const journal = openJournal(':memory:');
    const log = new FleetCommandLog(journal);
    const running = signed('long-1', 'rerun-recovery', {}, KEY);
    const queued = signed('queued-1', 'flush-queue', {}, KEY);
    // The terminal's first run: a recovery runs (the gateway down), a flush waits its turn behind it; the terminal
    // stops, and its stop does not wait for the recovery to end.
    const before = journalTerminal(log);
    const first = linkOn(before.terminal);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(running));
    await before.running;
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(queued));
    while (!log.has('queued-1')) await new Promise((r) => setImmediate(r));
    await first.link.close(10);
    await settled();
    expect(before.executed).toEqual(['rerun-recovery']);
    // The next run: the broker delivers both again.
    const after = journalTerminal(log);
    const second = linkOn(after.terminal);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(queued));
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(running));
    await second.link.close();
    // The flush never began: it runs now. The recovery began: whether it took effect is not known, never run again.
    expect(after.executed).toEqual(['flush-queue']);
    const answers = second.replies();
    expect(answers.map((r) => [r.id, r.code])).toEqual([
      ['queued-1', 'OK'],
      ['long-1', 'DUPLICATE'],
    ]);
    expect(answers[1]!.message).toMatch(/whether it took effect is not known/);
    journal.close();
  });

  it('whose claim reported a failure after its id was written: answered FAILED, carried out when delivered again', async () => {
    const journal = openJournal(':memory:');
    const log = new FleetCommandLog(journal);
    const half = signed('half-1', 'flush-queue', {}, KEY);
    let failing = true;
    const before = journalTerminal(log, { claimFails: () => failing });
    const first = linkOn(before.terminal);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(half));
    await first.link.close();
    expect(first.replies()).toMatchObject([{ id: 'half-1', code: 'FAILED' }]);
    expect(first.replies()[0]!.message).toMatch(/not executed/);
    expect(log.has('half-1')).toBe(true);
    // Not acknowledged: the broker delivers it again at the next connection, the journal writable again.
    failing = false;
    const after = journalTerminal(log);
    const second = linkOn(after.terminal);
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(half));
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(half));
    await second.link.close();
    expect(before.executed).toEqual([]);
    expect(after.executed).toEqual(['flush-queue']);
    expect(second.replies()).toMatchObject([
      { id: 'half-1', code: 'OK' },
      { id: 'half-1', code: 'DUPLICATE', first: { code: 'OK' } },
    ]);
    journal.close();
  });

  it('delivered again while it waits its turn in this run: carried out once, the second delivery DUPLICATE', async () => {
    const journal = openJournal(':memory:');
    const log = new FleetCommandLog(journal);
    const { terminal, executed } = journalTerminal(log);
    const { link, replies } = linkOn(terminal);
    let endRun = (): void => undefined;
    // A flush waits behind a command that runs; the broker delivers the flush again meanwhile (its PUBACK lost).
    const queued = signed('queued-2', 'flush-queue', {}, KEY);
    terminal.execute = (name) => {
      executed.push(name);
      if (name !== 'audit-log') return Promise.resolve({ ok: true });
      return new Promise((r) => (endRun = () => r({ ok: true })));
    };
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(signed('slow-2', 'audit-log', {}, KEY)));
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(queued));
    fake.emit('message', 'parking/PT000001/commands', Buffer.from(queued));
    while (!log.has('queued-2')) await new Promise((r) => setImmediate(r));
    await settled();
    endRun();
    await link.close();
    expect(executed).toEqual(['audit-log', 'flush-queue']);
    expect(replies().map((r) => [r.id, r.code])).toEqual([
      ['slow-2', 'OK'],
      ['queued-2', 'OK'],
      ['queued-2', 'DUPLICATE'],
    ]);
    journal.close();
  });
});
