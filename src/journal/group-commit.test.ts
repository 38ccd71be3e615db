import { execFileSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../log/index.js';
import { JournalError } from './errors.js';
import {
  BACKGROUND_WRITE,
  openJournal,
  type BeginEntry,
  type GroupCommitOptions,
  type OpenJournalOptions,
  type SqliteJournal,
} from './journal.js';
import { JournaledSender, type OutgoingRequest, type TransmitOutcome } from './sender.js';
import { saleEntry } from './testing/entries.js';

const cleanups: (() => void)[] = [];

afterEach(() => {
  vi.useRealTimers();
  for (const c of cleanups.splice(0).reverse()) c();
});

/** A journal in a file, and a second connection to the same file that sees only what was committed. */
function fileJournal(
  groupCommit?: Partial<GroupCommitOptions>,
  options: OpenJournalOptions = {},
): {
  journal: SqliteJournal;
  committedRows: () => number;
  dir: string;
  path: string;
} {
  const dir = mkdtempSync(join(tmpdir(), 'pt-group-commit-'));
  const path = join(dir, 'journal.db');
  const journal = openJournal(path, groupCommit ? { ...options, groupCommit } : options);
  const other = new Database(path, { readonly: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => journal.close());
  cleanups.push(() => other.close());
  const count = other.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM journal_entries');
  return { journal, committedRows: () => count.get()?.n ?? -1, dir, path };
}

function sale(transactionId: string): BeginEntry {
  return saleEntry(transactionId, {
    body: Buffer.from(`{"clientReferenceInformation":{"transactionId":"${transactionId}"}}`),
  });
}

function request(transactionId: string): OutgoingRequest {
  const e = sale(transactionId);
  return {
    service: e.service,
    method: e.method,
    path: e.path,
    body: e.body,
    comments: e.comments,
    transactionId,
    amountMinor: 600,
    currency: 'GBP',
    moneyMoving: true,
  };
}

describe('group commit', () => {
  it('resumes a caller only after the commit that holds its write', async () => {
    const { journal, committedRows } = fileJournal();
    const begun = journal.beginDurably(sale('T1'));
    // Queued, not yet written: nothing is visible to another connection.
    expect(committedRows()).toBe(0);
    const entry = await begun;
    expect(committedRows()).toBe(1);
    expect(journal.get(entry.id)?.state).toBe('pending');
    expect(journal.durableCommits).toBe(1);
  });

  it('commits writes queued together in one transaction, in the order they were queued', async () => {
    const { journal, committedRows } = fileJournal();
    const ids = ['A', 'B', 'C', 'D', 'E'];
    const seenAtResume: number[] = [];
    const entries = await Promise.all(
      ids.map((id) =>
        journal.beginDurably(sale(id)).then((e) => {
          seenAtResume.push(committedRows());
          return e;
        }),
      ),
    );
    expect(journal.durableCommits).toBe(1);
    // Every caller resumed after all five rows were committed together.
    expect(seenAtResume).toEqual([5, 5, 5, 5, 5]);
    expect(entries.map((e) => e.transactionId)).toEqual(ids);
    const entryIds = entries.map((e) => e.id);
    expect(entryIds).toEqual([...entryIds].sort((a, b) => a - b));
  });

  it('carries at most maxBatch writes per commit and commits the rest next, in order', async () => {
    const { journal } = fileJournal({ maxBatch: 3 });
    const order: string[] = [];
    const ids = ['1', '2', '3', '4', '5', '6', '7'];
    await Promise.all(
      ids.map((id) =>
        journal
          .commitDurably(() => journal.begin(sale(`T${id}`)))
          .then((e) => order.push(e.transactionId ?? '')),
      ),
    );
    expect(journal.durableCommits).toBe(3);
    expect(order).toEqual(ids.map((id) => `T${id}`));
  });

  it('waits at most maxWaitMs for more writes before it commits', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { journal, committedRows } = fileJournal({ maxWaitMs: 20 });
    const first = journal.beginDurably(sale('W1'));
    // A later turn of the event loop: without a wait, the first write would have committed alone by now.
    await new Promise<void>((r) => setImmediate(r));
    expect(committedRows()).toBe(0);
    const second = journal.beginDurably(sale('W2'));
    vi.advanceTimersByTime(20);
    await Promise.all([first, second]);
    expect(committedRows()).toBe(2);
    expect(journal.durableCommits).toBe(1);
  });

  it('lets background writes wait up to backgroundWaitMs for others, and commits them together', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { journal, committedRows } = fileJournal({ backgroundWaitMs: 20 });
    const first = journal.commitDurably(() => journal.begin(sale('B1')), BACKGROUND_WRITE);
    // A later turn of the event loop: a write someone waits for would have committed by now.
    await new Promise<void>((r) => setImmediate(r));
    expect(committedRows()).toBe(0);
    const second = journal.commitDurably(() => journal.begin(sale('B2')), BACKGROUND_WRITE);
    await new Promise<void>((r) => setImmediate(r));
    expect(committedRows()).toBe(0);
    vi.advanceTimersByTime(20);
    await Promise.all([first, second]);
    expect(committedRows()).toBe(2);
    expect(journal.durableCommits).toBe(1);
  });

  it('ends the wait of background writes when a write someone waits for comes, in the same commit', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { journal, committedRows } = fileJournal({ backgroundWaitMs: 50 });
    const background = journal.commitDurably(() => journal.begin(sale('B1')), BACKGROUND_WRITE);
    await new Promise<void>((r) => setImmediate(r));
    expect(committedRows()).toBe(0);
    // No timer advanced: the sale's write starts the commit, and the forward's write goes with it.
    await Promise.all([journal.beginDurably(sale('S1')), background]);
    expect(committedRows()).toBe(2);
    expect(journal.durableCommits).toBe(1);
  });

  it('commits background writes like any other with backgroundWaitMs 0', async () => {
    const { journal } = fileJournal({ backgroundWaitMs: 0 });
    const entry = await journal.commitDurably(() => journal.begin(sale('B0')), BACKGROUND_WRITE);
    expect(journal.get(entry.id)?.state).toBe('pending');
    expect(journal.durableCommits).toBe(1);
  });

  it('refuses a negative backgroundWaitMs', () => {
    expect(() => openJournal(':memory:', { groupCommit: { backgroundWaitMs: -1 } })).toThrow(
      /backgroundWaitMs/,
    );
  });

  it('commits at once, without waiting, when a batch is full', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { journal } = fileJournal({ maxWaitMs: 60_000, maxBatch: 2 });
    await Promise.all([journal.beginDurably(sale('F1')), journal.beginDurably(sale('F2'))]);
    expect(journal.durableCommits).toBe(1);
  });

  it('undoes a write that throws and rejects its caller alone; the others commit', async () => {
    const { journal, committedRows } = fileJournal();
    journal.begin(sale('DUP'));
    const results = await Promise.allSettled([
      journal.beginDurably(sale('OK1')),
      journal.commitDurably(() => {
        journal.begin(sale('HALF'));
        journal.begin(sale('DUP'));
      }),
      journal.beginDurably(sale('OK2')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const failed = results[1];
    expect(failed?.status === 'rejected' ? (failed.reason as JournalError).code : '').toBe(
      'JOURNAL_DUPLICATE',
    );
    // HALF was written by the failing write before it threw: undone with it.
    expect(journal.findByTransactionId('HALF')).toBeUndefined();
    expect(committedRows()).toBe(3);
  });

  it('commits a write of one statement by itself, alone or in a batch, and undoes it alone when it fails', async () => {
    const { journal, committedRows } = fileJournal();
    journal.begin(sale('TAKEN'));
    await journal.beginDurably(sale('ALONE'));
    expect(committedRows()).toBe(2);
    const before = journal.durableCommits;
    const results = await Promise.allSettled([
      journal.beginDurably(sale('B1')),
      journal.beginDurably(sale('TAKEN')),
      journal.beginDurably({ ...sale('B3'), resolvesEntryId: 999 }),
      journal.beginDurably(sale('B4')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as JournalError).code : ''))).toEqual([
      '',
      'JOURNAL_DUPLICATE',
      'JOURNAL_NOT_FOUND',
      '',
    ]);
    expect(journal.durableCommits).toBe(before + 1);
    expect(committedRows()).toBe(4);
    expect(journal.findByTransactionId('B3')).toBeUndefined();
  });

  it('rejects every caller of a batch whose commit fails, and writes nothing of it', async () => {
    const { journal, committedRows } = fileJournal();
    // A deferred foreign key is checked at COMMIT: a dangling reference makes the commit itself fail.
    journal.db.exec(
      `CREATE TABLE probe (entry_id INTEGER REFERENCES journal_entries(id) DEFERRABLE INITIALLY DEFERRED)`,
    );
    const results = await Promise.allSettled([
      journal.beginDurably(sale('B1')),
      journal.commitDurably(() => journal.db.prepare('INSERT INTO probe (entry_id) VALUES (424242)').run()),
      journal.beginDurably(sale('B2')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of results)
      expect(r.status === 'rejected' && r.reason instanceof JournalError ? r.reason.code : '').toBe(
        'JOURNAL_IO',
      );
    expect(committedRows()).toBe(0);
    expect(journal.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM probe').get()?.n).toBe(0);
    expect(journal.durableCommits).toBe(0);
    // The journal goes on: the next batch commits.
    await journal.beginDurably(sale('B3'));
    expect(committedRows()).toBe(1);
  });

  it('commits a lone write before the event loop turns when no other write is expected', async () => {
    const { journal, committedRows } = fileJournal();
    let turned = false;
    setImmediate(() => (turned = true));
    await journal.beginDurably(sale('M1'));
    expect(turned).toBe(false);
    expect(committedRows()).toBe(1);
  });

  it('waits for the turn while a write is expected, so that a write of another callback shares the commit', async () => {
    const { journal, committedRows } = fileJournal();
    const arrived = journal.expectWrite();
    let second: Promise<unknown> | undefined;
    setImmediate(() => {
      arrived();
      second = journal.beginDurably(sale('W2'));
    });
    await journal.beginDurably(sale('W1'));
    await second;
    expect(committedRows()).toBe(2);
    expect(journal.durableCommits).toBe(1);
    // Once it came, a lone write commits at once again.
    arrived();
    await journal.beginDurably(sale('W3'));
    expect(journal.durableCommits).toBe(2);
  });

  it('lets the event loop turn while a caller writes in a loop', async () => {
    const { journal } = fileJournal();
    let written = 0;
    let turnedAfter = -1;
    setImmediate(() => (turnedAfter = written));
    for (let i = 0; i < 40; i++) {
      await journal.beginDurably(sale(`L${i}`));
      written++;
    }
    expect(turnedAfter).toBeGreaterThan(0);
    expect(turnedAfter).toBeLessThanOrEqual(16);
  });

  it('syncs the log off the event loop while a write is expected, and starts no other commit until that sync is done', async () => {
    const { journal, committedRows } = fileJournal();
    const arrived = journal.expectWrite();
    let rowsWhenFirstResumed = -1;
    const first = journal.beginDurably(sale('Y1')).then((e) => {
      rowsWhenFirstResumed = committedRows();
      return e;
    });
    // Committed at the event loop's turn (a write is expected); its sync is on the thread pool, its caller waits.
    await new Promise<void>((turn) => setImmediate(turn));
    expect(committedRows()).toBe(1);
    expect(rowsWhenFirstResumed).toBe(-1);
    // Queued while that sync runs: committed only after it, in a commit of its own.
    const second = journal.beginDurably(sale('Y2'));
    await Promise.all([first, second]);
    expect(rowsWhenFirstResumed).toBe(1);
    expect(committedRows()).toBe(2);
    expect(journal.durableCommits).toBe(2);
    arrived();
  });

  it('syncs on the event loop instead when the thread pool stays taken', async () => {
    const { journal, committedRows, dir } = fileJournal();
    // Every thread of the pool waits to open a pipe nobody writes to, as host-name lookups hang while the network is
    // down (the pool has UV_THREADPOOL_SIZE threads, 4 by default).
    const pipe = join(dir, 'held');
    execFileSync('mkfifo', [pipe]);
    const held = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, () => open(pipe, 'r'));
    const arrived = journal.expectWrite();
    // Resolves (after the fallback's wait) although the pool's sync cannot start.
    await journal.beginDurably(sale('H1'));
    expect(committedRows()).toBe(1);
    expect(journal.durableCommits).toBe(1);
    arrived();
    // The pool is freed: a writer lets every reader's open through.
    const writer = openSync(pipe, 'w');
    for (const reader of await Promise.all(held)) await reader.close();
    closeSync(writer);
  });

  it('rejects the callers of a commit whose sync fails', async () => {
    const { journal } = fileJournal();
    const arrived = journal.expectWrite();
    // The log's descriptor, replaced by one that cannot be synced.
    (journal as unknown as { logFd: number }).logFd = 2 ** 30;
    const write = journal.beginDurably(sale('F1'));
    await expect(write).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    expect(journal.durableCommits).toBe(0);
    arrived();
  });

  it('logs a sync it could not make as one JOURNAL_IO line with its cause, no stack trace', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString('utf8'));
          cb();
        },
      }),
    });
    const eio = (): NodeJS.ErrnoException =>
      Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    const { journal } = fileJournal(undefined, {
      logger,
      logSync: { background: (_fd, done) => setImmediate(() => done(eio())), inline: fdatasyncSync },
    });
    const arrived = journal.expectWrite();
    await expect(journal.beginDurably(sale('L1'))).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    arrived();
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; err?: unknown });
    const failure = logged.find((l) => l.msg.startsWith('journal log sync failed'));
    expect(failure?.err).toEqual({
      type: 'JournalError',
      code: 'JOURNAL_IO',
      message: 'the journal could not sync its log to disk; it takes no more writes until it is opened again',
      cause: { type: 'Error', code: 'EIO', message: 'EIO: i/o error, fdatasync' },
    });
    expect(lines.join('')).not.toContain('"stack"');
  });

  it('refuses every write once a commit it made could not be synced, and the journal opened again takes them', async () => {
    // The disk fails the sync of the log on the thread pool (EIO), after SQLite made the commit.
    const eio = (): NodeJS.ErrnoException =>
      Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    const failures: JournalError[] = [];
    const { journal, path } = fileJournal(undefined, {
      logSync: { background: (_fd, done) => setImmediate(() => done(eio())), inline: fdatasyncSync },
      onSyncFailure: (e) => failures.push(e),
    });
    const arrived = journal.expectWrite();
    const first = journal.beginDurably(sale('B1'));
    await new Promise<void>((turn) => setImmediate(turn));
    // Queued while that sync runs: it must not be committed behind frames that may not be on disk.
    const behind = journal.beginDurably(sale('B2'));
    await expect(first).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    await expect(behind).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    expect(failures.map((e) => e.code)).toEqual(['JOURNAL_IO']);
    // Every later write is refused, queued or made at once; reads still answer.
    await expect(journal.beginDurably(sale('B3'))).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    expect(() => journal.begin(sale('B4'))).toThrow(JournalError);
    expect(journal.findByTransactionId('B2')).toBeUndefined();
    expect(journal.durableCommits).toBe(0);
    expect(failures).toHaveLength(1);
    arrived();
    journal.close();
    // Opened again (the terminal restarted), the journal starts from what is on disk and writes again.
    const again = openJournal(path);
    try {
      expect(again.findByTransactionId('B2')).toBeUndefined();
      await expect(again.beginDurably(sale('B5'))).resolves.toMatchObject({ transactionId: 'B5' });
    } finally {
      again.close();
    }
  });

  it('refuses every write the same way when the sync on the event loop fails (the thread pool stayed taken)', async () => {
    const failures: JournalError[] = [];
    const { journal } = fileJournal(undefined, {
      // The pool never answers; the fallback's sync on the event loop fails.
      logSync: {
        background: () => undefined,
        inline: () => {
          throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        },
      },
      onSyncFailure: (e) => failures.push(e),
    });
    const arrived = journal.expectWrite();
    await expect(journal.beginDurably(sale('P1'))).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    expect(failures).toHaveLength(1);
    // No write expected any more: the next commit would sync inline, through SQLite, and succeed; it is refused.
    arrived();
    await expect(journal.beginDurably(sale('P2'))).rejects.toMatchObject({ code: 'JOURNAL_IO' });
    expect(journal.findByTransactionId('P2')).toBeUndefined();
  });

  it('settles the commit whose sync is in flight, and commits the writes behind it, when the journal closes', async () => {
    const { journal, committedRows } = fileJournal();
    journal.expectWrite();
    let firstDone = false;
    const first = journal.beginDurably(sale('Z1')).then((e) => {
      firstDone = true;
      return e;
    });
    await new Promise<void>((turn) => setImmediate(turn));
    expect(firstDone).toBe(false);
    const second = journal.beginDurably(sale('Z2'));
    journal.close();
    await expect(first).resolves.toMatchObject({ transactionId: 'Z1' });
    await expect(second).resolves.toMatchObject({ transactionId: 'Z2' });
    expect(committedRows()).toBe(2);
  });

  it('commits writes still queued when the journal closes', async () => {
    const { journal, committedRows } = fileJournal();
    const pending = journal.beginDurably(sale('C1'));
    journal.close();
    await expect(pending).resolves.toMatchObject({ transactionId: 'C1' });
    expect(committedRows()).toBe(1);
  });
});

describe('the journaled sender over the group commit', () => {
  it('starts each send only after the commit that holds its entry, and shares commits between sends in flight', async () => {
    const { journal, committedRows } = fileJournal();
    const seen: { transactionId: string; committed: number; state: string | undefined }[] = [];
    const sender = new JournaledSender(journal, {
      transmit: (r: OutgoingRequest): Promise<TransmitOutcome> => {
        const entry = journal.findByTransactionId(r.transactionId ?? '');
        seen.push({ transactionId: r.transactionId ?? '', committed: committedRows(), state: entry?.state });
        return Promise.resolve({
          kind: 'approved',
          status: 'AUTHORIZED',
          gatewayId: `g-${r.transactionId ?? ''}`,
        });
      },
    });
    const ids = ['S1', 'S2', 'S3', 'S4'];
    const sent = await Promise.all(ids.map((id) => sender.send(request(id))));
    // Every entry was on disk (visible to another connection) before its request went out.
    expect(seen.map((s) => s.committed)).toEqual([4, 4, 4, 4]);
    expect(seen.map((s) => s.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(sent.map((s) => s.entry.state)).toEqual(['approved', 'approved', 'approved', 'approved']);
    // One commit for the four begins, one for the four outcomes.
    expect(journal.durableCommits).toBe(2);
    expect(sender.inFlight).toBe(0);
  });

  it('says a request is answered before its outcome is journaled', async () => {
    const { journal } = fileJournal();
    const sender = new JournaledSender(journal, {
      transmit: () => Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g-A1' }),
    });
    const entry = await journal.beginDurably({ ...sale('A1'), sentAt: new Date() });
    const atAnswer: unknown[] = [];
    const outcome = await sender.sendBegun(entry, request('A1'), {
      markedSent: true,
      onAnswered: (o) => atAnswer.push(o.kind, journal.get(entry.id)?.state),
    });
    expect(atAnswer).toEqual(['approved', 'sent']);
    expect(outcome.kind).toBe('approved');
    expect(journal.get(entry.id)?.state).toBe('approved');
  });

  it('sends nothing when its entry cannot be journaled', async () => {
    const { journal } = fileJournal();
    journal.begin(sale('TAKEN'));
    let sends = 0;
    const sender = new JournaledSender(journal, {
      transmit: () => {
        sends++;
        return Promise.resolve({ kind: 'approved' });
      },
    });
    await expect(sender.send(request('TAKEN'))).rejects.toMatchObject({ code: 'JOURNAL_DUPLICATE' });
    expect(sends).toBe(0);
    expect(sender.inFlight).toBe(0);
  });

  it('owns an entry from the commit that creates it', async () => {
    const { journal } = fileJournal();
    let ownedAtCommit: boolean | undefined;
    const sender = new JournaledSender(journal, {
      transmit: () => Promise.resolve({ kind: 'approved' }),
    });
    // A write committed in the same batch, right after the sender's begin, sees the entry owned.
    const sending = sender.send(request('O1'));
    const probe = journal.commitDurably(() => {
      const e = journal.findByTransactionId('O1');
      ownedAtCommit = e !== undefined && sender.owns(e.id);
    });
    await Promise.all([sending, probe]);
    expect(ownedAtCommit).toBe(true);
  });
});
