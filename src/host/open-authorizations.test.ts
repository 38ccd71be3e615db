import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { OriginalTransaction, ServiceRequest, SubmitOutcome } from '../flows/index.js';
import {
  FollowUpStore,
  HoldStore,
  openJournal,
  type JournalEntry,
  type SqliteJournal,
} from '../journal/index.js';
import { saleEntry } from '../journal/testing/entries.js';
import { createLogger, silentLogger, type Logger } from '../log/index.js';
import { OpenAuthorizations } from './open-authorizations.js';
import type { FeeShortfall } from './audit-trail.js';

/** One pino line: its level (40 warn, 50 error), message and reason. */
interface LogLine {
  level: number;
  msg: string;
  reason?: string;
}

/** A logger whose lines land in `lines`. */
function capturingLogger(lines: LogLine[]): Logger {
  return createLogger({
    level: 'debug',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
}

function setup(
  answer: (r: ServiceRequest) => SubmitOutcome | Promise<SubmitOutcome>,
  options: {
    logger?: Logger;
    model?: 'meter';
    authorizedTotal?: (tx: string) => { minor: number; currency: string } | undefined;
    toLocal?: (tx: string, minor: number, currency: string) => { minor: number; currency: string };
  } = {},
) {
  const shortfalls: FeeShortfall[] = [];
  let t = Date.parse('2030-01-01T08:00:00Z');
  const now = (): Date => new Date(t);
  const journal = openJournal(':memory:', { now });
  const followUps = new FollowUpStore(journal);
  const sent: ServiceRequest[] = [];
  // A host's follow-up runner over this journal (a new one is what a restart makes).
  const runner = () =>
    new OpenAuthorizations({
      config: parseConfig({
        journal: { resolutionRetryMs: 1_000 },
        ...(options.model !== undefined ? { terminal: { model: options.model } } : {}),
      }),
      journal,
      holds: new HoldStore(journal),
      followUps,
      submit: (r) => {
        sent.push(r);
        return Promise.resolve(answer(r));
      },
      authorizedTotal: options.authorizedTotal ?? (() => undefined),
      ...(options.toLocal !== undefined ? { toLocal: options.toLocal } : {}),
      feeShortfall: (f) => shortfalls.push(f),
      now,
      logger: options.logger ?? silentLogger(),
    });
  const open = runner();
  const f = followUps.add({
    kind: 'reverse-authorization',
    authorizationTransactionId: 'A1',
    gatewayId: 'G1',
    amountMinor: 1_200,
    currency: 'GBP',
    includeEmvTags: true,
    reason: 'capture voided',
  });
  return { open, runner, followUps, sent, id: f.id, advance: (ms: number) => (t += ms), journal, shortfalls };
}

/** The journal entry of a follow-up's reversal, as the host's one door writes it: sent, its outcome unknown. */
function unknownReversal(journal: SqliteJournal): JournalEntry {
  const entry = journal.begin({
    service: 'reversal',
    comments: 'REVERSAL',
    method: 'POST',
    path: '/pts/v2/payments/G1/reversals',
    body: Buffer.from('{}'),
    referencedTransactionId: 'A1',
    parentGatewayId: 'G1',
    amountMinor: 1_200,
    currency: 'GBP',
    moneyMoving: true,
  });
  journal.markSent(entry.id);
  journal.recordOutcome(entry.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
  return entry;
}

/** A journal entry of `service`, sent and answered `state`; returns its id. */
function journalEntry(
  journal: SqliteJournal,
  service: string,
  transactionId: string,
  state: 'approved' | 'unknown',
  referencedTransactionId?: string,
): number {
  const e = journal.begin({
    transactionId,
    service,
    comments: service === 'preauth' ? 'Parking Auth' : 'Parking Capture Less Than Auth',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from('{}'),
    ...(referencedTransactionId !== undefined ? { referencedTransactionId } : {}),
    amountMinor: 1_200,
    currency: 'GBP',
    moneyMoving: true,
  });
  journal.markSent(e.id);
  journal.recordOutcome(
    e.id,
    state === 'approved'
      ? { state, gatewayId: service === 'preauth' ? 'G1' : 'GC1' }
      : { state, reason: 'X' },
  );
  return e.id;
}

describe('follow-ups of open authorizations', () => {
  it('reverses the authorization with its tags and the authorized amount', async () => {
    const { open, sent } = setup(() => ({ kind: 'approved', transactionId: 'A1', partial: false }));
    await open.runFollowUps();
    expect(sent).toEqual([
      expect.objectContaining({
        service: 'reversal',
        amountMinor: 1_200,
        includeEmvTags: true,
        original: { gatewayId: 'G1', transactionId: 'A1', service: 'preauth' },
      }),
    ]);
  });

  it('finishes one whose authorization another reversal already released', async () => {
    const { open, followUps, id } = setup(() => ({
      kind: 'rejected',
      transactionId: 'A1',
      reason: 'AUTH_ALREADY_REVERSED',
    }));
    await open.runFollowUps();
    expect(followUps.get(id)).toMatchObject({ outcome: 'already-reversed' });
    expect(followUps.open()).toEqual([]);
  });

  it('tries a refused one again with a doubling wait, never in a tight loop', async () => {
    const { open, followUps, sent, id, advance } = setup(() => ({
      kind: 'rejected',
      transactionId: 'A1',
      reason: 'MISSING_FIELD',
    }));
    await open.runFollowUps();
    await open.runFollowUps(); // not due again yet
    expect(sent).toHaveLength(1);
    advance(1_000);
    await open.runFollowUps();
    expect(sent).toHaveLength(2);
    advance(1_000);
    await open.runFollowUps(); // now waits 2 s
    expect(sent).toHaveLength(2);
    advance(1_000);
    await open.runFollowUps();
    expect(sent).toHaveLength(3);
    expect(followUps.get(id)).toMatchObject({ attempts: 3, lastError: 'MISSING_FIELD' });
  });

  it('logs a reversal refused because the processor is unavailable as a warning, not for the operator; tried again later', async () => {
    const lines: LogLine[] = [];
    const { open, followUps, sent, id, advance } = setup(
      () => ({ kind: 'rejected', transactionId: 'A1', reason: 'PROCESSOR_UNAVAILABLE' }),
      { logger: capturingLogger(lines) },
    );
    await open.runFollowUps();
    advance(1_000);
    await open.runFollowUps();
    expect(sent).toHaveLength(2);
    expect(followUps.get(id)).toMatchObject({ attempts: 2, lastError: 'PROCESSOR_UNAVAILABLE' });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.reason])).toEqual([
      ['follow-up reversal refused for now; tried again later', 'PROCESSOR_UNAVAILABLE'],
      ['follow-up reversal refused for now; tried again later', 'PROCESSOR_UNAVAILABLE'],
    ]);
  });

  it('runs one pass at a time: a sweep while a reversal waits for its answer sends no second one', async () => {
    const answers: ((o: SubmitOutcome) => void)[] = [];
    const { open, sent, advance } = setup(
      () => new Promise<SubmitOutcome>((resolve) => answers.push(resolve)),
    );
    const first = open.runFollowUps();
    await new Promise((r) => setImmediate(r));
    advance(5_000); // the next sweep: the first reversal is still waiting for its answer (up to the 30 s timeout)
    const second = open.runFollowUps();
    await new Promise((r) => setImmediate(r));
    for (const a of answers) a({ kind: 'approved', transactionId: 'A1', partial: false });
    await Promise.all([first, second]);
    expect(sent).toHaveLength(1);
  });

  it('does not send a reversal again at the next sweep when its outcome is unknown', async () => {
    const { open, sent, advance } = setup(() => ({
      kind: 'unknown',
      transactionId: 'A1',
      reason: 'GW_TIMEOUT',
    }));
    await open.runFollowUps();
    advance(5_000); // recovery's timeout reversal of the first is not due before 60 s
    await open.runFollowUps();
    expect(sent).toHaveLength(1);
  });

  it('waits, across a restart too, until recovery has resolved a reversal left unknown; retried when not reversed', async () => {
    // The host's one door journals the reversal before it goes; its outcome is unknown.
    const reversals: JournalEntry[] = [];
    const { open, runner, followUps, id, sent, advance, journal } = setup(() => {
      reversals.push(unknownReversal(journal));
      return { kind: 'unknown', transactionId: 'A1', reason: 'GW_TIMEOUT' };
    });
    await open.runFollowUps();
    expect(sent).toHaveLength(1);
    // Long past any wait: the journal still holds the reversal in flight (recovery has not resolved it).
    advance(10 * 60_000);
    await open.runFollowUps();
    await runner().runFollowUps();
    expect(sent).toHaveLength(1);
    expect(followUps.get(id)).toMatchObject({ attempts: 1 });
    // Recovery resolves it without reversing the authorization (the gateway does not know it): tried again.
    journal.resolve(reversals[0]!.id, 'not-at-gateway');
    await runner().runFollowUps();
    expect(sent).toHaveLength(2);
  });

  it('waits while a capture of its authorization is unresolved; once it is, runs at once: reversed if it was voided', async () => {
    const { open, sent, journal, followUps, id } = setup(() => ({
      kind: 'approved',
      transactionId: 'A1',
      partial: false,
    }));
    journalEntry(journal, 'preauth', 'A1', 'approved');
    const capture = journalEntry(journal, 'capture', 'C1', 'unknown', 'A1');
    await open.runFollowUps();
    expect(sent).toEqual([]);
    expect(open.holdSettling('A1')).toBe(true);
    // Recovery's timeout void of the capture went through: nothing captured, the authorization still held.
    journal.resolve(capture, 'timeout-void');
    await open.runFollowUpsOf('A1');
    expect(sent.map((r) => r.service)).toEqual(['reversal']);
    expect(followUps.get(id)?.doneAtMs).toBeUndefined(); // closed by the approved reversal's outcome (the router)
  });

  it('sends nothing for an authorization the journal shows settled by a capture that stands', async () => {
    const { open, sent, journal, followUps, id } = setup(() => ({
      kind: 'approved',
      transactionId: 'A1',
      partial: false,
    }));
    journalEntry(journal, 'preauth', 'A1', 'approved');
    journalEntry(journal, 'capture', 'C1', 'approved', 'A1');
    await open.runFollowUpsOf('A1');
    expect(sent).toEqual([]);
    expect(followUps.get(id)).toMatchObject({ outcome: 'settled' });
    expect(open.holdSettling('A1')).toBe(true);
  });

  it('finishes every open follow-up at start, due or not (whoever was to do it died with the process)', async () => {
    const { open, followUps, sent, journal } = setup(() => ({
      kind: 'approved',
      transactionId: 'A2',
      partial: false,
    }));
    followUps.add({
      kind: 'reverse-authorization',
      authorizationTransactionId: 'A2',
      gatewayId: 'G2',
      amountMinor: 500,
      currency: 'GBP',
      includeEmvTags: false,
      reason: 'capture voided',
      dueAtMs: journal.now().getTime() + 60_000,
    });
    await open.settle();
    expect(sent.map((r) => r.original?.transactionId)).toEqual(['A1', 'A2']);
  });
});

describe('a capture follow-up (a meter fee spread over two holds)', () => {
  /** The journal with the session's second hold A2 approved and its capture follow-up open (A1's reversal is done). */
  function withCapture(answer: (r: ServiceRequest) => SubmitOutcome) {
    const t = setup(answer);
    t.followUps.complete(t.id, 'reversed');
    journalEntry(t.journal, 'preauth', 'A2', 'approved');
    const capture = t.followUps.add({
      kind: 'capture-authorization',
      authorizationTransactionId: 'A2',
      gatewayId: 'G1',
      amountMinor: 800,
      currency: 'GBP',
      includeEmvTags: true,
      reason: 'captured by its meter session',
      dueAtMs: t.journal.now().getTime() + 3_600_000,
    });
    return { ...t, captureId: capture.id };
  }

  /** A capture of A2 journaled `state` (with `reason`), or resolved `resolution`. */
  function captureOfA2(
    journal: SqliteJournal,
    outcome: { state: 'declined' | 'rejected'; reason: string } | string,
  ) {
    const e = journal.begin({
      transactionId: `C${journal.referencing('A2').length + 1}`,
      service: 'capture',
      comments: 'Parking Capture Less Than Auth',
      method: 'POST',
      path: '/pts/v2/payments/G1/captures',
      body: Buffer.from('{}'),
      referencedTransactionId: 'A2',
      amountMinor: 800,
      currency: 'GBP',
      moneyMoving: true,
    });
    // Provably never sent: resolved before it left (the sender's way); otherwise sent, and its outcome as given.
    if (outcome === 'not-sent') {
      journal.resolve(e.id, outcome);
      return;
    }
    journal.markSent(e.id);
    if (typeof outcome === 'string') {
      journal.recordOutcome(e.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
      journal.resolve(e.id, outcome);
    } else journal.recordOutcome(e.id, outcome);
  }

  it('captures the part of the fee at start, due or not, with the comments of a capture below the hold', async () => {
    const { open, sent } = withCapture(() => ({ kind: 'approved', transactionId: 'C1', partial: false }));
    await open.settle();
    expect(sent.filter((r) => r.service === 'capture')).toEqual([
      expect.objectContaining({
        comments: 'Parking Capture',
        amountMinor: 800,
        currency: 'GBP',
        includeEmvTags: true,
        original: { gatewayId: 'G1', transactionId: 'A2', service: 'preauth' },
      }),
    ]);
    // Nothing reverses the hold the capture is owed on (the sweep of orphaned authorizations leaves it).
    expect(sent.filter((r) => r.original?.transactionId === 'A2').map((r) => r.service)).toEqual(['capture']);
  });

  it('sends nothing while a capture of the hold is unresolved, and nothing once the journal shows it standing', async () => {
    const { open, sent, journal, followUps, captureId } = withCapture(() => ({
      kind: 'approved',
      transactionId: 'C1',
      partial: false,
    }));
    const capture = journalEntry(journal, 'capture', 'C1', 'unknown', 'A2');
    await open.runFollowUpsOf('A2');
    expect(sent).toEqual([]);
    expect(followUps.get(captureId)?.doneAtMs).toBeUndefined();
    // Recovery's timeout void of it refused NOT_VOIDABLE: it stands.
    journal.resolve(capture, 'not-voidable');
    await open.runFollowUpsOf('A2');
    expect(sent).toEqual([]);
    expect(followUps.get(captureId)).toMatchObject({ outcome: 'settled' });
  });

  it('sends it again after a refusal for now or a capture that provably never left, with a growing wait', async () => {
    const { open, sent, journal, followUps, captureId, advance } = withCapture(() => ({
      kind: 'rejected',
      transactionId: 'C1',
      reason: 'PROCESSOR_UNAVAILABLE',
    }));
    captureOfA2(journal, { state: 'rejected', reason: 'PROCESSOR_UNAVAILABLE' });
    captureOfA2(journal, 'not-sent');
    await open.runFollowUpsOf('A2');
    expect(sent.map((r) => r.service)).toEqual(['capture']);
    expect(followUps.get(captureId)).toMatchObject({ attempts: 1, lastError: 'PROCESSOR_UNAVAILABLE' });
    await open.runFollowUps();
    expect(sent).toHaveLength(1);
    advance(1_000);
    await open.runFollowUps();
    expect(sent).toHaveLength(2);
  });

  it('never captures again after a capture that did not stand: done, the hold released instead, and the fee part recorded for the operator', async () => {
    for (const failed of [{ state: 'declined', reason: 'INVALID_AMOUNT' } as const]) {
      const { open, sent, journal, followUps, captureId, shortfalls } = withCapture(() => ({
        kind: 'approved',
        transactionId: 'R1',
        partial: false,
      }));
      captureOfA2(journal, failed);
      await open.runFollowUpsOf('A2');
      expect(sent.map((r) => `${r.service}:${r.releases === true}`)).toEqual(['reversal:true']);
      expect(followUps.get(captureId)).toMatchObject({ outcome: 'capture-failed' });
      // That part of the fee is not collected: the operator's, as any fee a capture did not take.
      expect(shortfalls).toEqual([
        {
          captureTransactionId: 'C1',
          authorizationTransactionId: 'A2',
          owedMinor: 800,
          capturedMinor: 0,
          currency: 'GBP',
          reason: 'CAPTURE_NOT_STANDING',
        },
      ]);
    }
  });

  it('captures again after recovery voided a capture whose answer was lost: the void left the hold in place', async () => {
    const { open, sent, journal } = withCapture(() => ({
      kind: 'approved',
      transactionId: 'C2',
      partial: false,
    }));
    captureOfA2(journal, 'timeout-void');
    await open.runFollowUpsOf('A2');
    expect(sent.map((r) => `${r.service}:${r.amountMinor}`)).toEqual(['capture:800']);
  });

  it("tries no longer than the hold's capture window: then the hold is released and the fee recorded for the operator", async () => {
    const { open, sent, journal, followUps, captureId, advance, shortfalls } = withCapture((r) =>
      r.service === 'capture'
        ? { kind: 'rejected', transactionId: `C${sent.length}`, reason: 'PROCESSOR_UNAVAILABLE' }
        : { kind: 'approved', transactionId: 'R1', partial: false },
    );
    // The session's own capture, refused for now: the follow-up captures it again, as long as the window lasts.
    captureOfA2(journal, { state: 'rejected', reason: 'PROCESSOR_UNAVAILABLE' });
    advance(1_439 * 60_000);
    await open.runFollowUpsOf('A2');
    expect(sent.map((r) => r.service)).toEqual(['capture']);
    advance(60_000);
    await open.runFollowUps();
    // The window is over: no capture again, the hold released, the fee the operator's.
    expect(sent.map((r) => `${r.service}:${r.releases === true}`)).toEqual([
      'capture:false',
      'reversal:true',
    ]);
    expect(followUps.get(captureId)).toMatchObject({ outcome: 'capture-window-ended' });
    expect(shortfalls).toEqual([
      {
        captureTransactionId: 'C1',
        authorizationTransactionId: 'A2',
        owedMinor: 800,
        capturedMinor: 0,
        currency: 'GBP',
        reason: 'CAPTURE_WINDOW_ENDED',
      },
    ]);
  });

  it('never captures a hold whose release was decided: a reversal follow-up open, or a reversal journaled refused', async () => {
    const { open, sent, journal, followUps, captureId } = withCapture(() => ({
      kind: 'approved',
      transactionId: 'R1',
      partial: false,
    }));
    followUps.add({
      kind: 'reverse-authorization',
      authorizationTransactionId: 'A2',
      gatewayId: 'G1',
      amountMinor: 1_200,
      currency: 'GBP',
      includeEmvTags: true,
      reason: 'released by its session, refused for now',
      dueAtMs: journal.now().getTime() + 3_600_000,
    });
    await open.runFollowUpsOf('A2');
    expect(sent.map((r) => r.service)).toEqual(['reversal']);
    expect(followUps.get(captureId)).toMatchObject({ outcome: 'released' });

    // The machine's capture provably not sent, then its reversal refused for good: the session released the hold (and
    // told the customer the fee was not collected); the next start captures nothing.
    const again = withCapture(() => ({ kind: 'approved', transactionId: 'C9', partial: false }));
    captureOfA2(again.journal, 'not-sent');
    const reversal = again.journal.begin({
      service: 'reversal',
      comments: 'REVERSAL',
      method: 'POST',
      path: '/pts/v2/payments/G1/reversals',
      body: Buffer.from('{}'),
      referencedTransactionId: 'A2',
      amountMinor: 1_200,
      currency: 'GBP',
      moneyMoving: true,
    });
    again.journal.markSent(reversal.id);
    again.journal.recordOutcome(reversal.id, { state: 'rejected', reason: 'INVALID_DATA', httpStatus: 400 });
    await again.open.settle();
    expect(again.sent.filter((r) => r.original?.transactionId === 'A2').map((r) => r.service)).not.toContain(
      'capture',
    );
    expect(again.followUps.get(again.captureId)).toMatchObject({ outcome: 'released' });
  });
});

describe('tap-and-go holds at start', () => {
  function entry(
    journal: SqliteJournal,
    service: string,
    transactionId: string,
    state: 'approved' | 'unknown' | 'declined',
    referencedTransactionId?: string,
  ): void {
    const e = journal.begin({
      transactionId,
      service,
      comments:
        service === 'preauth' ? 'Parking Auth' : service === 'capture' ? 'Parking Capture' : 'REVERSAL',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from('{}'),
      ...(referencedTransactionId !== undefined ? { referencedTransactionId } : {}),
      amountMinor: 598,
      currency: 'GBP',
      moneyMoving: true,
    });
    journal.markSent(e.id);
    journal.recordOutcome(
      e.id,
      state === 'approved' ? { state, gatewayId: `70000000000000000${e.id}` } : { state, reason: 'X' },
    );
  }

  function hold(id: string) {
    return {
      holdId: id,
      fingerprint: `fp-${id}`,
      maskedPan: '476173******0010',
      gatewayId: `G-${id}`,
      transactionId: id,
      authorizedMinor: 598,
      currency: 'GBP',
      cardRef: `card_${id}`,
      includeEmvTags: true,
      enteredAtMs: Date.parse('2030-01-01T07:00:00Z'),
      expiresAtMs: Date.parse('2030-01-02T07:00:00Z'),
    };
  }

  it('drops the open holds whose authorization the journal shows captured or reversed, and only those', async () => {
    const { runner, journal, sent } = setup(() => ({
      kind: 'approved',
      transactionId: 'A1',
      partial: false,
    }));
    const holds = new HoldStore(journal);
    // Captured; reversed; reversal in recovery's hands; capture declined; nothing yet; no journal entry at all.
    entry(journal, 'preauth', 'P1', 'approved');
    entry(journal, 'capture', 'C1', 'approved', 'P1');
    entry(journal, 'preauth', 'P2', 'approved');
    entry(journal, 'reversal', 'R2', 'approved', 'P2');
    entry(journal, 'preauth', 'P3', 'approved');
    entry(journal, 'reversal', 'R3', 'unknown', 'P3');
    entry(journal, 'preauth', 'P4', 'approved');
    entry(journal, 'capture', 'C4', 'declined', 'P4');
    entry(journal, 'preauth', 'P5', 'approved');
    for (const id of ['P1', 'P2', 'P3', 'P4', 'P5', 'P6']) holds.open(hold(id));

    await runner().settle();
    expect(holds.unclaimed().map((h) => h.holdId)).toEqual(['P4', 'P5', 'P6']);
    expect(
      journal.db.prepare("SELECT hold_id FROM holds WHERE resolution = 'dropped' ORDER BY hold_id").all(),
    ).toEqual([{ hold_id: 'P1' }, { hold_id: 'P2' }, { hold_id: 'P3' }]);
    // Their authorizations are nobody's to reverse: the watch of P4 and P5 reverses them at expiry.
    expect(sent.filter((r) => r.original?.transactionId?.startsWith('P'))).toEqual([]);
  });
});

describe('orphaned authorizations at start', () => {
  function journaled(
    journal: SqliteJournal,
    transactionId: string,
    outcome: Parameters<SqliteJournal['recordOutcome']>[1],
    reversalOf?: string,
  ): void {
    const e = journal.begin({
      transactionId,
      service: reversalOf === undefined ? 'preauth' : 'reversal',
      comments: reversalOf === undefined ? 'Parking Authorization' : 'REVERSAL',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from('{}'),
      ...(reversalOf !== undefined ? { referencedTransactionId: reversalOf } : {}),
      amountMinor: 600,
      currency: 'GBP',
      moneyMoving: true,
    });
    journal.markSent(e.id);
    journal.recordOutcome(e.id, outcome);
  }

  /**
   * The meter session's capture C-O1 of authorization O1, sent and resolved by recovery's timeout void: its outcome
   * journaled unknown first (`answered`), or the process gone before it was (a restart cut it off).
   */
  function captureVoidedByRecovery(
    journal: SqliteJournal,
    c: { amountMinor: number; currency: string; answered: boolean },
  ): void {
    const capture = journal.begin({
      transactionId: 'C-O1',
      service: 'capture',
      comments: 'Parking Capture Less Than Auth',
      method: 'POST',
      path: '/pts/v2/payments/G-O1/captures',
      body: Buffer.from('{}'),
      referencedTransactionId: 'O1',
      amountMinor: c.amountMinor,
      currency: c.currency,
      moneyMoving: true,
    });
    journal.markSent(capture.id);
    if (c.answered) journal.recordOutcome(capture.id, { state: 'unknown', reason: 'GW_TIMEOUT' });
    journal.resolve(capture.id, 'timeout-void');
  }

  it('sends no reversal for one whose reversal was refused because it is released already; reverses the others', async () => {
    const { runner, journal, sent, advance } = setup(() => ({
      kind: 'approved',
      transactionId: 'A1',
      partial: false,
    }));
    // A meter's pre-authorizations whose sessions died: each reversed once, and refused.
    for (const [tx, outcome] of [
      ['O1', { state: 'rejected', reason: 'AUTH_ALREADY_REVERSED', httpStatus: 400 }],
      ['O2', { state: 'declined', reason: 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED' }],
      ['O3', { state: 'rejected', reason: 'PROCESSOR_UNAVAILABLE', httpStatus: 400 }],
    ] as const) {
      journaled(journal, tx, { state: 'approved', gatewayId: `G-${tx}` });
      journaled(journal, `R-${tx}`, outcome, tx);
    }
    // Past their capture window: a start reverses at once what the journal shows unsettled.
    advance(24 * 3_600_000);
    const open = runner();
    await open.settle();
    expect({
      reversed: sent.map((r) => r.original?.transactionId).filter((tx) => tx?.startsWith('O')),
      scheduled: open.watched(),
    }).toEqual({ reversed: ['O3'], scheduled: [] });
  });

  it("reverses a meter's hold whose capture recovery voided once its release was decided: refused for good, tried again at the next start", async () => {
    const { runner, journal, sent, followUps, advance } = setup(
      () => ({ kind: 'approved', transactionId: 'R', partial: false }),
      { model: 'meter' },
    );
    journaled(journal, 'O1', { state: 'approved', gatewayId: 'G-O1' });
    // Its session's capture lost its answer and recovery voided it; its capture window ended, the hold's release was
    // decided (the fee recorded for the operator), and that reversal was refused for good.
    captureVoidedByRecovery(journal, { amountMinor: 450, currency: 'GBP', answered: true });
    journaled(journal, 'R-O1', { state: 'declined', reason: 'INVALID_AMOUNT' }, 'O1');
    advance(24 * 3_600_000);
    await runner().settle();
    expect(sent.filter((r) => r.original?.transactionId === 'O1').map((r) => r.service)).toEqual([
      'reversal',
    ]);
    expect(followUps.open().filter((f) => f.authorizationTransactionId === 'O1')).toEqual([]);
  });

  it("reverses a meter's hold whose capture follow-up ended with its capture window when the terminal stopped before the release", async () => {
    // The follow-up written with the terms the sweep would write, or with others (its EMV tags as the session said).
    for (const includeEmvTags of [false, true]) {
      const { runner, journal, sent, followUps, advance } = setup(
        () => ({ kind: 'approved', transactionId: 'R', partial: false }),
        { model: 'meter' },
      );
      journaled(journal, 'O1', { state: 'approved', gatewayId: 'G-O1' });
      captureVoidedByRecovery(journal, { amountMinor: 450, currency: 'GBP', answered: true });
      // The session's follow-up, written with the unknown outcome: done when the capture window ended (the fee
      // recorded for the operator); the terminal stopped before the hold's release was journaled.
      const f = followUps.add({
        kind: 'capture-authorization',
        authorizationTransactionId: 'O1',
        gatewayId: 'G-O1',
        amountMinor: 450,
        currency: 'GBP',
        includeEmvTags,
        reason: 'captured by its meter session, its outcome unknown: sent again later',
      });
      advance(24 * 3_600_000);
      followUps.complete(f.id, 'capture-window-ended');
      await runner().settle();
      expect(
        sent.filter((r) => r.original?.transactionId === 'O1').map((r) => r.service),
        `includeEmvTags ${String(includeEmvTags)}`,
      ).toEqual(['reversal']);
    }
  });

  it('captures at start, in the local currency, the fee of a converted meter hold whose capture a restart cut off and recovery voided', async () => {
    // A hold of 12.00 EUR converted to 2004 JPY (family A: journaled in the card's currency); the fee of 4.50 EUR was
    // being captured as 752 JPY.
    const { runner, journal, sent } = setup(
      () => ({ kind: 'approved', transactionId: 'C2', partial: false }),
      {
        model: 'meter',
        authorizedTotal: (tx) => (tx === 'O1' ? { minor: 1_200, currency: 'EUR' } : undefined),
        toLocal: (_tx, minor, currency) =>
          currency === 'JPY'
            ? { minor: Math.round((minor * 1_200) / 2_004), currency: 'EUR' }
            : { minor, currency },
      },
    );
    journaled(journal, 'O1', { state: 'approved', gatewayId: 'G-O1' });
    captureVoidedByRecovery(journal, { amountMinor: 752, currency: 'JPY', answered: false });
    await runner().settle();
    expect(
      sent
        .filter((r) => r.original?.transactionId === 'O1')
        .map((r) => `${r.service}:${r.amountMinor} ${r.currency}`),
    ).toEqual(['capture:450 EUR']);
  });

  describe('a reversal refused because the processor is unavailable', () => {
    afterEach(() => vi.useRealTimers());

    it('gives the authorization up for good (releases: its follow-up sends it again), logged as a warning, not for the operator', async () => {
      const lines: LogLine[] = [];
      const { runner, journal, sent, advance } = setup(
        // The setup's follow-up (of A1) goes through; O1's reversal is refused for now.
        (r): SubmitOutcome =>
          r.original?.transactionId === 'O1'
            ? { kind: 'rejected', transactionId: 'R', reason: 'PROCESSOR_UNAVAILABLE' }
            : { kind: 'approved', transactionId: r.original?.transactionId ?? '', partial: false },
        { logger: capturingLogger(lines) },
      );
      journaled(journal, 'O1', { state: 'approved', gatewayId: 'G-O1' });
      advance(24 * 3_600_000);
      const open = runner();
      await open.settle();
      const reversals = sent.filter((r) => r.original?.transactionId === 'O1');
      // One reversal, marked so that the payment router writes the follow-up with its refusal; no second copy of
      // that retry here.
      expect(reversals.map((r) => r.releases)).toEqual([true]);
      expect(open.watched()).toEqual([]);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
        'reversal of an uncaptured authorization refused for now; its follow-up sends it again',
      ]);
    });
  });
});

describe('a follow-up that gives back a card sale', () => {
  function giveBack(sale: OriginalTransaction | null, amountMinor = 600) {
    const now = (): Date => new Date(Date.parse('2030-01-01T08:00:00Z'));
    const journal = openJournal(':memory:', { now });
    const followUps = new FollowUpStore(journal);
    const sent: ServiceRequest[] = [];
    const open = new OpenAuthorizations({
      config: parseConfig({ journal: { resolutionRetryMs: 1_000 } }),
      journal,
      holds: new HoldStore(journal),
      followUps,
      submit: (r) => {
        sent.push(r);
        return Promise.resolve<SubmitOutcome>({
          kind: 'rejected',
          transactionId: 'V1',
          reason: 'NOT_VOIDABLE',
        });
      },
      authorizedTotal: () => undefined,
      findSale: () => sale,
      now,
      logger: silentLogger(),
    });
    const f = followUps.add({
      kind: 'give-back-sale',
      authorizationTransactionId: 'S1',
      gatewayId: 'G1',
      amountMinor,
      currency: 'GBP',
      includeEmvTags: false,
      reason: 'ticket paid by phone too',
    });
    return { open, followUps, sent, id: f.id, journal };
  }
  const sale = (over: Partial<OriginalTransaction> = {}): OriginalTransaction => ({
    transactionId: 'S1',
    gatewayId: 'G1',
    service: 'sale',
    amountMinor: 600,
    currency: 'GBP',
    refundedMinor: 0,
    voided: false,
    voidPending: false,
    voidable: true,
    ...over,
  });
  const what = (r: ServiceRequest) => [r.service, r.amountMinor, r.original?.transactionId];

  it('voids the sale while it may be voided and all of it is owed back', async () => {
    const t = giveBack(sale());
    await t.open.runFollowUps();
    expect(t.sent.map(what)).toEqual([['void-payment', 600, 'S1']]);
    // Not approved: left open, tried again later.
    expect(t.followUps.get(t.id)).toMatchObject({ attempts: 1, lastError: 'NOT_VOIDABLE' });
  });

  it('refunds it past the cut-off, or when it took more than is owed back, never more than it still holds', async () => {
    for (const [over, owed, refund] of [
      [{ voidable: false }, 600, 600],
      [{ amountMinor: 900 }, 600, 600],
      [{ refundedMinor: 200 }, 600, 400],
    ] as const) {
      const t = giveBack(sale(over), owed);
      await t.open.runFollowUps();
      expect(t.sent.map(what)).toEqual([['refund-payment', refund, 'S1']]);
    }
  });

  it('is done, sending nothing, once a refund of the sale made since it was written stands', async () => {
    // Its own refund, sent with the sale larger than what is owed back: the answer lost, its timeout void refused
    // NOT_VOIDABLE, so it stands — and the follow-up, never told of an approval, was still open.
    const t = giveBack(sale({ amountMinor: 900, refundedMinor: 600 }));
    const refund = t.journal.begin(
      saleEntry('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 600 }),
    );
    t.journal.recordOutcome(refund.id, { state: 'unknown' });
    t.journal.resolve(refund.id, 'not-voidable');
    await t.open.runFollowUps();
    expect(t.sent).toEqual([]);
    expect(t.followUps.get(t.id)).toMatchObject({ outcome: 'refunded' });
  });

  it('gives back the rest when a refund made since it was written gave back only part of what is owed', async () => {
    // The operator refunded 200 of the 900 sale meanwhile (approved): 600 was owed back, 400 still is.
    const t = giveBack(sale({ amountMinor: 900, refundedMinor: 200 }));
    const refund = t.journal.begin(
      saleEntry('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 }),
    );
    t.journal.recordOutcome(refund.id, { state: 'approved', gatewayId: 'G-R1' });
    await t.open.runFollowUps();
    expect(t.sent.map(what)).toEqual([['refund-payment', 400, 'S1']]);
  });

  it('is done, sending nothing, when a refund since it was written is in another currency (a converted sale)', async () => {
    // A converted sale's refunds are journaled in the card's billing currency: what is still owed in the give-back's
    // own currency cannot be counted from them, so nothing more is sent (the operator checks it).
    const t = giveBack(sale({ amountMinor: 900, refundedMinor: 200 }));
    const refund = t.journal.begin(
      saleEntry('R1', {
        service: 'refund-payment',
        referencedTransactionId: 'S1',
        amountMinor: 250,
        currency: 'EUR',
      }),
    );
    t.journal.recordOutcome(refund.id, { state: 'approved', gatewayId: 'G-R1' });
    await t.open.runFollowUps();
    expect(t.sent).toEqual([]);
    expect(t.followUps.get(t.id)).toMatchObject({ outcome: 'refunded' });
  });

  it('is done, sending nothing, when nothing of the sale stands', async () => {
    for (const s of [null, sale({ voided: true }), sale({ refundedMinor: 600 })]) {
      const t = giveBack(s);
      await t.open.runFollowUps();
      expect(t.sent).toEqual([]);
      expect(t.followUps.get(t.id)).toMatchObject({ outcome: 'nothing-standing' });
    }
  });
});
