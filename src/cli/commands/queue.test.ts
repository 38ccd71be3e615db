import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import {
  AuditStore,
  fileKeyProvider,
  openJournal,
  OfflineQueue,
  pendingKeyPath,
  type ForwardOutcome,
} from '../../journal/index.js';
import type Database from 'better-sqlite3';
import { LATEST_VERSION } from '../../journal/migrations/index.js';
import {
  OFFLINE_CARD_COLUMN,
  OFFLINE_OPEN_BY_CARD_INDEX,
} from '../../journal/migrations/offline-card-fingerprints.js';
import {
  holdAsRunningTerminal,
  lockAsRunningTerminal,
  schemaAround,
} from '../../journal/testing/held-journal.js';
import { main } from '../main.js';
import { createOfflineCommand } from './offline.js';
import { createQueueCommand } from './queue.js';
import { capturedIo as io } from '../testing/io.js';

function terminalDir(policy = 'prefer-online') {
  const dir = mkdtempSync(join(tmpdir(), 'queue-cli-'));
  writeFileSync(
    join(dir, 'terminal.json'),
    JSON.stringify({
      journal: { path: 'var/j.db' },
      offline: { policy, keyFile: 'var/offline.key', maxCount: 10 },
    }),
  );
  return dir;
}

/** Stores payments the way the terminal does, in the terminal's own files. */
function storePayments(dir: string, amounts: number[]) {
  const config = loadConfig(join(dir, 'terminal.json'));
  const keyProvider = fileKeyProvider(join(dir, config.offline.keyFile));
  const journal = openJournal(join(dir, config.journal.path));
  const queue = new OfflineQueue(journal, { policy: 'prefer-online', limits: config.offline, keyProvider });
  amounts.forEach((amountMinor, i) =>
    queue.store({
      transactionId: `t${i}`,
      service: 'sale',
      comments: 'Parking Sale',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from('{"trackData":";4111111111111111=2912101?"}'),
      amountMinor,
      currency: 'GBP',
      entryMode: 'contactless',
      fingerprint: `card-${i}`,
    }),
  );
  const status = queue.status();
  journal.close();
  return status;
}

/**
 * A payment still stored and one declined after forwarding, written as a terminal of an older version writes them (by
 * named columns, never the card's fingerprint).
 */
function previousPayments(db: Database.Database, now: number) {
  const insert =
    db.prepare(`INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc,
    amount_minor, currency, entry_mode, masked_pan, state, reason, stored_at)
    VALUES (?, 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', ?, ?, 'GBP', 'contactless', '411111******1111', ?, ?, ?)`);
  insert.run('s1', Buffer.from('sealed'), 1250, 'stored', null, now - 60_000);
  insert.run('d1', null, 300, 'declined', 'EXPIRED_CARD', now - 120_000);
}

/**
 * Journals of older terminals: before the card fingerprint (schema 2), and at the latest version without it (a rewrite
 * that keeps the version).
 */
const OLDER_JOURNALS: [string, number, (db: Database.Database) => void][] = [
  ['of schema 2 (the offline queue)', 2, () => undefined],
  [
    'of schema 12 without the card fingerprint (a rewrite that keeps the version)',
    LATEST_VERSION,
    (db) => {
      db.exec(`DROP INDEX ${OFFLINE_OPEN_BY_CARD_INDEX}`);
      db.exec(`ALTER TABLE offline_payments DROP COLUMN ${OFFLINE_CARD_COLUMN}`);
    },
  ],
];

/** Runs `queue ARGS` in `dir` as the command line does: its exit code and its output parsed. */
async function runQueue(dir: string, args: string[]) {
  const { io: cli, out } = io(dir);
  const code = await main(['queue', ...args, '--config', 'terminal.json'], cli);
  return { code, json: JSON.parse(out()) as Record<string, unknown>, text: out() };
}

/** The queue command against a gateway that declines every payment (EXPIRED_CARD). */
function decliningGateway() {
  return createQueueCommand({
    connect: () =>
      Promise.resolve({
        transmitter: {
          transmit: () =>
            Promise.resolve({ kind: 'declined', status: 'DECLINED', reason: 'EXPIRED_CARD' } as const),
        },
        close: () => Promise.resolve(),
      }),
  });
}

describe('parking-terminal queue', () => {
  it('prints an empty status with the configured limits when no journal exists, without creating one', async () => {
    const dir = terminalDir();
    const { io: cli, out } = io(dir);
    expect(await main(['queue', 'status', '--config', 'terminal.json'], cli)).toBe(0);
    expect(JSON.parse(out())).toMatchObject({
      policy: 'prefer-online',
      depth: 0,
      totalsPerCurrency: [],
      oldestAgeSeconds: null,
      limits: { maxTransactionMinor: 5000, maxTotalMinorPerCurrency: 50000, maxCount: 10, maxAgeHours: 24 },
    });
  });

  it('lists no payment not collected in full, and creates no journal, where the terminal never ran', async () => {
    const dir = terminalDir();
    expect(await runQueue(dir, ['declined'])).toMatchObject({ code: 0, json: { declined: [] } });
    expect(existsSync(join(dir, 'var/j.db'))).toBe(false);
  });

  it.each(OLDER_JOURNALS)(
    'reads status and declined read-only beside a running terminal whose journal is %s: its schema unchanged',
    async (_name, version, undo) => {
      const dir = terminalDir();
      const { before, after } = await schemaAround(
        join(dir, 'var/j.db'),
        version,
        async () => {
          const status = await runQueue(dir, ['status']);
          expect(status.code).toBe(0);
          expect(status.json).toMatchObject({
            depth: 1,
            totalsPerCurrency: [{ currency: 'GBP', minor: 1250, amount: '12.50' }],
            declinedAfterForward: 1,
          });
          const declined = await runQueue(dir, ['declined']);
          expect(declined).toMatchObject({
            code: 0,
            json: {
              declined: [
                {
                  transactionId: 'd1',
                  amountMinor: 300,
                  currency: 'GBP',
                  maskedPan: '411111******1111',
                  state: 'declined',
                  reason: 'EXPIRED_CARD',
                },
              ],
            },
          });
        },
        { undo, setup: (db) => previousPayments(db, Date.now()) },
      );
      expect(after).toEqual(before);
    },
  );

  it('reads status and declined beside a terminal holding the journal, its file left byte for byte as it was', async () => {
    const dir = terminalDir();
    storePayments(dir, [100]);
    const path = join(dir, 'var/j.db');
    holdAsRunningTerminal(path);
    const before = readFileSync(path);
    expect(await runQueue(dir, ['status'])).toMatchObject({ code: 0, json: { depth: 1 } });
    expect(await runQueue(dir, ['declined'])).toMatchObject({ code: 0, json: { declined: [] } });
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses, with the journal unchanged, to read a journal a newer terminal wrote (JOURNAL_MIGRATION, exit 2)', async () => {
    const dir = terminalDir();
    const { before, after } = await schemaAround(join(dir, 'var/j.db'), 'newer', async () => {
      for (const action of ['status', 'declined'])
        expect(await runQueue(dir, [action]), action).toMatchObject({
          code: 2,
          json: { error: { code: 'JOURNAL_MIGRATION' } },
        });
    });
    expect(after).toEqual(before);
  });

  it('prints the same numbers as the queue the status bar reads', async () => {
    const dir = terminalDir();
    const expected = storePayments(dir, [1250, 300]);
    const { io: cli, out } = io(dir);
    expect(await main(['queue', 'status', '--config', 'terminal.json'], cli)).toBe(0);
    const printed = JSON.parse(out()) as typeof expected;
    expect({ ...printed, oldestAgeSeconds: 0 }).toEqual({ ...expected, oldestAgeSeconds: 0 });
    expect(printed.totalsPerCurrency).toEqual([{ currency: 'GBP', minor: 1550, amount: '15.50' }]);
  });

  it('flushes every stored payment through the injected gateway connection, once each', async () => {
    const dir = terminalDir();
    storePayments(dir, [100, 200, 300]);
    const sent: string[] = [];
    const command = createQueueCommand({
      connect: () =>
        Promise.resolve({
          transmitter: {
            transmit: (r): Promise<ForwardOutcome> => {
              sent.push(r.transactionId ?? '');
              return Promise.resolve({
                kind: 'approved',
                status: 'AUTHORIZED',
                gatewayId: `g-${r.transactionId}`,
              });
            },
          },
          close: () => Promise.resolve(),
        }),
    });
    const { io: cli, out } = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(0);
    expect(sent).toEqual(['t0', 't1', 't2']);
    expect(JSON.parse(out())).toMatchObject({
      forwarded: 3,
      approved: 3,
      declined: [],
      unknown: 0,
      remaining: 0,
      status: { depth: 0 },
    });
    const again = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], again.io),
    ).toBe(0);
    expect(sent).toHaveLength(3);
  });

  it('lists a forward of unknown outcome with the resolution timeout recovery found for it since', async () => {
    const dir = terminalDir();
    storePayments(dir, [100]);
    const command = createQueueCommand({
      connect: () =>
        Promise.resolve({
          transmitter: {
            transmit: () => Promise.resolve({ kind: 'unknown', error: { code: 'GW_SERVER_ERROR' } } as const),
          },
          close: () => Promise.resolve(),
        }),
    });
    const { io: cli } = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(1);
    expect((await runQueue(dir, ['declined'])).json).toEqual({
      declined: [
        {
          transactionId: 't0',
          amountMinor: 100,
          currency: 'GBP',
          state: 'unknown',
          reason: 'GW_SERVER_ERROR',
        },
      ],
    });
    // The terminal's recovery: its timeout void was refused NOT_VOIDABLE, the sale stands (collected).
    const journal = openJournal(join(dir, 'var/j.db'));
    try {
      journal.resolve(journal.findByTransactionId('t0')!.id, 'not-voidable');
    } finally {
      journal.close();
    }
    expect((await runQueue(dir, ['declined'])).json).toMatchObject({
      declined: [{ transactionId: 't0', state: 'unknown', resolution: 'not-voidable' }],
    });
  });

  it('finishes a key rotation a crash interrupted before it forwards, reading the payments re-sealed', async () => {
    const dir = terminalDir();
    storePayments(dir, [100, 200]);
    const crashing = createOfflineCommand({
      afterStep: (step) => {
        if (step === 'journal-resealed') throw new Error('power cut');
      },
    });
    expect(() => crashing.run(['rotate-key', '--config', 'terminal.json'], io(dir).io)).toThrow('power cut');
    const keyFile = join(dir, 'var/offline.key');
    expect(existsSync(pendingKeyPath(keyFile))).toBe(true);
    const sent: string[] = [];
    const command = createQueueCommand({
      connect: () =>
        Promise.resolve({
          transmitter: {
            transmit: (r): Promise<ForwardOutcome> => {
              sent.push(r.body.toString('utf8'));
              return Promise.resolve({
                kind: 'approved',
                status: 'AUTHORIZED',
                gatewayId: `g-${r.transactionId}`,
              });
            },
          },
          close: () => Promise.resolve(),
        }),
    });
    const { io: cli, out } = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(0);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain('trackData');
    expect(JSON.parse(out())).toMatchObject({ forwarded: 2, approved: 2, remaining: 0 });
  });

  it('refuses to flush while the terminal holds the journal (one sender per journal), sending nothing', async () => {
    const dir = terminalDir();
    storePayments(dir, [100]);
    holdAsRunningTerminal(join(dir, 'var/j.db'));
    const sent: string[] = [];
    const command = createQueueCommand({
      connect: () =>
        Promise.resolve({
          transmitter: {
            transmit: (r): Promise<ForwardOutcome> => {
              sent.push(r.transactionId ?? '');
              return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' });
            },
          },
          close: () => Promise.resolve(),
        }),
    });
    const { io: cli } = io(dir);
    await expect(
      command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).rejects.toMatchObject({ code: 'JOURNAL_LOCKED' });
    expect(sent).toEqual([]);
  });

  describe.each([
    ['flush', '--gateway', 'http://127.0.0.1:9'],
    ['acknowledge', 'd1'],
  ])('queue %s', (...args) => {
    it.each(OLDER_JOURNALS)(
      'is refused beside a running terminal whose journal is %s (JOURNAL_LOCKED): its schema unchanged, nothing sent',
      async (_name, version, undo) => {
        const dir = terminalDir();
        const sent: string[] = [];
        const command = createQueueCommand({
          connect: () =>
            Promise.resolve({
              transmitter: {
                transmit: (r): Promise<ForwardOutcome> => {
                  sent.push(r.transactionId ?? '');
                  return Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' });
                },
              },
              close: () => Promise.resolve(),
            }),
        });
        const { before, after } = await schemaAround(
          join(dir, 'var/j.db'),
          version,
          async () => {
            const { io: cli } = io(dir);
            await expect(command.run([...args, '--config', 'terminal.json'], cli)).rejects.toMatchObject({
              code: 'JOURNAL_LOCKED',
            });
          },
          {
            undo,
            setup: (db) => {
              previousPayments(db, Date.now());
              lockAsRunningTerminal(db);
            },
          },
        );
        expect(after).toEqual(before);
        expect(sent).toEqual([]);
      },
    );
  });

  it('exits 1 and lists a payment declined after forwarding', async () => {
    const dir = terminalDir();
    storePayments(dir, [100]);
    const command = decliningGateway();
    const { io: cli, out } = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(1);
    expect(JSON.parse(out())).toMatchObject({
      declined: [
        { transactionId: 't0', amountMinor: 100, currency: 'GBP', state: 'declined', reason: 'EXPIRED_CARD' },
      ],
      status: { declinedAfterForward: 1 },
    });
    expect(out()).not.toContain('4111111111111111');
  });

  it('lists the payments not collected in full after forwarding, and takes them off once acknowledged (audited)', async () => {
    const dir = terminalDir();
    storePayments(dir, [100, 200]);
    const command = decliningGateway();
    const run = async (args: string[]) => {
      const { io: cli, out } = io(dir);
      const code = await command.run([...args, '--config', 'terminal.json'], cli);
      return { code, json: JSON.parse(out()) as Record<string, unknown>, text: out() };
    };
    expect((await run(['flush', '--gateway', 'http://127.0.0.1:9'])).code).toBe(1);

    const listed = await run(['declined']);
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual({
      declined: [
        { transactionId: 't0', amountMinor: 100, currency: 'GBP', state: 'declined', reason: 'EXPIRED_CARD' },
        { transactionId: 't1', amountMinor: 200, currency: 'GBP', state: 'declined', reason: 'EXPIRED_CARD' },
      ],
    });
    expect(listed.text).not.toContain('4111111111111111');

    const acknowledged = await run(['acknowledge', 't0']);
    expect(acknowledged).toMatchObject({
      code: 0,
      json: { acknowledged: [{ transactionId: 't0', acknowledged: true }], declinedAfterForward: 1 },
    });
    // Not waiting for acknowledgement (seen already, or no such payment): exit 1, nothing changes.
    const again = await run(['acknowledge', 't0', 'nope']);
    expect(again).toMatchObject({
      code: 1,
      json: {
        acknowledged: [
          { transactionId: 't0', acknowledged: false },
          { transactionId: 'nope', acknowledged: false },
        ],
        declinedAfterForward: 1,
      },
    });
    expect((await run(['declined'])).json).toMatchObject({ declined: [{ transactionId: 't1' }] });
    expect((await run(['status'])).json).toMatchObject({ declinedAfterForward: 1 });

    const journal = openJournal(join(dir, 'var/j.db'));
    try {
      expect(
        new AuditStore(journal)
          .list()
          .filter((r) => r.action === 'queue-acknowledge')
          .map((r) => [r.actor, r.subject, r.result, r.code]),
      ).toEqual([
        ['operator', 't0', 'ok', 'ACKNOWLEDGED'],
        ['operator', 't0', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
        ['operator', 'nope', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
      ]);
    } finally {
      journal.close();
    }
    await expect(run(['acknowledge'])).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
  });

  it.each([
    ['an empty one', ''],
    ['one longer than any transactionId', 'x'.repeat(129)],
  ])('refuses acknowledge given %s among the ids, before it acknowledges any', async (_name, bad) => {
    const dir = terminalDir();
    storePayments(dir, [100, 200]);
    const { io: flushIo } = io(dir);
    expect(
      await decliningGateway().run(
        ['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'],
        flushIo,
      ),
    ).toBe(1);
    const { io: cli, out } = io(dir);
    expect(await main(['queue', 'acknowledge', 't0', bad, '--config', 'terminal.json'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'BAD_ARGUMENTS' } });
    // Nothing acknowledged, nothing recorded: the operator is told of both payments still.
    const { io: listIo, out: listed } = io(dir);
    expect(await main(['queue', 'declined', '--config', 'terminal.json'], listIo)).toBe(0);
    expect(JSON.parse(listed())).toMatchObject({
      declined: [{ transactionId: 't0' }, { transactionId: 't1' }],
    });
    const journal = openJournal(join(dir, 'var/j.db'));
    try {
      expect(new AuditStore(journal).list().filter((r) => r.action === 'queue-acknowledge')).toEqual([]);
    } finally {
      journal.close();
    }
  });

  it('refuses to flush where no journal exists, creating neither a journal nor a key (a wrong --config)', async () => {
    const dir = terminalDir();
    let connected = false;
    const command = createQueueCommand({
      connect: () => {
        connected = true;
        return Promise.resolve({
          transmitter: { transmit: () => Promise.resolve({ kind: 'not-sent' } as const) },
          close: () => Promise.resolve(),
        });
      },
    });
    const { io: cli } = io(dir);
    await expect(
      command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).rejects.toMatchObject({ code: 'QUEUE_NO_JOURNAL' });
    expect(connected).toBe(false);
    expect([existsSync(join(dir, 'var/j.db')), existsSync(join(dir, 'var/offline.key'))]).toEqual([
      false,
      false,
    ]);
  });

  it('exits 1 and keeps the payments when the gateway cannot be reached', async () => {
    const dir = terminalDir();
    storePayments(dir, [100, 100]);
    const { io: cli, out } = io(dir);
    // Port 9 (discard) is closed here: connection refused before a byte is sent.
    expect(
      await main(['queue', 'flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(1);
    expect(JSON.parse(out())).toMatchObject({ forwarded: 0, gatewayUnreachable: true, remaining: 2 });
  });

  it.each([
    ['the credentials are refused (401)', 'GW_AUTH'],
    ['the processor is down a while (400 PROCESSOR_UNAVAILABLE)', 'PROCESSOR_UNAVAILABLE'],
  ])('says why it stopped when %s, the payments kept', async (_, reason) => {
    const dir = terminalDir();
    storePayments(dir, [100, 100]);
    const command = createQueueCommand({
      connect: () =>
        Promise.resolve({
          transmitter: {
            transmit: () =>
              Promise.resolve(
                reason === 'GW_AUTH'
                  ? ({ kind: 'not-sent', reason } as const)
                  : ({ kind: 'rejected', httpStatus: 400, reason } as const),
              ),
          },
          close: () => Promise.resolve(),
        }),
    });
    const { io: cli, out } = io(dir);
    expect(
      await command.run(['flush', '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli),
    ).toBe(1);
    expect(JSON.parse(out())).toMatchObject({
      forwarded: 0,
      gatewayUnreachable: true,
      unreachableReason: reason,
      remaining: 2,
    });
  });

  it.each([
    [['queue'], 'BAD_ARGUMENTS'],
    [['queue', 'drain'], 'BAD_ARGUMENTS'],
    [['queue', 'status', 'extra'], 'BAD_ARGUMENTS'],
    [['queue', 'status', '--gateway', 'http://x'], 'BAD_ARGUMENTS'],
    [['queue', 'flush'], 'QUEUE_NO_GATEWAY'],
    [['queue', 'flush', '--gateway', 'not a url'], 'BAD_ARGUMENTS'],
    // Stored card data never forwarded in clear to another host.
    [['queue', 'flush', '--gateway', 'http://gateway.example'], 'BAD_ARGUMENTS'],
    [['queue', 'status', '--config', 'missing.json'], 'CONFIG_UNREADABLE'],
  ])('exits 2 on %j with %s', async (args, code) => {
    const dir = terminalDir();
    const { io: cli, out } = io(dir);
    expect(await main(args, cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code } });
  });
});
