import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { oauthTokenStoreFromConfig } from '../../gateway/index.js';
import {
  AuditStore,
  AuthorizationDataStore,
  checkAtRestKey,
  fileKeyProvider,
  HoldStore,
  openJournal,
  pendingKeyPath,
  type StoredHold,
} from '../../journal/index.js';
import { oauthTokensResealer } from '../../host/gateway-adapters.js';
import { fingerprintKeyPath, loadFingerprintKey } from '../../host/keys.js';
import {
  OFFLINE_CARD_COLUMN,
  OFFLINE_OPEN_BY_CARD_INDEX,
} from '../../journal/migrations/offline-card-fingerprints.js';
import {
  holdAsRunningTerminal,
  journalSchema,
  lockAsRunningTerminal,
  schemaAround,
} from '../../journal/testing/held-journal.js';
import { main } from '../main.js';
import { createOfflineCommand } from './offline.js';
import { capturedIo as io } from '../testing/io.js';

const TAGS = '9F02060000000020009F26081122334455667788';

/** A terminal's directory whose journal keeps the tags of one open authorization, sealed as the terminal seals them. */
function terminalDir() {
  const dir = mkdtempSync(join(tmpdir(), 'offline-cli-'));
  writeFileSync(
    join(dir, 'terminal.json'),
    JSON.stringify({ journal: { path: 'var/j.db' }, offline: { keyFile: 'var/offline.key' } }),
  );
  const config = loadConfig(join(dir, 'terminal.json'));
  const keyFile = join(dir, config.offline.keyFile);
  const journalPath = join(dir, config.journal.path);
  const journal = openJournal(journalPath);
  const key = fileKeyProvider(keyFile).loadKey();
  checkAtRestKey(journal, key, 'key file');
  new AuthorizationDataStore(journal, key).putTags('auth-1', TAGS);
  journal.close();
  return { dir, config, keyFile, journalPath, key };
}

describe('parking-terminal offline rotate-key', () => {
  it('re-seals the kept tags under a new key file, records it in the audit log and prints the counts', async () => {
    const { dir, keyFile, journalPath, key } = terminalDir();
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(0);
    expect(JSON.parse(out())).toEqual({
      rotated: true,
      keyFile,
      storedPayments: 0,
      tagSets: 1,
      disclosures: 0,
      pendingRotation: 'none',
    });
    const rotated = fileKeyProvider(keyFile).loadKey();
    expect(rotated.equals(key)).toBe(false);
    expect(out()).not.toContain(rotated.toString('hex'));
    const journal = openJournal(journalPath);
    try {
      expect(new AuthorizationDataStore(journal, rotated).tags('auth-1')).toBe(TAGS);
      expect(new AuditStore(journal).list().filter((r) => r.action === 'key-rotate')).toEqual([
        expect.objectContaining({
          actor: 'operator',
          result: 'ok',
          details: { storedPayments: 0, tagSets: 1, disclosures: 0 },
        }),
      ]);
    } finally {
      journal.close();
    }
  });

  it('re-seals the OAuth token store with them, so that the grant survives the rotation', async () => {
    const { dir, config, keyFile, key } = terminalDir();
    const tokens = {
      accessToken: 'a',
      refreshToken: 'r',
      accessTokenExpiresAt: 1,
      refreshTokenExpiresAt: 2,
    };
    oauthTokenStoreFromConfig(config, { key, cwd: dir }).save(tokens);
    const { io: cli } = io(dir);
    expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(0);
    const rotated = fileKeyProvider(keyFile).loadKey();
    expect(oauthTokenStoreFromConfig(config, { key: rotated, cwd: dir }).load()).toMatchObject(tokens);
  });

  it('is refused while the terminal holds the journal, changing nothing', async () => {
    const { dir, keyFile, journalPath } = terminalDir();
    holdAsRunningTerminal(journalPath);
    const before = readFileSync(keyFile, 'utf8');
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'JOURNAL_LOCKED' } });
    expect(readFileSync(keyFile, 'utf8')).toBe(before);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
  });

  it('is refused beside a running terminal of an older version (JOURNAL_LOCKED): its schema unchanged, no key made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offline-cli-'));
    writeFileSync(
      join(dir, 'terminal.json'),
      JSON.stringify({ journal: { path: 'var/j.db' }, offline: { keyFile: 'var/offline.key' } }),
    );
    const { before, after } = await schemaAround(
      join(dir, 'var/j.db'),
      2,
      async () => {
        const { io: cli, out } = io(dir);
        expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(2);
        expect(JSON.parse(out())).toMatchObject({ error: { code: 'JOURNAL_LOCKED' } });
      },
      { setup: lockAsRunningTerminal },
    );
    expect(after).toEqual(before);
    expect(existsSync(join(dir, 'var/offline.key'))).toBe(false);
  });

  it('is refused with a key file the journal is not sealed under (exit 2, JOURNAL_KEY), never printing a key', async () => {
    const { dir, keyFile } = terminalDir();
    const other = Buffer.alloc(32, 5).toString('hex');
    writeFileSync(keyFile, `${other}\n`, { mode: 0o600 });
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({
      error: { code: 'JOURNAL_KEY', message: expect.stringContaining('1 tag set(s)') as string },
    });
    expect(out()).not.toContain(other);
  });

  it('finishes a rotation interrupted after the journal was re-sealed, at its next run', async () => {
    const { dir, keyFile, journalPath } = terminalDir();
    const crashing = createOfflineCommand({
      afterStep: (step) => {
        if (step === 'journal-resealed') throw new Error('power cut');
      },
    });
    const { io: first } = io(dir);
    expect(() => crashing.run(['rotate-key', '--config', 'terminal.json'], first)).toThrow('power cut');
    const pending = readFileSync(pendingKeyPath(keyFile), 'utf8');
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'rotate-key', '--config', 'terminal.json'], cli)).toBe(0);
    expect(JSON.parse(out())).toMatchObject({ pendingRotation: 'finished', tagSets: 1 });
    expect(readFileSync(keyFile, 'utf8')).not.toBe(pending); // finished, then rotated again
    const journal = openJournal(journalPath);
    try {
      expect(new AuthorizationDataStore(journal, fileKeyProvider(keyFile).loadKey()).tags('auth-1')).toBe(
        TAGS,
      );
    } finally {
      journal.close();
    }
  });

  it.each([
    [['rotate'], 'BAD_ARGUMENTS'],
    [[], 'BAD_ARGUMENTS'],
    [['rotate-key', 'extra'], 'BAD_ARGUMENTS'],
    [['rotate-key', '--force'], 'BAD_ARGUMENTS'],
  ])('refuses bad usage %j with exit 2', async (args, code) => {
    const { dir } = terminalDir();
    const { io: cli, out } = io(dir);
    expect(await main(['offline', ...args], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code } });
  });

  it('refuses when there is no journal, creating none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offline-cli-'));
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'rotate-key'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'OFFLINE_NO_JOURNAL' } });
    expect(existsSync(join(dir, 'var'))).toBe(false);
  });

  it('prints its usage with --help', async () => {
    const { io: cli, out } = io(mkdtempSync(join(tmpdir(), 'offline-cli-')));
    expect(await main(['offline', '--help'], cli)).toBe(0);
    expect(out()).toContain('parking-terminal offline rotate-key');
  });
});

describe('a rotation cut off after the OAuth token store was re-sealed, at the other commands', () => {
  /** The disk as a crash leaves it between re-sealing the token store and moving the new key into place. */
  function cutOffAfterTokenStore() {
    const { dir, config, keyFile, journalPath, key } = terminalDir();
    const tokens = {
      accessToken: 'a',
      refreshToken: 'r',
      accessTokenExpiresAt: Date.now() + 3_600_000,
      refreshTokenExpiresAt: Date.now() + 86_400_000,
    };
    oauthTokenStoreFromConfig(config, { key, cwd: dir }).save(tokens);
    const crashing = createOfflineCommand({
      afterStep: (step) => {
        if (step === 'journal-resealed') throw new Error('power cut');
      },
    });
    expect(() => crashing.run(['rotate-key', '--config', 'terminal.json'], io(dir).io)).toThrow('power cut');
    const pending = fileKeyProvider(pendingKeyPath(keyFile)).loadKey();
    oauthTokensResealer(config, dir)(key, pending);
    return { dir, keyFile, journalPath, pending };
  }

  it('oauth status finishes it first and reads the grant', async () => {
    const { dir, keyFile, pending } = cutOffAfterTokenStore();
    const { io: cli, out } = io(dir);
    const code = await main(['oauth', 'status', '--config', 'terminal.json'], cli);
    expect(JSON.parse(out())).toMatchObject({ oauth: { state: 'authorized' } });
    expect(code).toBe(0);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
    expect(fileKeyProvider(keyFile).loadKey().equals(pending)).toBe(true);
  });

  it.each([[['links', 'list']], [['links', 'deactivate', 'L-1']], [['altpay', 'refund', '1']]])(
    '%j finishes it before its gateway reads the grant',
    async (args) => {
      const { dir, keyFile, pending } = cutOffAfterTokenStore();
      const { io: cli } = io(dir);
      await main([...args, '--config', 'terminal.json', '--gateway', 'http://127.0.0.1:9'], cli);
      expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
      expect(fileKeyProvider(keyFile).loadKey().equals(pending)).toBe(true);
    },
  );

  it('is left to a terminal of an older version holding the journal, whose schema it leaves as it is', async () => {
    const { dir, keyFile, journalPath } = cutOffAfterTokenStore();
    // The journal as that terminal has it: without the card fingerprint, a rewrite it never made.
    const older = new Database(journalPath);
    older.exec(`DROP INDEX ${OFFLINE_OPEN_BY_CARD_INDEX}`);
    older.exec(`ALTER TABLE offline_payments DROP COLUMN ${OFFLINE_CARD_COLUMN}`);
    lockAsRunningTerminal(older);
    const before = journalSchema(older);
    try {
      const { io: cli, out } = io(dir);
      await main(['oauth', 'status', '--config', 'terminal.json'], cli);
      expect(out()).not.toContain('JOURNAL_LOCKED');
      expect(journalSchema(older)).toEqual(before);
      expect(existsSync(pendingKeyPath(keyFile))).toBe(true);
    } finally {
      older.close();
    }
  });

  it('is left to the terminal while it holds the journal', async () => {
    const { dir, keyFile, journalPath } = cutOffAfterTokenStore();
    holdAsRunningTerminal(journalPath);
    const before = readFileSync(keyFile, 'utf8');
    const { io: cli } = io(dir);
    await main(['oauth', 'status', '--config', 'terminal.json'], cli);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(true);
    expect(readFileSync(keyFile, 'utf8')).toBe(before);
  });
});

describe('parking-terminal offline replace-fingerprint-key', () => {
  const ENTERED_MS = Date.now() - 60_000;
  const STAY: StoredHold = {
    holdId: 'hold-open-1',
    fingerprint: 'fp-open-1',
    maskedPan: '411111******1111',
    gatewayId: 'G1',
    transactionId: 'hold-open-1',
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: 'card-1',
    includeEmvTags: false,
    enteredAtMs: ENTERED_MS,
    expiresAtMs: ENTERED_MS + 3_600_000,
  };

  /** A terminal's directory whose journal keeps one open tap-and-go stay, its fingerprint key file as `keyText` says. */
  function tapAndGoDir(keyText: string | undefined) {
    const { dir, config, journalPath } = terminalDir();
    const journal = openJournal(journalPath);
    const keyFile = fingerprintKeyPath(journalPath);
    try {
      // The key the stay was fingerprinted under, then lost as the test says.
      loadFingerprintKey(journal, keyFile, { settings: config });
      new HoldStore(journal).open(STAY);
    } finally {
      journal.close();
    }
    if (keyText === undefined) rmSync(keyFile);
    else writeFileSync(keyFile, keyText, { mode: 0o600 });
    return { dir, config, journalPath, keyFile };
  }

  function replacements(journalPath: string) {
    const journal = openJournal(journalPath);
    try {
      return new AuditStore(journal).list().filter((r) => r.action === 'fingerprint-key-replace');
    } finally {
      journal.close();
    }
  }

  /** The start's check of the key: the key it reads, or its refusal. */
  function startsWith(journalPath: string, config: ReturnType<typeof loadConfig>): Buffer {
    const journal = openJournal(journalPath);
    try {
      return loadFingerprintKey(journal, fingerprintKeyPath(journalPath), { settings: config });
    } finally {
      journal.close();
    }
  }

  it.each([
    ['missing', undefined],
    ['holding no key', ''],
  ])(
    'writes a new key where the file is %s, records what no longer matches and tells the operator; the next start goes on',
    async (_, keyText) => {
      const { dir, config, journalPath, keyFile } = tapAndGoDir(keyText);
      expect(() => startsWith(journalPath, config)).toThrow(/offline replace-fingerprint-key --confirm/);
      const { io: cli, out } = io(dir);
      expect(
        await main(['offline', 'replace-fingerprint-key', '--confirm', '--config', 'terminal.json'], cli),
      ).toBe(0);
      const printed = JSON.parse(out()) as Record<string, unknown>;
      expect(printed).toMatchObject({
        replaced: true,
        keyFile,
        previousFile: keyText === undefined ? 'missing' : 'no-key',
        openStays: [
          {
            holdId: 'hold-open-1',
            transactionId: 'hold-open-1',
            expiresAt: new Date(STAY.expiresAtMs).toISOString(),
          },
        ],
        closedStays: [],
        offlinePayments: [],
      });
      expect(JSON.stringify(printed.operator)).toMatch(/will not be found at the exit/);
      expect(JSON.stringify(printed.operator)).toMatch(/expiry/);
      expect(out()).not.toContain('411111');
      expect(out()).not.toContain('fp-open-1');
      const key = startsWith(journalPath, config);
      expect(readFileSync(keyFile, 'utf8')).toBe(`${key.toString('hex')}\n`);
      expect(out()).not.toContain(key.toString('hex'));
      expect(replacements(journalPath)).toEqual([
        expect.objectContaining({
          actor: 'operator',
          result: 'ok',
          details: expect.objectContaining({
            previousFile: keyText === undefined ? 'missing' : 'no-key',
            openStays: 1,
            closedStays: 0,
            offlinePayments: 0,
            openHoldIds: ['hold-open-1'],
          }) as unknown,
        }),
      ]);
    },
  );

  it('is refused over a key (exit 2, JOURNAL_KEY): a second run changes nothing and records nothing', async () => {
    const { dir, journalPath, keyFile } = tapAndGoDir(undefined);
    expect(
      await main(
        ['offline', 'replace-fingerprint-key', '--confirm', '--config', 'terminal.json'],
        io(dir).io,
      ),
    ).toBe(0);
    const written = readFileSync(keyFile, 'utf8');
    const { io: cli, out } = io(dir);
    expect(
      await main(['offline', 'replace-fingerprint-key', '--confirm', '--config', 'terminal.json'], cli),
    ).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'JOURNAL_KEY' } });
    expect(readFileSync(keyFile, 'utf8')).toBe(written);
    expect(replacements(journalPath)).toHaveLength(1);
  });

  it('is refused over a key the terminal could not use (readable by others): it is still a key, never replaced', async () => {
    const key = `${'ab'.repeat(32)}\n`;
    const { dir, journalPath, keyFile } = tapAndGoDir(key);
    chmodSync(keyFile, 0o644);
    const { io: cli, out } = io(dir);
    expect(
      await main(['offline', 'replace-fingerprint-key', '--confirm', '--config', 'terminal.json'], cli),
    ).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'JOURNAL_KEY' } });
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(replacements(journalPath)).toEqual([]);
  });

  it('without --confirm, names what would be lost and writes nothing (CONFIRM_REQUIRED, exit 2)', async () => {
    const { dir, journalPath, keyFile } = tapAndGoDir(undefined);
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'replace-fingerprint-key', '--config', 'terminal.json'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({
      error: { code: 'CONFIRM_REQUIRED', openStays: [{ holdId: 'hold-open-1' }] },
    });
    expect(existsSync(keyFile)).toBe(false);
    expect(replacements(journalPath)).toEqual([]);
  });

  it('is refused while the terminal holds the journal, writing no key', async () => {
    const { dir, journalPath, keyFile } = tapAndGoDir(undefined);
    holdAsRunningTerminal(journalPath);
    const { io: cli, out } = io(dir);
    expect(
      await main(['offline', 'replace-fingerprint-key', '--confirm', '--config', 'terminal.json'], cli),
    ).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'JOURNAL_LOCKED' } });
    expect(existsSync(keyFile)).toBe(false);
  });

  it('refuses when there is no journal, creating none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offline-cli-'));
    const { io: cli, out } = io(dir);
    expect(await main(['offline', 'replace-fingerprint-key', '--confirm'], cli)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'OFFLINE_NO_JOURNAL' } });
    expect(existsSync(join(dir, 'var'))).toBe(false);
  });

  it('prints its usage with --help', async () => {
    const { io: cli, out } = io(mkdtempSync(join(tmpdir(), 'offline-cli-')));
    expect(await main(['offline', '--help'], cli)).toBe(0);
    expect(out()).toContain('parking-terminal offline replace-fingerprint-key --confirm');
  });
});
