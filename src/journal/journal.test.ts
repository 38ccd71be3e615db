import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalError } from './errors.js';
import { entriesOfFlow, NOT_SENT, openJournal, type BeginEntry, type SqliteJournal } from './journal.js';
import { LATEST_VERSION, schemaVersion } from './migrations/index.js';
import { RECEIPT_FACT_COLUMNS } from './migrations/receipt-facts.js';
import { openJournalReadOnly } from './read-only.js';
import { journalSchema, lockAsRunningTerminal, olderTerminalJournal } from './testing/held-journal.js';

const TRACK2 = ';4111111111111111=29121010000012300000?';
const open: SqliteJournal[] = [];

function journal(path = ':memory:', now?: () => Date): SqliteJournal {
  const j = openJournal(path, now ? { now } : {});
  open.push(j);
  return j;
}

afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

function preauth(overrides: Partial<BeginEntry> = {}): BeginEntry {
  return {
    transactionId: 'tx-1',
    service: 'preauth',
    comments: 'Parking Auth',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from(JSON.stringify({ pointOfSaleInformation: { trackData: TRACK2 } })),
    amountMinor: 1250,
    currency: 'GBP',
    maskedPan: '411111******1111',
    moneyMoving: true,
    ...overrides,
  };
}

describe('journal', () => {
  it('records a request as pending before it is sent, then sent, then its outcome', () => {
    const j = journal();
    const e = j.begin(preauth());
    expect(e.state).toBe('pending');
    j.markSent(e.id);
    expect(j.get(e.id)?.state).toBe('sent');
    j.recordOutcome(e.id, {
      state: 'approved',
      gatewayId: 'g1',
      status: 'AUTHORIZED',
      httpStatus: 201,
      authorizedMinor: 1250,
    });
    const done = j.get(e.id);
    expect(done).toMatchObject({ state: 'approved', gatewayId: 'g1', authorizedMinor: 1250 });
    expect(j.findByTransactionId('tx-1')?.id).toBe(e.id);
  });

  it('syncs every money-moving write to disk from the first one on, and only those', async () => {
    const j = journal(join(mkdtempSync(join(tmpdir(), 'pt-journal-sync-')), 'journal.db'));
    // The connection's level after a write is the one that write committed with (2 = FULL: synced, 1 = NORMAL).
    const level = (): unknown => j.db.pragma('synchronous', { simple: true });
    const seen: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const e = j.begin(preauth({ transactionId: `sync-${i}` }));
      seen.push(level());
      j.markSent(e.id);
      seen.push(level());
      j.recordOutcome(e.id, { state: 'approved', gatewayId: `g-sync-${i}`, status: 'AUTHORIZED' });
      seen.push(level());
      seen.push(await j.commitDurably(level));
      j.begin(preauth({ transactionId: `sync-info-${i}`, service: 'info', moneyMoving: false }));
      seen.push(level());
      seen.push(await j.commitDurably(level));
      // Through the group commit, a write that is not money-moving is synced too, alone and without a transaction.
      j.begin(preauth({ transactionId: `sync-info-b-${i}`, service: 'info', moneyMoving: false }));
      await j.beginDurably(
        preauth({ transactionId: `sync-info-durable-${i}`, service: 'info', moneyMoving: false }),
      );
      seen.push(level());
    }
    expect(seen).toEqual([2, 1, 2, 2, 1, 2, 2, 2, 1, 2, 2, 1, 2, 2, 2, 1, 2, 2, 1, 2, 2]);
  });

  it('keeps an unknown outcome in flight until the entry is resolved', () => {
    const j = journal();
    const e = j.begin(preauth());
    j.markSent(e.id);
    j.recordOutcome(e.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
    expect(j.inFlight().map((x) => x.id)).toEqual([e.id]);
    expect(j.counts()).toEqual({ entries: 1, unknown: 1, inFlight: 1 });
    j.resolve(e.id, 'timeout-reversal');
    expect(j.get(e.id)).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
    expect(j.inFlight()).toEqual([]);
  });

  it('keeps the length of a request, never its bytes, sealed or clear', () => {
    const j = journal();
    const body = preauth().body;
    const e = j.begin(preauth());
    j.recordOutcome(e.id, { state: 'unknown' });
    expect(j.get(e.id)).toMatchObject({ bodyLength: body.length });
    const row = j.db.prepare('SELECT * FROM journal_entries WHERE id = ?').get(e.id) as Record<
      string,
      unknown
    >;
    expect(
      Object.values(row).filter((v) => Buffer.isBuffer(v) || (typeof v === 'string' && v.length >= 64)),
    ).toEqual([]);
  });

  it('finds every entry in flight as entries come and go, left in flight by an earlier scan or begun after it', () => {
    const j = journal();
    const [a, b, c] = ['a', 'b', 'c'].map((t) => j.begin(preauth({ transactionId: t })));
    const ids = (): number[] => j.inFlight().map((x) => x.id);
    expect(ids()).toEqual([a!.id, b!.id, c!.id]);
    j.recordOutcome(a!.id, { state: 'approved', gatewayId: 'ga' });
    j.recordOutcome(c!.id, { state: 'unknown' });
    expect(ids()).toEqual([b!.id, c!.id]);
    j.recordOutcome(b!.id, { state: 'declined' });
    expect(ids()).toEqual([c!.id]);
    j.resolve(c!.id, 'timeout-void');
    expect(ids()).toEqual([]);
    const d = j.begin(preauth({ transactionId: 'd' }));
    expect(ids()).toEqual([d.id]);
    j.resolve(d.id, NOT_SENT);
    expect(ids()).toEqual([]);
    // The same transactionId again, after the first provably never left: a new entry, found.
    const again = j.begin(preauth({ transactionId: 'd' }));
    expect(ids()).toEqual([again.id]);
  });

  it('finds an entry another connection begins after a scan, and one begun again after a rolled-back scan', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'j.db');
    const mine = journal(path);
    const theirs = journal(path);
    const first = mine.begin(preauth({ transactionId: 'mine' }));
    mine.recordOutcome(first.id, { state: 'approved', gatewayId: 'g-mine' });
    expect(mine.inFlight()).toEqual([]);
    const other = theirs.begin(preauth({ transactionId: 'theirs' }));
    expect(mine.inFlight().map((x) => x.id)).toEqual([other.id]);
    theirs.recordOutcome(other.id, { state: 'approved', gatewayId: 'g-theirs' });
    // A scan inside a transaction that is rolled back sees a row whose id the next insert takes again.
    expect(() =>
      mine.atomically(true, () => {
        const gone = mine.begin(preauth({ transactionId: 'rolled-back' }));
        mine.recordOutcome(gone.id, { state: 'approved', gatewayId: 'g-rolled-back' });
        expect(mine.inFlight()).toEqual([]);
        throw new Error('rolled back');
      }),
    ).toThrow();
    const next = mine.begin(preauth({ transactionId: 'next' }));
    expect(mine.inFlight().map((x) => x.id)).toEqual([next.id]);
  });

  it('checkpoints its write-ahead log by itself once it has written nothing for a second', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const path = join(mkdtempSync(join(tmpdir(), 'journal-')), 'j.db');
      const j = journal(path);
      const size = (): number => statSync(path).size;
      const before = size();
      for (let i = 0; i < 50; i++) j.begin(preauth({ transactionId: `idle-${i}` }));
      // Every page is still in the log.
      expect(size()).toBe(before);
      vi.advanceTimersByTime(1_000);
      j.begin(preauth({ transactionId: 'idle-late' }));
      vi.advanceTimersByTime(1_000);
      // Written to within the last second: not yet.
      expect(size()).toBe(before);
      vi.advanceTimersByTime(1_000);
      expect(size()).toBeGreaterThan(before);
      expect(j.inFlight()).toHaveLength(51);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a second live entry with the same transactionId', () => {
    const j = journal();
    j.begin(preauth());
    expect(() => j.begin(preauth())).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_DUPLICATE' }) as Error,
    );
  });

  it('frees a transactionId whose entry provably never left the terminal', () => {
    const j = journal();
    const first = j.begin(preauth());
    j.resolve(first.id, NOT_SENT);
    const second = j.begin(preauth());
    expect(j.findByTransactionId('tx-1')?.id).toBe(second.id);
  });

  it('refuses to call an entry not sent once its outcome may have reached the gateway', () => {
    const j = journal();
    const e = j.begin(preauth());
    j.markSent(e.id);
    j.recordOutcome(e.id, { state: 'unknown' });
    expect(() => j.resolve(e.id, NOT_SENT)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_BAD_TRANSITION' }) as Error,
    );
  });

  it('refuses state changes that skip or reverse the order', () => {
    const j = journal();
    const e = j.begin(preauth());
    j.markSent(e.id);
    j.recordOutcome(e.id, { state: 'declined', reason: 'EXPIRED_CARD' });
    expect(() => j.markSent(e.id)).toThrowError(JournalError);
    expect(() => j.recordOutcome(e.id, { state: 'approved' })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_BAD_TRANSITION' }) as Error,
    );
    expect(() => j.resolve(e.id, 'timeout-reversal')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_BAD_TRANSITION' }) as Error,
    );
    expect(() => j.markSent(999)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_NOT_FOUND' }) as Error,
    );
  });

  it('treats marking sent and resolving the same way twice as no-ops', () => {
    const j = journal();
    const e = j.begin(preauth());
    j.markSent(e.id);
    j.markSent(e.id);
    j.resolve(e.id, 'timeout-reversal');
    j.resolve(e.id, 'timeout-reversal');
    expect(j.get(e.id)?.state).toBe('resolved');
  });

  it.each([
    ['a masked PAN showing more than 6 + 4 digits', { maskedPan: '4111111111111111' }],
    ['a masked PAN with 7 leading digits', { maskedPan: '4111111*****1111' }],
    ['an amount that is not whole minor units', { amountMinor: 12.5 }],
    ['a negative amount', { amountMinor: -1 }],
    ['an unknown currency', { currency: 'XYZ' }],
    ['an amount without currency', { currency: undefined }],
    ['a money-moving service without a recovery rule', { service: 'mystery' }],
    ['an original without transactionId', { transactionId: undefined }],
    ['an authorization without amount', { amountMinor: undefined, currency: undefined }],
    ['a body that is not bytes', { body: 'text' as unknown as Buffer }],
  ])('rejects %s with a typed error', (_name, overrides) => {
    const j = journal();
    expect(() => j.begin(preauth(overrides as Partial<BeginEntry>))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('accepts any service name for requests that move no money', () => {
    const j = journal();
    const e = j.begin({
      service: 'dcc-offer',
      comments: '',
      method: 'POST',
      path: '/vas/v1/currencyconversion',
      body: Buffer.from('{}'),
      moneyMoving: false,
    });
    expect(e.moneyMoving).toBe(false);
  });

  it('requires the referenced transaction of a timeout void and of a void', () => {
    const j = journal();
    const base = {
      comments: 'VOID Timeout',
      method: 'POST',
      path: '/pts/v2/voids',
      body: Buffer.from('{}'),
      moneyMoving: true,
    };
    expect(() => j.begin({ ...base, service: 'timeout-void' })).toThrowError(JournalError);
    expect(() => j.begin({ ...base, service: 'void-capture' })).toThrowError(JournalError);
    expect(j.begin({ ...base, service: 'void-capture', parentGatewayId: 'cap-1' }).service).toBe(
      'void-capture',
    );
  });

  it('lists newest first and by flow', () => {
    const j = journal();
    j.begin(preauth({ transactionId: 'a', flowId: 'f1' }));
    j.begin(preauth({ transactionId: 'b', flowId: 'f2' }));
    j.begin(preauth({ transactionId: 'c', flowId: 'f1' }));
    expect(j.list().map((e) => e.transactionId)).toEqual(['c', 'b', 'a']);
    expect(j.list({ flowId: 'f1', limit: 1 }).map((e) => e.transactionId)).toEqual(['c']);
    expect(() => j.list({ limit: 0 })).toThrowError(JournalError);
  });

  it('uses the injected clock for every timestamp', () => {
    const j = journal(':memory:', () => new Date('2030-01-02T03:04:05.000Z'));
    const e = j.begin(preauth());
    j.markSent(e.id);
    expect(j.get(e.id)).toMatchObject({
      createdAt: '2030-01-02T03:04:05.000Z',
      sentAt: '2030-01-02T03:04:05.000Z',
    });
  });

  it('fails with JOURNAL_CLOSED after close', () => {
    const j = openJournal(':memory:');
    j.close();
    expect(() => j.inFlight()).toThrowError(expect.objectContaining({ code: 'JOURNAL_CLOSED' }) as Error);
  });

  it('survives a reopen with every entry and state (durable file, WAL)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'j.db');
    const a = openJournal(path);
    const e = a.begin(preauth());
    a.markSent(e.id);
    a.close();
    const b = journal(path);
    expect(b.inFlight().map((x) => [x.id, x.state])).toEqual([[e.id, 'sent']]);
    expect(b.db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it("keeps an approval's code and the receipt's view of the card with its outcome, across a reopen", () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'j.db');
    const a = openJournal(path);
    const card = {
      entryMode: 'contact',
      aid: 'A0000000031010',
      applicationLabel: 'VISA CREDIT',
      cvmResults: '1F0302',
    } as const;
    const approved = a.begin(preauth());
    a.recordOutcome(approved.id, {
      state: 'approved',
      gatewayId: 'g1',
      status: 'AUTHORIZED',
      approvalCode: '831000',
      card,
    });
    const bare = a.begin(preauth({ transactionId: 'tx-2' }));
    a.recordOutcome(bare.id, { state: 'declined', status: 'DECLINED' });
    a.close();
    const b = journal(path);
    expect(b.findByTransactionId('tx-1')).toMatchObject({ approvalCode: '831000', card });
    expect(b.findByTransactionId('tx-2')).toMatchObject({ approvalCode: undefined, card: undefined });
  });

  it('refuses an approval code or a card view that could carry a card number', () => {
    const j = journal();
    const e = j.begin(preauth());
    const refused = expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error;
    expect(() => j.recordOutcome(e.id, { state: 'approved', approvalCode: '4111111111111111' })).toThrowError(
      refused,
    );
    expect(() =>
      j.recordOutcome(e.id, {
        state: 'approved',
        card: { entryMode: 'contact', applicationLabel: 'VISA 4111 1111 1111 1111' },
      }),
    ).toThrowError(refused);
    expect(() =>
      j.recordOutcome(e.id, {
        state: 'approved',
        card: { entryMode: 'contact', aid: '4111111111111111=2912' },
      }),
    ).toThrowError(refused);
    expect(j.get(e.id)?.state).toBe('pending');
  });

  it("notes a receipt's language and machine lines on its entry once, across a reopen", () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'j.db');
    const a = openJournal(path);
    const e = a.begin(preauth({ service: 'sale' }));
    a.recordOutcome(e.id, { state: 'approved', gatewayId: 'g1', status: 'AUTHORIZED' });
    const note = {
      locale: 'de_DE',
      lines: [
        { label: 'Ticket', value: '2026112408000001' },
        { label: 'Stay', value: '95 min' },
      ],
    };
    expect(a.recordReceipt('tx-1', note)).toBe(true);
    // Issued again (a copy): the first receipt's note stays.
    expect(a.recordReceipt('tx-1', { locale: 'fr_FR', lines: [] })).toBe(false);
    // No entry of that transaction (a payment link's receipt): nothing written.
    expect(a.recordReceipt('link-1', note)).toBe(false);
    a.close();
    const b = journal(path);
    expect(b.findByTransactionId('tx-1')?.receipt).toEqual(note);
    expect(b.list()[0]?.receipt).toEqual(note);
  });

  it('refuses a receipt note with a card number or of the wrong shape, and writes nothing of it', () => {
    const j = journal();
    const e = j.begin(preauth({ service: 'sale' }));
    j.recordOutcome(e.id, { state: 'approved', gatewayId: 'g1', status: 'AUTHORIZED' });
    const refused = expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error;
    for (const note of [
      { locale: 'de_DE', lines: [{ label: 'Ticket', value: '4111 1111 1111 1111' }] },
      { locale: 'de_DE', lines: [{ label: '4111111111111111', value: 'x' }] },
      { locale: 'de_DE', lines: [{ label: '', value: 'x' }] },
      { locale: 'de_DE', lines: [{ label: 'Stay', value: 'x'.repeat(257) }] },
      { locale: 'de_DE', lines: Array.from({ length: 17 }, () => ({ label: 'Stay', value: '1 min' })) },
      { locale: "de'; DROP", lines: [] },
    ])
      expect(() => j.recordReceipt('tx-1', note)).toThrowError(refused);
    expect(j.findByTransactionId('tx-1')?.receipt).toBeUndefined();
    // A note that is not one (written by hand) is read as none: the copy leaves its lines out, the entry still reads.
    j.db
      .prepare("UPDATE journal_entries SET receipt_locale = 'de_DE', receipt_lines = '{' WHERE id = ?")
      .run(e.id);
    expect(j.findByTransactionId('tx-1')).toMatchObject({ state: 'approved', receipt: undefined });
  });

  it('never writes card data in clear to the database files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'j.db');
    const j = openJournal(path);
    for (let i = 0; i < 20; i++) {
      const e = j.begin(preauth({ transactionId: `t${i}` }));
      j.markSent(e.id);
      if (i % 2 === 0) j.recordOutcome(e.id, { state: 'unknown' });
    }
    j.close();
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes).not.toContain('4111111111111111');
      expect(bytes).not.toContain('29121010000012300000');
    }
  });
});

describe('the sender lock', () => {
  it('refuses a second live process, names it, and takes over from a process that died', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-lock-'));
    const path = join(dir, 'journal.db');
    const j = openJournal(path);
    // Another live process holds it: the parent of this test process.
    j.db
      .prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('sender_lock', ?)")
      .run(JSON.stringify({ pid: process.ppid, holder: 'the terminal', since: '2030-01-01T00:00:00.000Z' }));
    expect(() => j.acquireSenderLock('queue flush')).toThrowError(
      expect.objectContaining({
        code: 'JOURNAL_LOCKED',
        message: expect.stringContaining('the terminal') as string,
      }) as Error,
    );
    // Its holder died (a crash): the lock is taken over.
    j.db
      .prepare("UPDATE meta SET value = ? WHERE key = 'sender_lock'")
      .run(JSON.stringify({ pid: 2_147_483_000, holder: 'the terminal', since: '2030-01-01T00:00:00.000Z' }));
    j.acquireSenderLock('queue flush');
    j.close();
    // Released on close: the next process takes it at once.
    const again = openJournal(path);
    expect(again.db.prepare("SELECT value FROM meta WHERE key = 'sender_lock'").get()).toBeUndefined();
    again.acquireSenderLock('the terminal');
    again.close();
  });

  it.runIf(existsSync('/proc/sys/kernel/random/boot_id'))(
    'takes over a lock whose pid names another process now: one of an earlier boot, or one started since',
    () => {
      const path = join(mkdtempSync(join(tmpdir(), 'pt-lock-')), 'journal.db');
      const j = journal(path);
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      // The live parent of this test process, as /proc reads it: its start in clock ticks since boot.
      const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
      const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const lock = (fields: Record<string, unknown>) =>
        j.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('sender_lock', ?)").run(
          JSON.stringify({
            pid: process.ppid,
            holder: 'the terminal',
            since: '2030-01-01T00:00:00.000Z',
            ...fields,
          }),
        );
      // That very process, in this boot: it holds the journal.
      lock({ boot, started });
      expect(() => j.acquireSenderLock('the terminal')).toThrowError(
        expect.objectContaining({ code: 'JOURNAL_LOCKED' }) as Error,
      );
      // A terminal that held it before a power cut: its pid is another process's after the reboot.
      lock({ boot: 'an earlier boot', started });
      j.acquireSenderLock('the terminal');
      // A holder that died in this boot, its pid given to a process started since.
      lock({ boot, started: `${started}0` });
      j.acquireSenderLock('the terminal');
      expect(
        JSON.parse(
          (j.db.prepare("SELECT value FROM meta WHERE key = 'sender_lock'").get() as { value: string }).value,
        ),
      ).toMatchObject({ pid: process.pid, boot });
    },
  );

  it('keeps a journal of an older schema as it is while another live process holds it, and migrates it once that one died', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-lock-'));
    const path = join(dir, 'journal.db');
    const older = olderTerminalJournal(path, 2);
    lockAsRunningTerminal(older);
    const before = journalSchema(older);
    expect(() => openJournal(path)).toThrowError(
      expect.objectContaining({
        code: 'JOURNAL_LOCKED',
        message: expect.stringContaining('not migrated while it runs') as string,
      }) as Error,
    );
    expect(journalSchema(older)).toEqual(before);
    // Its holder died: the journal is the opener's to migrate.
    older
      .prepare("UPDATE meta SET value = ? WHERE key = 'sender_lock'")
      .run(JSON.stringify({ pid: 2_147_483_000, holder: 'the terminal', since: '2030-01-01T00:00:00.000Z' }));
    older.close();
    journal(path).acquireSenderLock('the terminal');
    const reader = openJournalReadOnly(path, 1);
    try {
      expect(reader && schemaVersion(reader.db)).toBe(LATEST_VERSION);
    } finally {
      reader?.close();
    }
  });
});

describe('entriesOfFlow', () => {
  it("reads a flow's entries read-only, newest first, as the journal lists them, and without the receipt facts of a journal not yet rewritten", () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-flow-'));
    const path = join(dir, 'j.db');
    const journal = openJournal(path);
    for (const transactionId of ['f1', 'f2']) {
      const e = journal.begin(preauth({ transactionId, flowId: 'flow-1' }));
      journal.markSent(e.id);
      journal.recordOutcome(e.id, {
        state: 'approved',
        status: 'AUTHORIZED',
        gatewayId: `g-${transactionId}`,
        approvalCode: 'A1B2',
        card: { entryMode: 'contactless' },
      });
    }
    const listed = journal.list({ flowId: 'flow-1' });
    journal.close();
    const reader = openJournalReadOnly(path, 1);
    try {
      expect(reader && entriesOfFlow(reader, 'flow-1', 10)).toEqual(listed);
      expect(listed.map((e) => e.transactionId)).toEqual(['f2', 'f1']);
    } finally {
      reader?.close();
    }

    const older = olderTerminalJournal(join(dir, 'older.db'), LATEST_VERSION, (db) => {
      for (const column of RECEIPT_FACT_COLUMNS) db.exec(`ALTER TABLE journal_entries DROP COLUMN ${column}`);
    });
    older
      .prepare(
        `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length, flow_id,
          money_moving, state, created_at) VALUES ('o1', 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', 64,
          'flow-1', 1, 'approved', 1)`,
      )
      .run();
    older.close();
    const olderReader = openJournalReadOnly(join(dir, 'older.db'), 1);
    try {
      const [entry] = olderReader ? entriesOfFlow(olderReader, 'flow-1', 10) : [];
      expect(entry).toMatchObject({ transactionId: 'o1', state: 'approved' });
      expect(entry?.card).toBeUndefined();
      expect(entry?.approvalCode).toBeUndefined();
    } finally {
      olderReader?.close();
    }
  });
});

describe('a journal path that cannot be made', () => {
  // Node's recursive mkdir looped forever here, at full CPU and deaf to SIGTERM: `start` never came up nor stopped.
  it.runIf(existsSync('/proc/self'))('is refused at once (JOURNAL_IO), not waited on', () => {
    expect(() => openJournal('/proc/no-such-directory/journal.db')).toThrow(
      expect.objectContaining({ code: 'JOURNAL_IO' }),
    );
  });
});
