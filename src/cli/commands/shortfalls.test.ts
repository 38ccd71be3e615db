import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { AuditStore, openJournal } from '../../journal/index.js';
import { LATEST_VERSION } from '../../journal/migrations/index.js';
import { schemaAround } from '../../journal/testing/held-journal.js';
import { capturedIo as io } from '../testing/io.js';
import shortfallsCommand from './shortfalls.js';

function terminalDir(terminal: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'shortfalls-cli-'));
  writeFileSync(join(dir, 'terminal.json'), JSON.stringify({ journal: { path: 'var/j.db' }, terminal }));
  return dir;
}

/** Records fee shortfalls in the terminal's journal as the terminal does (the audit log's `fee-shortfall`). */
function recordShortfalls(dir: string) {
  const journal = openJournal(join(dir, 'var/j.db'));
  try {
    appendShortfalls(new AuditStore(journal));
  } finally {
    journal.close();
  }
}

/** Appends two fee shortfalls (`cap-1`, `auth-2`) to `audit`. */
function appendShortfalls(audit: AuditStore) {
  audit.append({
    actor: 'system',
    action: 'fee-shortfall',
    subject: 'cap-1',
    result: 'refused',
    code: 'INCREMENTAL_NOT_APPROVED',
    details: {
      authorizationTransactionId: 'auth-1',
      owedMinor: 900,
      capturedMinor: 598,
      shortfallMinor: 302,
      currency: 'GBP',
    },
  });
  audit.append({
    actor: 'system',
    action: 'fee-shortfall',
    subject: 'auth-2',
    result: 'refused',
    code: 'FEE_NOT_COMPUTABLE',
    details: {
      authorizedMinor: 598,
      holdCurrency: 'GBP',
      owedMinor: 300,
      capturedMinor: 0,
      shortfallMinor: 300,
      currency: 'EUR',
    },
  });
}

async function run(dir: string, args: string[]) {
  const { io: cli, out } = io(dir);
  const code = await shortfallsCommand.run([...args, '--config', 'terminal.json'], cli);
  return { code, json: JSON.parse(out()) as Record<string, unknown> };
}

describe('parking-terminal shortfalls', () => {
  it('lists nothing, and creates no journal, where the terminal never ran', async () => {
    const dir = terminalDir();
    expect(await run(dir, ['list'])).toEqual({ code: 0, json: { shortfalls: [] } });
    expect(existsSync(join(dir, 'var/j.db'))).toBe(false);
  });

  it.each([
    ['of schema 7 (the audit log)', 7, () => undefined],
    [
      'of schema 12 without the indexes of the fee shortfalls (a rewrite that keeps the version)',
      LATEST_VERSION,
      (db: Database.Database) => {
        db.exec('DROP INDEX audit_log_fee_shortfalls');
        db.exec('DROP INDEX audit_log_shortfalls_acknowledged');
      },
    ],
  ])(
    'lists read-only beside a running terminal whose journal is %s: its schema unchanged',
    async (_name, version, undo) => {
      const dir = terminalDir();
      const { before, after } = await schemaAround(
        join(dir, 'var/j.db'),
        version,
        async () => {
          const listed = await run(dir, ['list']);
          expect(listed.code).toBe(0);
          expect(listed.json).toMatchObject({
            shortfalls: [
              { transactionId: 'cap-1', shortfallMinor: 302, currency: 'GBP' },
              { transactionId: 'auth-2', shortfallMinor: 300, currency: 'EUR' },
            ],
          });
        },
        {
          undo,
          setup: (db) =>
            appendShortfalls(
              new AuditStore({ db, atomically: (_full, fn) => db.transaction(fn)(), now: () => new Date() }),
            ),
        },
      );
      expect(after).toEqual(before);
    },
  );

  it('lists nothing from a journal older than the audit log, its schema unchanged', async () => {
    const dir = terminalDir();
    const { before, after } = await schemaAround(join(dir, 'var/j.db'), 6, async () => {
      expect(await run(dir, ['list'])).toEqual({ code: 0, json: { shortfalls: [] } });
    });
    expect(after).toEqual(before);
  });

  it('refuses, with the journal unchanged, to list from a journal a newer terminal wrote (JOURNAL_MIGRATION)', async () => {
    const dir = terminalDir();
    const { before, after } = await schemaAround(join(dir, 'var/j.db'), 'newer', async () => {
      await expect(run(dir, ['list'])).rejects.toMatchObject({ code: 'JOURNAL_MIGRATION' });
    });
    expect(after).toEqual(before);
  });

  it('lists them under a terminal.locale written de_DE as under de-DE', async () => {
    for (const locale of ['de_DE', 'de-DE']) {
      const dir = terminalDir({ locale });
      recordShortfalls(dir);
      const listed = await run(dir, ['list']);
      expect(listed.code, locale).toBe(0);
      expect((listed.json.shortfalls as unknown[]).length, locale).toBe(2);
    }
  });

  it('lists the fees not collected in full, and takes them off once acknowledged (audited)', async () => {
    const dir = terminalDir();
    recordShortfalls(dir);
    const listed = await run(dir, ['list']);
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual({
      shortfalls: [
        {
          transactionId: 'cap-1',
          code: 'INCREMENTAL_NOT_APPROVED',
          owedMinor: 900,
          capturedMinor: 598,
          shortfallMinor: 302,
          currency: 'GBP',
          authorizationTransactionId: 'auth-1',
          at: expect.any(String) as string,
        },
        {
          transactionId: 'auth-2',
          code: 'FEE_NOT_COMPUTABLE',
          owedMinor: 300,
          capturedMinor: 0,
          shortfallMinor: 300,
          currency: 'EUR',
          at: expect.any(String) as string,
        },
      ],
    });

    expect(await run(dir, ['acknowledge', 'cap-1'])).toEqual({
      code: 0,
      json: { acknowledged: [{ transactionId: 'cap-1', acknowledged: true }], feeShortfalls: 1 },
    });
    // Not waiting for acknowledgement (seen already, or no such shortfall): exit 1, nothing changes.
    expect(await run(dir, ['acknowledge', 'cap-1', 'nope'])).toEqual({
      code: 1,
      json: {
        acknowledged: [
          { transactionId: 'cap-1', acknowledged: false },
          { transactionId: 'nope', acknowledged: false },
        ],
        feeShortfalls: 1,
      },
    });
    expect((await run(dir, ['list'])).json).toMatchObject({ shortfalls: [{ transactionId: 'auth-2' }] });

    const journal = openJournal(join(dir, 'var/j.db'));
    try {
      expect(
        new AuditStore(journal)
          .list()
          .filter((r) => r.action === 'fee-shortfall-acknowledge')
          .map((r) => [r.actor, r.subject, r.result, r.code]),
      ).toEqual([
        ['operator', 'cap-1', 'ok', 'ACKNOWLEDGED'],
        ['operator', 'cap-1', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
        ['operator', 'nope', 'refused', 'NOT_AWAITING_ACKNOWLEDGEMENT'],
      ]);
    } finally {
      journal.close();
    }
  });

  it('refuses bad usage', async () => {
    const dir = terminalDir();
    await expect(run(dir, ['acknowledge'])).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    await expect(run(dir, ['list', 'extra'])).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    await expect(run(dir, ['acknowledge', 'cap-1'])).rejects.toMatchObject({ code: 'SHORTFALLS_NO_JOURNAL' });
  });
});
