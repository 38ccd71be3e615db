import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError } from './errors.js';
import { FollowUpStore, type NewFollowUp } from './follow-ups.js';
import { openJournal, type SqliteJournal } from './journal.js';

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;
const now = (): Date => new Date(t);

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  t = T0;
});

function setup(path = ':memory:') {
  const journal = openJournal(path, { now });
  journals.push(journal);
  return { journal, followUps: new FollowUpStore(journal) };
}

function reversal(tx: string, over: Partial<NewFollowUp> = {}): NewFollowUp {
  return {
    kind: 'reverse-authorization',
    authorizationTransactionId: tx,
    gatewayId: '7000000000000000000001',
    amountMinor: 1_500,
    currency: 'EUR',
    includeEmvTags: true,
    reason: 'capture voided by the operator',
    ...over,
  };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof JournalError) return e.code;
    throw e;
  }
  return 'no error';
}

describe('FollowUpStore', () => {
  it('adds an obligation due now and lists it until it is complete', () => {
    const { followUps } = setup();
    const f = followUps.add(reversal('A1'));
    expect(f).toEqual({
      id: f.id,
      ...reversal('A1'),
      createdAtMs: T0,
      dueAtMs: T0,
      attempts: 0,
    });
    expect(followUps.due()).toEqual([f]);
    expect(followUps.open()).toEqual([f]);
    t = T0 + 1_000;
    followUps.complete(f.id, 'reversed');
    expect(followUps.due()).toEqual([]);
    expect(followUps.open()).toEqual([]);
    expect(followUps.get(f.id)).toMatchObject({ doneAtMs: T0 + 1_000, outcome: 'reversed' });
    // Completing again the same way is a no-op; another way is refused.
    followUps.complete(f.id, 'reversed');
    expect(code(() => followUps.complete(f.id, 'failed'))).toBe('JOURNAL_BAD_TRANSITION');
  });

  it('creates one obligation per kind and authorization, even after it is done', () => {
    const { followUps, journal } = setup();
    const first = followUps.add(reversal('A1'));
    expect(followUps.add(reversal('A1', { reason: 'replayed outcome' }))).toEqual(first);
    followUps.complete(first.id, 'reversed');
    // A replay after the reversal must not ask for a second one.
    expect(followUps.add(reversal('A1')).outcome).toBe('reversed');
    expect(followUps.open()).toEqual([]);
    expect(journal.db.prepare('SELECT COUNT(*) AS n FROM follow_ups').get()).toEqual({ n: 1 });
  });

  it('keeps a capture of an authorization apart from its reversal: one of each kind, each with its own terms', () => {
    const { followUps } = setup();
    const release = followUps.add(reversal('A1'));
    const capture = followUps.add(reversal('A1', { kind: 'capture-authorization', amountMinor: 800 }));
    expect(capture).toMatchObject({ kind: 'capture-authorization', amountMinor: 800 });
    expect(capture.id).not.toBe(release.id);
    // A replayed step's outcome finds the capture written already.
    expect(followUps.add(reversal('A1', { kind: 'capture-authorization', amountMinor: 800 }))).toEqual(
      capture,
    );
    expect(followUps.open().map((f) => f.kind)).toEqual(['reverse-authorization', 'capture-authorization']);
  });

  it('refuses a second obligation for the same authorization with other terms', () => {
    const { followUps } = setup();
    followUps.add(reversal('A1'));
    expect(code(() => followUps.add(reversal('A1', { amountMinor: 900 })))).toBe('JOURNAL_DUPLICATE');
    expect(code(() => followUps.add(reversal('A1', { gatewayId: 'other' })))).toBe('JOURNAL_DUPLICATE');
    expect(code(() => followUps.add(reversal('A1', { includeEmvTags: false })))).toBe('JOURNAL_DUPLICATE');
    expect(followUps.open()).toHaveLength(1);
  });

  it('gives what is due, earliest first, and keeps later ones back', () => {
    const { followUps } = setup();
    const later = followUps.add(reversal('A1', { dueAtMs: T0 + 60_000 }));
    const soon = followUps.add(reversal('A2', { dueAtMs: T0 + 10 }));
    const now0 = followUps.add(reversal('A3'));
    expect(followUps.due(T0).map((f) => f.id)).toEqual([now0.id]);
    expect(followUps.due(T0 + 10).map((f) => f.id)).toEqual([now0.id, soon.id]);
    expect(followUps.due(T0 + 60_000).map((f) => f.id)).toEqual([now0.id, soon.id, later.id]);
    expect(followUps.open().map((f) => f.id)).toEqual([now0.id, soon.id, later.id]);
  });

  it('postpones a failed try and counts it', () => {
    const { followUps } = setup();
    const f = followUps.add(reversal('A1'));
    const p = followUps.postpone(f.id, T0 + 5_000, 'declined: MISSING_FIELD');
    expect(p).toMatchObject({ attempts: 1, lastError: 'declined: MISSING_FIELD', dueAtMs: T0 + 5_000 });
    expect(followUps.due(T0)).toEqual([]);
    expect(followUps.postpone(f.id, T0 + 9_000, 'unknown outcome').attempts).toBe(2);
    followUps.complete(f.id, 'reversed');
    expect(code(() => followUps.postpone(f.id, T0, 'late'))).toBe('JOURNAL_BAD_TRANSITION');
  });

  it('brings an open obligation forward, never back, and leaves its tries and a done one alone', () => {
    const { followUps } = setup();
    const f = followUps.add(reversal('A1', { dueAtMs: T0 + 86_400_000 }));
    followUps.dueBy(f.id, T0 + 100);
    expect(followUps.get(f.id)).toMatchObject({ dueAtMs: T0 + 100, attempts: 0 });
    followUps.dueBy(f.id, T0 + 5_000);
    expect(followUps.get(f.id)?.dueAtMs).toBe(T0 + 100);
    followUps.complete(f.id, 'reversed');
    followUps.dueBy(f.id, T0);
    expect(followUps.get(f.id)).toMatchObject({ dueAtMs: T0 + 100, outcome: 'reversed' });
    expect(code(() => followUps.dueBy(99, T0))).toBe('JOURNAL_NOT_FOUND');
  });

  it('commits an obligation with the outcome that creates it, or not at all', () => {
    const { followUps, journal } = setup();
    const capture = journal.begin({
      transactionId: 'C1',
      service: 'capture',
      comments: 'Parking Capture',
      method: 'POST',
      path: '/pts/v2/payments/7000000000000000000001/captures',
      body: Buffer.from('{}'),
      amountMinor: 1_500,
      currency: 'EUR',
      parentGatewayId: '7000000000000000000001',
      moneyMoving: true,
    });
    journal.markSent(capture.id);
    journal.recordOutcome(capture.id, { state: 'approved', gatewayId: '8000000000000000000001' });
    expect(
      code(() =>
        journal.atomically(true, () => {
          followUps.add(reversal('A1'));
          throw new JournalError('JOURNAL_IO', 'the void outcome could not be written');
        }),
      ),
    ).toBe('JOURNAL_IO');
    expect(followUps.open()).toEqual([]);

    journal.atomically(true, () => {
      followUps.add(reversal('A1'));
    });
    expect(followUps.open()).toHaveLength(1);
  });

  it('keeps open obligations across a restart', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'follow-ups-')), 'journal.db');
    const first = setup(path);
    const f = first.followUps.add(reversal('A1'));
    first.followUps.add(reversal('A2'));
    first.followUps.complete(f.id, 'reversed');
    first.journal.close();
    expect(
      setup(path)
        .followUps.open()
        .map((x) => x.authorizationTransactionId),
    ).toEqual(['A2']);
  });

  it.each([
    ['an unknown kind', { kind: 'refund' as 'reverse-authorization' }],
    ['a fractional amount', { amountMinor: 1.25 }],
    ['an unknown currency', { currency: 'EU' }],
    ['an empty authorization id', { authorizationTransactionId: '' }],
    ['an empty reason', { reason: '' }],
    ['a bad due time', { dueAtMs: -5 }],
    ['a non-boolean tag flag', { includeEmvTags: 1 as unknown as boolean }],
  ])('refuses %s with JOURNAL_INVALID', (_name, over) => {
    const { followUps } = setup();
    expect(code(() => followUps.add(reversal('A1', over)))).toBe('JOURNAL_INVALID');
    expect(followUps.open()).toEqual([]);
  });

  it('refuses bad ids with typed errors', () => {
    const { followUps } = setup();
    expect(code(() => followUps.complete(99, 'reversed'))).toBe('JOURNAL_NOT_FOUND');
    expect(code(() => followUps.complete(0, 'reversed'))).toBe('JOURNAL_INVALID');
    expect(code(() => followUps.postpone(99, T0, 'x'))).toBe('JOURNAL_NOT_FOUND');
    expect(code(() => followUps.get(1.5))).toBe('JOURNAL_INVALID');
    expect(code(() => followUps.add(null as unknown as NewFollowUp))).toBe('JOURNAL_INVALID');
  });
});
