import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError } from './errors.js';
import { HoldStore, type StoredHold } from './holds.js';
import { NOT_SENT, openJournal, type SqliteJournal } from './journal.js';

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;
const now = (): Date => new Date(t);

function setup(path = ':memory:') {
  const journal = openJournal(path, { now });
  journals.push(journal);
  return { journal, holds: new HoldStore(journal) };
}

function hold(id: string, over: Partial<StoredHold> = {}): StoredHold {
  return {
    holdId: id,
    fingerprint: `fp-${id}`,
    maskedPan: '411111******1111',
    gatewayId: `7000000000000000000${id.length}`,
    transactionId: id,
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: `card_${id}`,
    includeEmvTags: true,
    enteredAtMs: T0,
    expiresAtMs: T0 + 3_600_000,
    ...over,
  };
}

/** The message of what made the journal refuse to commit (`atomically` wraps a foreign throw as JOURNAL_IO). */
function causeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof JournalError && e.cause instanceof Error) return e.cause.message;
    throw e;
  }
  throw new Error('expected a throw');
}

function preauth(transactionId: string) {
  return {
    transactionId,
    service: 'preauth',
    comments: 'Parking Auth',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from('{}'),
    amountMinor: 2_000,
    currency: 'GBP',
    moneyMoving: true,
  } as const;
}

describe('HoldStore', () => {
  it('opens, finds and claims a hold by fingerprint once', () => {
    const { holds } = setup();
    const h = hold('H1');
    holds.open(h);
    expect(holds.has('H1')).toBe(true);
    expect(holds.get('H1')).toEqual(h);
    expect(holds.size).toBe(1);
    expect(holds.unclaimed()).toEqual([h]);

    expect(holds.claim('fp-H1')).toEqual(h);
    // Claimed: out of the expiry watch, still open, not claimable twice.
    expect(holds.unclaimed()).toEqual([]);
    expect(holds.has('H1')).toBe(true);
    expect(holds.claim('fp-H1')).toBeNull();
    expect(holds.claimById('H1')).toBeNull();
    expect(holds.claim('fp-other')).toBeNull();
    expect(holds.claim('')).toBeNull();
  });

  it('claims the open hold of a card that entered last, then the one before', () => {
    const { holds } = setup();
    holds.open(hold('H2', { fingerprint: 'fp', enteredAtMs: T0 + 5 }));
    holds.open(hold('H1', { fingerprint: 'fp', enteredAtMs: T0 }));
    expect(holds.claim('fp')?.holdId).toBe('H2');
    expect(holds.claim('fp')?.holdId).toBe('H1');
    expect(holds.claim('fp')).toBeNull();
  });

  it('closes a captured or reversed hold for good and keeps the first resolution', () => {
    const { holds, journal } = setup();
    const h = hold('H1');
    holds.open(h);
    t = T0 + 60_000;
    holds.close(h, 'captured');
    expect(holds.has('H1')).toBe(false);
    expect(holds.get('H1')).toBeUndefined();
    expect(holds.size).toBe(0);
    expect(holds.claimById('H1')).toBeNull();
    // A late `returned` must not revive a settled authorization.
    holds.close(h, 'returned');
    holds.close(h, 'reversed');
    expect(holds.has('H1')).toBe(false);
    expect(
      journal.db.prepare('SELECT closed_at, resolution, claimed FROM holds WHERE hold_id = ?').get('H1'),
    ).toEqual({ closed_at: T0 + 60_000, resolution: 'captured', claimed: 0 });
    expect(() => holds.open(h)).toThrowError(expect.objectContaining({ code: 'JOURNAL_DUPLICATE' }) as Error);
  });

  it('puts a returned hold back under watch with the fields passed', () => {
    const { holds } = setup();
    holds.open(hold('H1'));
    const claimed = holds.claimById('H1');
    expect(claimed).not.toBeNull();
    const grown = { ...hold('H1'), authorizedMinor: 3_500 };
    holds.close(grown, 'returned');
    expect(holds.unclaimed()).toEqual([grown]);
    expect(holds.claimById('H1')).toEqual(grown);
  });

  it('re-opening an open hold replaces it and releases its claim', () => {
    const { holds } = setup();
    holds.open(hold('H1'));
    holds.claim('fp-H1');
    holds.open(hold('H1', { expiresAtMs: T0 + 1 }));
    expect(holds.unclaimed()).toEqual([hold('H1', { expiresAtMs: T0 + 1 })]);
    expect(holds.size).toBe(1);
  });

  it("brings the expiry of a card's earlier open holds to its new entry, in the same commit, also across a restart", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'holds-')), 'journal.db');
    const first = setup(path);
    const oldest = hold('H0', { fingerprint: 'fp-card', enteredAtMs: T0 - 60_000 });
    const earlier = hold('H1', { fingerprint: 'fp-card' });
    expect(first.holds.open(oldest)).toEqual([]);
    // Opening the card's new hold returns the unclaimed holds it made due, for the expiry watch to reverse at once.
    expect(first.holds.open(earlier)).toEqual([{ ...oldest, expiresAtMs: T0 }]);
    // H0's expiry claims it; meanwhile the card enters a third time.
    expect(first.holds.claimById('H0')).not.toBeNull();
    expect(first.holds.open(hold('OTHER'))).toEqual([]);
    const entry = T0 + 600_000;
    expect(first.holds.open(hold('H2', { fingerprint: 'fp-card', enteredAtMs: entry }))).toEqual([
      { ...earlier, expiresAtMs: entry },
    ]);
    // The claimant gives H0 back with the expiry it read when the hold was opened: it stays due.
    first.holds.close(oldest, 'returned');
    first.journal.close();

    const second = setup(path);
    expect(second.holds.unclaimed().map((h) => [h.holdId, h.expiresAtMs])).toEqual([
      ['H0', T0],
      ['H1', entry],
      ['OTHER', T0 + 3_600_000],
      ['H2', T0 + 3_600_000],
    ]);
  });

  it('lists the open holds, claimed or not, the last entry first, at most the limit asked', () => {
    const { holds } = setup();
    holds.open(hold('A1', { enteredAtMs: T0 }));
    holds.open(hold('B1', { enteredAtMs: T0 + 60_000 }));
    holds.open(hold('C1', { enteredAtMs: T0 + 120_000 }));
    holds.claimById('B1');
    holds.close(hold('C1'), 'reversed');
    expect(holds.listOpen(10).map((s) => [s.hold.holdId, s.claimed])).toEqual([
      ['B1', true],
      ['A1', false],
    ]);
    expect(holds.listOpen(1).map((s) => s.hold)).toEqual([hold('B1', { enteredAtMs: T0 + 60_000 })]);
    for (const bad of [0, 1001, 1.5, Number.NaN])
      expect(() => holds.listOpen(bad)).toThrow(expect.objectContaining({ code: 'JOURNAL_INVALID' }));
  });

  it('drops an open hold, claimed or not, once', () => {
    const { holds } = setup();
    holds.open(hold('H1'));
    holds.open(hold('H2'));
    holds.claim('fp-H2');
    expect(holds.drop('H1')).toBe(true);
    expect(holds.drop('H2')).toBe(true);
    expect(holds.drop('H1')).toBe(false);
    expect(holds.drop('nope')).toBe(false);
    expect(holds.size).toBe(0);
  });

  it('keeps holds across a restart and puts holds claimed at the crash back under watch', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'holds-')), 'journal.db');
    const first = setup(path);
    first.holds.open(hold('H1'));
    first.holds.open(hold('H2'));
    first.holds.open(hold('H3'));
    first.holds.claim('fp-H1');
    first.holds.close(hold('H3'), 'reversed');
    first.journal.close();

    const second = setup(path);
    expect(second.holds.unclaimed().map((h) => h.holdId)).toEqual(['H1', 'H2']);
    expect(second.holds.claim('fp-H1')).toEqual(hold('H1'));
  });

  it('commits a hold with the journal outcome that opens it, or not at all', () => {
    const { holds, journal } = setup();
    const entry = journal.begin(preauth('H1'));
    journal.markSent(entry.id);
    expect(
      causeOf(() =>
        journal.atomically(true, () => {
          journal.recordOutcome(entry.id, { state: 'approved', gatewayId: '7000000000000000000002' });
          holds.open(hold('H1'));
          throw new Error('crash before the commit');
        }),
      ),
    ).toBe('crash before the commit');
    expect(holds.has('H1')).toBe(false);
    expect(holds.size).toBe(0);
    expect(journal.get(entry.id)?.state).toBe('sent');

    journal.atomically(true, () => {
      journal.recordOutcome(entry.id, { state: 'approved', gatewayId: '7000000000000000000002' });
      holds.open(hold('H1'));
    });
    expect(holds.has('H1')).toBe(true);
    expect(journal.get(entry.id)?.state).toBe('approved');
  });

  it('closes a hold in the same transaction as the outcome that settles it, or not at all', () => {
    const { holds, journal } = setup();
    holds.open(hold('H1'));
    holds.claim('fp-H1');
    expect(
      causeOf(() =>
        journal.atomically(true, () => {
          holds.close(hold('H1'), 'captured');
          throw new Error('capture outcome not written');
        }),
      ),
    ).toBe('capture outcome not written');
    expect(holds.has('H1')).toBe(true);
    // The claim was made before the failed transaction and stands.
    expect(holds.unclaimed()).toEqual([]);
  });

  it('settles the open hold of an authorization inside the outcome that settles it, claimed or not, once', () => {
    const { holds, journal } = setup();
    holds.open(hold('H1'));
    holds.open(hold('H2'));
    holds.claim('fp-H1');
    const capture = journal.begin({ ...preauth('C1'), service: 'capture', comments: 'Parking Capture' });
    journal.markSent(capture.id);
    expect(
      causeOf(() =>
        journal.atomically(true, () => {
          journal.recordOutcome(capture.id, { state: 'approved', gatewayId: '7000000000000000000003' });
          holds.settle('H1', 'captured');
          throw new Error('crash before the commit');
        }),
      ),
    ).toBe('crash before the commit');
    expect(holds.has('H1')).toBe(true);
    expect(journal.get(capture.id)?.state).toBe('sent');

    t = T0 + 120_000;
    expect(
      journal.atomically(true, () => {
        journal.recordOutcome(capture.id, { state: 'approved', gatewayId: '7000000000000000000003' });
        return holds.settle('H1', 'captured');
      }),
    ).toBe(true);
    expect(holds.settle('H2', 'reversed')).toBe(true);
    // Closed already (the machine's own close comes after), unknown, or not a resolution of a settlement.
    expect(holds.settle('H1', 'reversed')).toBe(false);
    expect(holds.settle('nope', 'captured')).toBe(false);
    holds.close(hold('H1'), 'returned');
    expect(holds.size).toBe(0);
    expect(
      journal.db.prepare('SELECT hold_id, closed_at, resolution, claimed FROM holds ORDER BY hold_id').all(),
    ).toEqual([
      { hold_id: 'H1', closed_at: T0 + 120_000, resolution: 'captured', claimed: 0 },
      { hold_id: 'H2', closed_at: T0 + 120_000, resolution: 'reversed', claimed: 0 },
    ]);
    expect(() => holds.settle('H1', 'returned' as 'captured')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('answers an exit: claims an open hold, never one being settled; recognises a recent capture, for a while', () => {
    t = T0;
    const { holds } = setup();
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    holds.open(hold('H2', { fingerprint: 'fp-card', enteredAtMs: T0 + 1 }));
    const settlingIds = new Set(['H1']);
    const rules = {
      settling: (h: StoredHold) => settlingIds.has(h.holdId),
      recentCaptureMs: 3_600_000,
      // No capture of a dropped hold stands here (it was released).
      captureStands: (_h: StoredHold, resolution: 'captured' | 'dropped') => resolution === 'captured',
    };
    // The exit gets the open hold of the card's last entry (H1's reversal is unknown, which does not matter here).
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'claimed',
      hold: hold('H2', { fingerprint: 'fp-card', enteredAtMs: T0 + 1 }),
    });
    // H2 is claimed (an exit has it): nothing to claim, and not "no entry" either — nor H1 instead.
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H2' });
    expect(holds.unclaimed().map((h) => h.holdId)).toEqual(['H1']);
    // H2 given back while being settled itself: still not H1, whose entry is not the car's at the exit.
    holds.close(hold('H2', { fingerprint: 'fp-card', enteredAtMs: T0 + 1 }), 'returned');
    settlingIds.add('H2');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H2' });
    expect(holds.unclaimed().map((h) => h.holdId)).toEqual(['H1', 'H2']);
    settlingIds.delete('H2');
    expect(holds.claimAtExit('fp-card', rules)).toMatchObject({ kind: 'claimed', hold: { holdId: 'H2' } });

    t = T0 + 60_000;
    holds.settle('H2', 'captured');
    holds.drop('H1');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'captured',
      hold: hold('H2', { fingerprint: 'fp-card', enteredAtMs: T0 + 1 }),
      capturedAtMs: T0 + 60_000,
    });
    expect(holds.claimAtExit('fp-other', rules)).toEqual({ kind: 'none' });
    // The capture is recognised for `recentCaptureMs` after it, no longer; a hold dropped or reversed never is.
    t = T0 + 60_000 + 3_600_000;
    expect(holds.claimAtExit('fp-card', rules).kind).toBe('captured');
    t = T0 + 60_000 + 3_600_001;
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });
    t = T0;
    expect(() => holds.claimAtExit('fp-card', { ...rules, recentCaptureMs: -1 })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('never charges a stay paid by phone: the exit claims its hold only to release it, and opens as paid after', () => {
    t = T0;
    const { holds, journal } = setup();
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    const settlingIds = new Set<string>();
    const rules = {
      settling: (h: StoredHold) => settlingIds.has(h.holdId),
      recentCaptureMs: 3_600_000,
      captureStands: () => true,
    };
    t = T0 + 60_000;
    expect(holds.paidByLink('H1', 'PT1_GATE-L1', T0 + 60_000)).toBe(true);
    // The first link stays; the hold is due from the payment on (its expiry watch releases it), never later.
    expect(holds.paidByLink('H1', 'PT1_GATE-L2', T0 + 90_000)).toBe(true);
    expect(holds.get('H1')?.expiresAtMs).toBe(T0 + 60_000);
    expect(holds.paidByLink('H9', 'PT1_GATE-L1', T0 + 60_000)).toBe(false);
    // No open stay for the card's entry: the car left.
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H1' });
    // Being settled by someone else (the expiry watch's reversal): the exit only opens.
    settlingIds.add('H1');
    const paid = hold('H1', { fingerprint: 'fp-card', expiresAtMs: T0 + 60_000 });
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'paid-by-link',
      hold: paid,
      linkId: 'PT1_GATE-L1',
      claimed: false,
    });
    settlingIds.delete('H1');
    // Nobody settles it: claimed for the exit, which releases it; a second exit only opens.
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'paid-by-link',
      hold: paid,
      linkId: 'PT1_GATE-L1',
      claimed: true,
    });
    expect(holds.claimAtExit('fp-card', rules)).toMatchObject({ kind: 'paid-by-link', claimed: false });
    // Released: shown paid again for `recentCaptureMs`, then no entry.
    t = T0 + 120_000;
    expect(holds.settle('H1', 'reversed')).toBe(true);
    expect(holds.claimAtExit('fp-card', rules)).toMatchObject({ kind: 'paid-by-link', claimed: false });
    t = T0 + 120_001 + 3_600_000;
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });
    expect(journal.db.prepare('SELECT paid_link_id FROM holds').all()).toEqual([
      { paid_link_id: 'PT1_GATE-L1' },
    ]);
    expect(() => holds.paidByLink('H1', '', T0)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('never charges by card a stay whose payment by phone is in doubt; a late payment of its link pays it', () => {
    t = T0;
    const { holds } = setup();
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    const rules = { settling: () => false, recentCaptureMs: 3_600_000, captureStands: () => true };
    t = T0 + 60_000;
    expect(holds.phonePaymentInDoubt('H1', 'PT1_GATE-L1')).toBe(true);
    // The first link stays; no such open hold: nothing.
    expect(holds.phonePaymentInDoubt('H1', 'PT1_GATE-L2')).toBe(true);
    expect(holds.phonePaymentInDoubt('H9', 'PT1_GATE-L1')).toBe(false);
    expect(holds.paymentInDoubt('H1', 'PT1_GATE-L1')).toBe(true);
    expect(holds.paymentInDoubt('H1', 'PT1_GATE-L2')).toBe(false);
    // Neither the exit nor the entry takes it as an open stay: nothing is claimed, charged or released by the exit.
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'settling',
      holdId: 'H1',
      phonePaymentInDoubt: 'PT1_GATE-L1',
    });
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H1' });
    // Its expiry is not changed: the watch still covers it, and releases it at its time.
    expect(holds.get('H1')?.expiresAtMs).toBe(T0 + 3_600_000);
    expect(holds.unclaimed().map((h) => h.holdId)).toEqual(['H1']);
    // Listed for the operator with its link.
    expect(holds.listOpen(10)).toEqual([
      { hold: hold('H1', { fingerprint: 'fp-card' }), claimed: false, doubtLinkId: 'PT1_GATE-L1' },
    ]);
    // The link's payment notified late counts for the stay: paid by phone, due from the payment on.
    expect(holds.paidByLink('H1', 'PT1_GATE-L1', T0 + 90_000)).toBe(true);
    expect(holds.claimAtExit('fp-card', rules)).toMatchObject({
      kind: 'paid-by-link',
      linkId: 'PT1_GATE-L1',
    });
    expect(holds.get('H1')?.expiresAtMs).toBe(T0 + 90_000);
    // Released, it stays the link's doubt (a payment notified after its release still pays the stay).
    expect(holds.settle('H1', 'reversed')).toBe(true);
    expect(holds.paymentInDoubt('H1', 'PT1_GATE-L1')).toBe(true);
    // A stay paid already, or closed, is never put in doubt.
    holds.open(hold('H2', { fingerprint: 'fp-two' }));
    expect(holds.paidByLink('H2', 'PT1_GATE-L3', T0 + 90_000)).toBe(true);
    expect(holds.phonePaymentInDoubt('H2', 'PT1_GATE-L3')).toBe(false);
    expect(holds.phonePaymentInDoubt('H1', 'PT1_GATE-L1')).toBe(false);
    expect(() => holds.phonePaymentInDoubt('H1', '')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('answers an entry with the stay the exit would claim, claiming nothing: open, settling or none', () => {
    t = T0;
    const { holds } = setup();
    const settlingIds = new Set<string>();
    const rules = { settling: (h: StoredHold) => settlingIds.has(h.holdId) };
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'none' });
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    // Inside: the open hold, still under expiry watch (the lookup claims nothing, however often it is asked).
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({
      kind: 'open',
      hold: hold('H1', { fingerprint: 'fp-card' }),
    });
    expect(holds.stayAtEntry('fp-card', rules).kind).toBe('open');
    expect(holds.unclaimed().map((h) => h.holdId)).toEqual(['H1']);
    expect(holds.stayAtEntry('fp-other', rules)).toEqual({ kind: 'none' });
    // Being settled by someone else (its reversal unknown, its release decided): as the exit sees it.
    settlingIds.add('H1');
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H1' });
    settlingIds.delete('H1');
    // Claimed by the expiry watch (or an exit): settling, as the exit sees it.
    expect(holds.claimById('H1')).not.toBeNull();
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'settling', holdId: 'H1' });
    // Closed: the card is no longer inside.
    holds.settle('H1', 'reversed');
    expect(holds.stayAtEntry('fp-card', rules)).toEqual({ kind: 'none' });
    expect(() => holds.stayAtEntry(42 as unknown as string, rules)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('shows no exit paid when the card entered again after its capture and that hold was released unpaid', () => {
    t = T0;
    const { holds } = setup();
    const rules = { settling: () => false, recentCaptureMs: 86_400_000, captureStands: () => true };
    // The card's first stay: entered, exited, captured.
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    t = T0 + 3_600_000;
    holds.settle('H1', 'captured');
    // The same card enters again; at its exit the capture is declined, the hold released (pay later: the link is
    // not paid, the gate stays shut).
    holds.open(hold('H2', { fingerprint: 'fp-card', enteredAtMs: T0 + 7_200_000 }));
    t = T0 + 9_000_000;
    expect(holds.claimAtExit('fp-card', rules).kind).toBe('claimed');
    holds.settle('H2', 'reversed');
    // The card is tapped again at the exit: the second stay is not paid, the first stay's capture does not pay it.
    t = T0 + 9_060_000;
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });
  });

  it('shows the exit paid when the hold of the last stay was dropped with a capture of it standing', () => {
    t = T0;
    const { holds } = setup();
    const standing = new Set<string>();
    const rules = {
      settling: () => false,
      recentCaptureMs: 86_400_000,
      captureStands: (h: StoredHold) => standing.has(h.holdId),
    };
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    t = T0 + 3_600_000;
    // The exit's capture had its answer lost; recovery found it standing, and the hold was dropped.
    holds.drop('H1');
    t = T0 + 3_660_000;
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });
    standing.add('H1');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'captured',
      hold: hold('H1', { fingerprint: 'fp-card' }),
      capturedAtMs: T0 + 3_600_000,
    });
  });

  it('shows no exit paid when the capture of the last stay no longer stands (voided, or refunded in full)', () => {
    t = T0;
    const { holds } = setup();
    const given = new Set<string>();
    const rules = {
      settling: () => false,
      recentCaptureMs: 86_400_000,
      captureStands: (h: StoredHold) => !given.has(h.holdId),
    };
    holds.open(hold('H1', { fingerprint: 'fp-card' }));
    t = T0 + 3_600_000;
    holds.settle('H1', 'captured');
    t = T0 + 3_660_000;
    expect(holds.claimAtExit('fp-card', rules).kind).toBe('captured');
    // The operator gave the customer's money back: the stay is not paid any more.
    given.add('H1');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });
  });

  it('tells a settled authorization and a reversal in flight from the journal', () => {
    const { journal } = setup();
    const auth = journal.begin(preauth('A1'));
    journal.markSent(auth.id);
    journal.recordOutcome(auth.id, { state: 'approved', gatewayId: '7000000000000000000001' });
    expect({ settled: journal.authorizationSettled('A1'), inFlight: journal.reversalInFlight('A1') }).toEqual(
      {
        settled: false,
        inFlight: false,
      },
    );
    const reversal = journal.begin({
      ...preauth('R1'),
      service: 'reversal',
      comments: 'REVERSAL',
      referencedTransactionId: 'A1',
    });
    journal.markSent(reversal.id);
    expect({ settled: journal.authorizationSettled('A1'), inFlight: journal.reversalInFlight('A1') }).toEqual(
      {
        settled: false,
        inFlight: true,
      },
    );
    journal.recordOutcome(reversal.id, { state: 'unknown' });
    // Taken over by recovery (unsettledAuthorizations' rule), and in flight until recovery resolves it.
    expect({ settled: journal.authorizationSettled('A1'), inFlight: journal.reversalInFlight('A1') }).toEqual(
      {
        settled: true,
        inFlight: true,
      },
    );
    journal.resolve(reversal.id, 'timeout-reversal');
    expect({ settled: journal.authorizationSettled('A1'), inFlight: journal.reversalInFlight('A1') }).toEqual(
      {
        settled: true,
        inFlight: false,
      },
    );
    expect(journal.authorizationSettled('unknown-tx')).toBe(false);
  });

  it('does not count an authorization released by a reversal that provably never left (resolved not-sent)', () => {
    const { journal } = setup();
    const auth = journal.begin(preauth('A1'));
    journal.markSent(auth.id);
    journal.recordOutcome(auth.id, { state: 'approved', gatewayId: '7000000000000000000001' });
    const reversal = journal.begin({
      ...preauth('R1'),
      service: 'reversal',
      comments: 'REVERSAL',
      referencedTransactionId: 'A1',
    });
    // The gateway could not be reached (or refused the credentials unprocessed): nothing was released.
    journal.resolve(reversal.id, NOT_SENT);
    expect({
      settled: journal.authorizationSettled('A1'),
      inFlight: journal.reversalInFlight('A1'),
      unsettled: journal.unsettledAuthorizations().map((e) => e.transactionId),
    }).toEqual({ settled: false, inFlight: false, unsettled: ['A1'] });
  });

  it('counts an authorization settled by a capture that recovery found standing (its timeout void NOT_VOIDABLE)', () => {
    const { journal } = setup();
    const auth = journal.begin(preauth('A1'));
    journal.markSent(auth.id);
    journal.recordOutcome(auth.id, { state: 'approved', gatewayId: '7000000000000000000001' });
    // The exit's capture: its answer came after nobody waited for it (or was lost), and the timeout void of it was
    // refused past the settlement cut-off: the capture stands, the customer has paid.
    const capture = journal.begin({
      ...preauth('C1'),
      service: 'capture',
      comments: 'Parking Capture',
      referencedTransactionId: 'A1',
    });
    journal.markSent(capture.id);
    journal.recordOutcome(capture.id, { state: 'unknown', gatewayId: '7000000000000000000002' });
    const attempt = journal.begin({
      ...preauth('TV1'),
      service: 'timeout-void',
      comments: 'VOID Timeout',
      referencedTransactionId: 'C1',
      resolvesEntryId: capture.id,
      amountMinor: undefined,
      currency: undefined,
    });
    journal.recordOutcome(attempt.id, { state: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 });
    journal.resolve(capture.id, 'not-voidable', attempt.id);
    // Neither an exit may capture it again nor the start or the expiry watch reverse it as an orphan.
    expect(journal.authorizationSettled('A1')).toBe(true);
    expect(journal.unsettledAuthorizations().map((e) => e.transactionId)).toEqual([]);
  });

  it.each([
    ['AUTH_ALREADY_REVERSED', 'rejected'],
    ['AUTH_ALREADY_REVERSED', 'declined'],
    ['TRANSACTION_ALREADY_REVERSED_OR_SETTLED', 'rejected'],
    ['TRANSACTION_ALREADY_REVERSED_OR_SETTLED', 'declined'],
  ] as const)(
    'counts an authorization settled by a reversal refused %s (%s): nothing is held on it any more',
    (reason, state) => {
      const { journal } = setup();
      const auth = journal.begin(preauth('A1'));
      journal.markSent(auth.id);
      journal.recordOutcome(auth.id, { state: 'approved', gatewayId: '7000000000000000000001' });
      const reversal = journal.begin({
        ...preauth('R1'),
        service: 'reversal',
        comments: 'REVERSAL',
        referencedTransactionId: 'A1',
      });
      journal.markSent(reversal.id);
      journal.recordOutcome(reversal.id, { state, reason, httpStatus: 400 });
      // Neither the start nor the expiry watch sends another reversal, which would be refused the same way.
      expect({
        settled: journal.authorizationSettled('A1'),
        inFlight: journal.reversalInFlight('A1'),
        unsettled: journal.unsettledAuthorizations().map((e) => e.transactionId),
      }).toEqual({ settled: true, inFlight: false, unsettled: [] });
    },
  );

  it('leaves an authorization unsettled by a reversal refused for another reason', () => {
    const { journal } = setup();
    const auth = journal.begin(preauth('A1'));
    journal.markSent(auth.id);
    journal.recordOutcome(auth.id, { state: 'approved', gatewayId: '7000000000000000000001' });
    for (const [tx, outcome] of [
      ['R1', { state: 'rejected', reason: 'PROCESSOR_UNAVAILABLE', httpStatus: 400 }],
      ['R2', { state: 'declined' }],
    ] as const) {
      const reversal = journal.begin({
        ...preauth(tx),
        service: 'reversal',
        comments: 'REVERSAL',
        referencedTransactionId: 'A1',
      });
      journal.markSent(reversal.id);
      journal.recordOutcome(reversal.id, outcome);
    }
    expect(journal.authorizationSettled('A1')).toBe(false);
    expect(journal.unsettledAuthorizations().map((e) => e.transactionId)).toEqual(['A1']);
  });

  it.each([
    ['a masked PAN showing too many digits', { maskedPan: '41111111****1111' }],
    ['a PAN as fingerprint', { fingerprint: '4111111111111111' }],
    ['a PAN as card reference', { cardRef: '5555555555554444' }],
    ['a fractional amount', { authorizedMinor: 12.5 }],
    ['a negative amount', { authorizedMinor: -1 }],
    ['an unknown currency', { currency: 'XXY' }],
    ['an empty hold id', { holdId: '' }],
    ['a hold id with spaces', { holdId: 'H 1' }],
    ['a non-boolean tag flag', { includeEmvTags: 'yes' as unknown as boolean }],
    ['a bad expiry', { expiresAtMs: Number.NaN }],
  ])('refuses %s with JOURNAL_INVALID and stores nothing', (_name, over) => {
    const { holds } = setup();
    expect(() => holds.open(hold('H1', over))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(holds.size).toBe(0);
  });

  it('refuses bad arguments and unknown holds with typed errors', () => {
    const { holds, journal } = setup();
    expect(() => holds.open(null as unknown as StoredHold)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => holds.close(hold('H1'), 'captured')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_NOT_FOUND' }) as Error,
    );
    holds.open(hold('H1'));
    expect(() => holds.close(hold('H1'), 'lost' as 'captured')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    expect(() => holds.claim(7 as unknown as string)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
    journal.close();
    expect(() => holds.unclaimed()).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_CLOSED' }) as Error,
    );
    expect(() => holds.open(hold('H2'))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_CLOSED' }) as Error,
    );
  });

  it('answers the exit of a stay whose hold its expiry released at the maximum stay: outstayed, however long ago', () => {
    t = T0;
    const { holds } = setup();
    const rules = {
      settling: () => false,
      recentCaptureMs: 60_000,
      captureStands: (_h: StoredHold, resolution: 'captured' | 'dropped') => resolution === 'captured',
    };
    const h1 = hold('H1', { fingerprint: 'fp-card' });
    holds.open(h1);
    // The expiry watch takes it at its maximum stay, and its reversal stands.
    t = h1.expiresAtMs;
    expect(holds.claimById('H1')).not.toBeNull();
    expect(holds.outstayed('H1', t)).toBe(true);
    holds.settle('H1', 'reversed');
    t += 24 * 3_600_000;
    expect(holds.claimAtExit('fp-card', rules)).toEqual({
      kind: 'outstayed',
      hold: h1,
      outstayedAtMs: h1.expiresAtMs,
    });
    // Read only: the exit of the card asked again finds the same.
    expect(holds.claimAtExit('fp-card', rules).kind).toBe('outstayed');
    // Closed otherwise, the stay is no more owed: an exit (or the operator) released or captured it.
    expect(holds.outstayed('H1', t)).toBe(false);
  });

  it('tells a new entry of the card that its last stay outlasted its hold, until the new hold is its last stay', () => {
    t = T0;
    const { holds } = setup();
    const captureStands = (_h: StoredHold, resolution: 'captured' | 'dropped') => resolution === 'captured';
    const h1 = hold('H1', { fingerprint: 'fp-card' });
    holds.open(h1);
    expect(holds.outstayedLastStay('fp-card', { captureStands })).toBeUndefined();
    t = h1.expiresAtMs;
    holds.claimById('H1');
    holds.outstayed('H1', t);
    // Marked, its reversal not standing yet: a new entry replaces it as the card's last stay all the same.
    expect(holds.outstayedLastStay('fp-card', { captureStands })).toEqual({
      hold: h1,
      outstayedAtMs: h1.expiresAtMs,
    });
    holds.settle('H1', 'reversed');
    expect(holds.outstayedLastStay('fp-card', { captureStands })).toEqual({
      hold: h1,
      outstayedAtMs: h1.expiresAtMs,
    });
    expect(holds.outstayedLastStay('fp-other', { captureStands })).toBeUndefined();
    // The card enters again: its new hold is its last stay, and the outstayed one is asked for no more.
    t += 3_600_000;
    holds.open(hold('H2', { fingerprint: 'fp-card', enteredAtMs: t, expiresAtMs: t + 86_400_000 }));
    expect(holds.outstayedLastStay('fp-card', { captureStands })).toBeUndefined();
    expect(() => holds.outstayedLastStay(7 as unknown as string, { captureStands })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });

  it('does not make outstayed a stay its exit settled: claimed by the exit after an expiry gave it back, or paid by phone', () => {
    t = T0;
    const { holds } = setup();
    const rules = {
      settling: () => false,
      recentCaptureMs: 60_000,
      captureStands: (_h: StoredHold, resolution: 'captured' | 'dropped') => resolution === 'captured',
    };
    const h1 = hold('H1', { fingerprint: 'fp-card' });
    holds.open(h1);
    t = h1.expiresAtMs;
    holds.claimById('H1');
    holds.outstayed('H1', t);
    // The expiry's reversal was refused: back under watch, and the car's exit takes it (and releases it: pay later).
    holds.close(h1, 'returned');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'claimed', hold: h1 });
    holds.settle('H1', 'reversed');
    expect(holds.claimAtExit('fp-card', rules)).toEqual({ kind: 'none' });

    const h2 = hold('H2', { fingerprint: 'fp-phone' });
    holds.open(h2);
    holds.paidByLink('H2', 'L1', t);
    expect(holds.outstayed('H2', t)).toBe(false);
    holds.settle('H2', 'reversed');
    expect(holds.claimAtExit('fp-phone', rules).kind).toBe('paid-by-link');
    // A hold of the card's earlier entry, due because the card entered again: its car was let out, not outstayed.
    const h3 = hold('H3', { fingerprint: 'fp-again' });
    holds.open(h3);
    holds.open(hold('H4', { fingerprint: 'fp-again', enteredAtMs: t, expiresAtMs: t + 3_600_000 }));
    expect(holds.claimById('H3')).not.toBeNull();
    expect(holds.outstayed('H3', t)).toBe(false);
    expect(holds.outstayed('H4', t)).toBe(true);
    expect(() => holds.outstayed('H 2', t)).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_INVALID' }) as Error,
    );
  });
});
