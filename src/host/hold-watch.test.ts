import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HoldRecord, SubmitOutcome } from '../flows/index.js';
import { FakeTerminal, testSettings } from '../flows/testing/fake-terminal.js';
import { HoldStore } from '../journal/index.js';
import { memoryJournals } from '../journal/testing/entries.js';
import { createLogger } from '../log/index.js';
import { HoldWatch } from './hold-watch.js';

const openMemoryJournal = memoryJournals();
const START_MS = Date.UTC(2030, 0, 6, 8, 0, 0);
const DAY_MS = 24 * 3_600_000;
/** testSettings(): `resolutionRetryMs` 5 s, `maxResolutionAttempts` 3. */
const RETRY_MS = 5_000;
/** The expiry machine's wait for an expiry already past: a timer of no delay, which timers run after 1 ms. */
const MACHINE_MS = 1;

beforeEach(() => vi.useFakeTimers({ now: START_MS }));
afterEach(() => vi.useRealTimers());

/** One pino line as the watch writes it. */
interface LogLine {
  level: number;
  msg: string;
  reason?: string;
}
const WARN = 40;
const ERROR = 50;

/**
 * A host's hold watch over a journal in memory, with a tap-and-go hold that expired at the start (or expires
 * `expiresInMs` after it). The gateway answers
 * the hold's reversals with `answers` in order (a refusal's reason, or `approved`), one at a time; the refusals are
 * what the journal's `refusedReversals` returns, `refusedBefore` those of earlier runs.
 */
function setup(answers: string[], refusedBefore: string[] = [], options: { expiresInMs?: number } = {}) {
  const journal = openMemoryJournal();
  const store = new HoldStore(journal);
  const hold: HoldRecord = {
    holdId: 'H1',
    fingerprint: 'fp-1',
    maskedPan: '411111******1111',
    gatewayId: 'G1',
    transactionId: 'H1',
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: 'card-1',
    includeEmvTags: true,
    enteredAtMs: START_MS + (options.expiresInMs ?? -60_000) - DAY_MS,
    expiresAtMs: START_MS + (options.expiresInMs ?? -60_000),
  };
  store.open(hold);
  const refused = [...refusedBefore];
  /** The time (ms after the start) each reversal went, and its answer. */
  const reversals: { atMs: number; answer: string }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const fake = new FakeTerminal();
  fake.submit = async (request): Promise<SubmitOutcome> => {
    if (request.service !== 'reversal') throw new Error(`unexpected ${request.service}`);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    const answer = answers.shift() ?? 'approved';
    reversals.push({ atMs: Date.now() - START_MS, answer });
    await Promise.resolve();
    inFlight -= 1;
    // Journaled before the machine learns of it, as the host's one door does.
    if (answer === 'approved') {
      store.settle(hold.transactionId, 'reversed');
      return { kind: 'approved', transactionId: `R${reversals.length}`, partial: false };
    }
    refused.push(answer);
    return { kind: 'rejected', transactionId: `R${reversals.length}`, reason: answer };
  };
  const lines: LogLine[] = [];
  const notices: string[] = [];
  const released: string[] = [];
  /** The holds the watch reported taken at their maximum stay, with whether a commit was open around the report. */
  const outstayed: { holdId: string; atMs: number; inCommit: boolean }[] = [];
  let inCommit = false;
  const watch = new HoldWatch({
    store,
    effects: fake,
    settings: testSettings(),
    clock: { now: () => Date.now() },
    logger: createLogger({
      level: 'debug',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    }),
    settling: () => false,
    refusedReversals: () => [...refused],
    onRefused: (_hold, reason) => notices.push(reason),
    onReversed: (h) => released.push(h.holdId),
    onOutstayed: (h, atMs) => outstayed.push({ holdId: h.holdId, atMs, inCommit }),
    inOneCommit: (fn) =>
      journal.atomically(true, () => {
        inCommit = true;
        try {
          return fn();
        } finally {
          inCommit = false;
        }
      }),
  });
  return {
    watch,
    store,
    hold,
    outstayed,
    reversals,
    notices,
    released,
    lines,
    mostInFlight: () => mostInFlight,
    /** The gaps between one reversal and the next. */
    gaps: () => reversals.slice(1).map((r, i) => r.atMs - (reversals[i]?.atMs ?? 0)),
  };
}

describe('hold watch: reversals refused because the processor is unavailable', () => {
  it('tries again after a doubling wait, past the attempts cap, until the reversal goes through: nothing for the operator', async () => {
    const w = setup(Array.from({ length: 5 }, () => 'PROCESSOR_UNAVAILABLE'));
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect({
      answers: w.reversals.map((r) => r.answer),
      gaps: w.gaps(),
      notices: w.notices,
      open: w.store.has('H1'),
      released: w.released,
    }).toEqual({
      answers: [...Array.from({ length: 5 }, () => 'PROCESSOR_UNAVAILABLE'), 'approved'],
      // resolutionRetryMs, doubled after each refusal for now
      gaps: [1, 2, 4, 8, 16].map((n) => n * RETRY_MS + MACHINE_MS),
      notices: [],
      open: false,
      released: ['H1'],
    });
    expect(w.mostInFlight()).toBe(1);
    // A warning for each refusal for now, never the operator's error line.
    expect(w.lines.filter((l) => l.level >= ERROR)).toEqual([]);
    expect(w.lines.filter((l) => l.level === WARN).map((l) => [l.msg, l.reason])).toEqual(
      Array.from({ length: 5 }, () => [
        'hold reversal refused for now; tried again later',
        'PROCESSOR_UNAVAILABLE',
      ]),
    );
  });

  it('waits at most an hour between two reversals however long the processor stays unavailable', async () => {
    const w = setup(Array.from({ length: 13 }, () => 'PROCESSOR_UNAVAILABLE'));
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(2 * DAY_MS);
    expect(w.reversals.map((r) => r.answer).at(-1)).toBe('approved');
    expect(w.gaps()).toEqual(
      [...Array.from({ length: 10 }, (_, i) => RETRY_MS * 2 ** i), 3_600_000, 3_600_000, 3_600_000].map(
        (ms) => ms + MACHINE_MS,
      ),
    );
    expect(w.notices).toEqual([]);
    expect(w.store.has('H1')).toBe(false);
  });

  it('at a start after refusals for now, does not leave the hold to the operator: reverses it after the wait', async () => {
    const w = setup([], ['PROCESSOR_UNAVAILABLE', 'PROCESSOR_UNAVAILABLE', 'PROCESSOR_UNAVAILABLE']);
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect({ notices: w.notices, reversals: w.reversals, open: w.store.has('H1') }).toEqual({
      notices: [],
      // the wait after a third refusal for now: resolutionRetryMs doubled twice
      reversals: [{ atMs: 4 * RETRY_MS + MACHINE_MS, answer: 'approved' }],
      open: false,
    });
  });
});

describe('hold watch: an exit whose reversal of the hold was refused because the processor is unavailable', () => {
  it('reverses the hold after the wait, before its expiry: its release was decided already', async () => {
    const w = setup([], ['PROCESSOR_UNAVAILABLE'], { expiresInMs: 20 * 3_600_000 });
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect({ notices: w.notices, reversals: w.reversals, open: w.store.has('H1') }).toEqual({
      notices: [],
      reversals: [{ atMs: RETRY_MS + MACHINE_MS, answer: 'approved' }],
      open: false,
    });
  });

  it('and after a refusal for good, waits for the expiry as before', async () => {
    const w = setup([], ['INVALID_DATA'], { expiresInMs: 20 * 3_600_000 });
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect(w.reversals).toEqual([{ atMs: 20 * 3_600_000 + MACHINE_MS, answer: 'approved' }]);
  });
});

describe('hold watch: reversals refused for good', () => {
  it('leaves the hold to the operator after as many refusals as the machine tries, refusals for now not counted', async () => {
    const w = setup([
      'PROCESSOR_UNAVAILABLE',
      'INVALID_DATA',
      'PROCESSOR_UNAVAILABLE',
      'INVALID_DATA',
      'INVALID_DATA',
    ]);
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect({
      answers: w.reversals.map((r) => r.answer),
      notices: w.notices,
      open: w.store.has('H1'),
    }).toEqual({
      answers: [
        'PROCESSOR_UNAVAILABLE',
        'INVALID_DATA',
        'PROCESSOR_UNAVAILABLE',
        'INVALID_DATA',
        'INVALID_DATA',
      ],
      notices: ['INVALID_DATA'],
      open: true,
    });
    expect(w.lines.filter((l) => l.level >= ERROR).map((l) => [l.msg, l.reason])).toEqual([
      ['hold reversal refused; the operator must release it', 'INVALID_DATA'],
    ]);
    // And so at the next start, at once, with no further reversal.
    const again = setup(
      [],
      ['PROCESSOR_UNAVAILABLE', 'INVALID_DATA', 'PROCESSOR_UNAVAILABLE', 'INVALID_DATA', 'INVALID_DATA'],
    );
    again.watch.watchAll();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect({ reversals: again.reversals, notices: again.notices }).toEqual({
      reversals: [],
      notices: ['INVALID_DATA'],
    });
  });
});

describe('hold watch: the operator releases a hold (passback reset)', () => {
  it('reverses a hold not expired now, by the expiry run, once: a second release sends nothing', async () => {
    const w = setup([], [], { expiresInMs: DAY_MS / 2 });
    w.watch.watchAll();
    const first = w.watch.release('H1');
    expect(first.kind).toBe('started');
    // While its reversal runs, the hold is being settled: another release sends nothing.
    expect(w.watch.release('H1')).toEqual({ kind: 'settling' });
    await vi.advanceTimersByTimeAsync(MACHINE_MS);
    const result = first.kind === 'started' ? await first.result : undefined;
    expect(result).toMatchObject({ holdId: 'H1', outcome: 'reversed', transactionId: 'R1' });
    expect(w.watch.release('H1')).toEqual({ kind: 'not-found' });
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect({
      reversals: w.reversals.map((r) => [r.atMs, r.answer]),
      open: w.store.has('H1'),
      released: w.released,
      watched: w.watch.size,
    }).toEqual({ reversals: [[0, 'approved']], open: false, released: ['H1'], watched: 0 });
    expect(w.lines.map((l) => l.msg)).toContain('hold reversed: released by the operator');
  });

  it('refused for now: tried again after its wait, before the expiry; meanwhile a release sends nothing', async () => {
    const w = setup(['PROCESSOR_UNAVAILABLE'], [], { expiresInMs: DAY_MS / 2 });
    w.watch.watchAll();
    const first = w.watch.release('H1');
    await vi.advanceTimersByTimeAsync(MACHINE_MS);
    expect(first.kind === 'started' ? await first.result : first).toMatchObject({
      outcome: 'later',
      reason: 'PROCESSOR_UNAVAILABLE',
    });
    expect(w.watch.release('H1')).toEqual({ kind: 'releasing' });
    expect(w.watch.standing(w.store.get('H1')!, false)).toBe('releasing');
    await vi.advanceTimersByTimeAsync(RETRY_MS + MACHINE_MS);
    expect({
      reversals: w.reversals.map((r) => [r.atMs, r.answer]),
      open: w.store.has('H1'),
      notices: w.notices,
    }).toEqual({
      reversals: [
        [0, 'PROCESSOR_UNAVAILABLE'],
        [RETRY_MS + MACHINE_MS, 'approved'],
      ],
      open: false,
      notices: [],
    });
  });

  it('sends nothing for a hold claimed by an exit or being settled, and tells which', () => {
    const w = setup([], [], { expiresInMs: DAY_MS / 2 });
    const hold = w.store.get('H1')!;
    expect(w.watch.standing(hold, false)).toBe('open');
    w.store.claimById('H1');
    expect(w.watch.standing(hold, true)).toBe('settling');
    expect(w.watch.release('H1')).toEqual({ kind: 'settling' });
    expect(w.watch.release('H9')).toEqual({ kind: 'not-found' });
    expect(w.reversals).toEqual([]);
  });
});

describe('hold watch: the stay of a hold reversed at its maximum stay', () => {
  /** What the card's exit finds once the hold is closed. */
  const exitOf = (store: HoldStore) =>
    store.claimAtExit('fp-1', { settling: () => false, recentCaptureMs: 0, captureStands: () => false }).kind;

  it('stays owed at the exit once the expiry released the hold: its car is inside', async () => {
    const w = setup([]);
    w.watch.watchAll();
    await vi.advanceTimersByTimeAsync(MACHINE_MS);
    expect(w.released).toEqual(['H1']);
    expect(exitOf(w.store)).toBe('outstayed');
    // Told to the host in the commit of the mark, for the operator: the exit may never come.
    expect(w.outstayed).toEqual([{ holdId: 'H1', atMs: START_MS, inCommit: true }]);
  });

  it('is not taken at a maximum stay when the card entered again: its car was let out, and nothing is told', async () => {
    const w = setup([], [], { expiresInMs: DAY_MS / 2 });
    w.watch.watchAll();
    const h2 = {
      ...w.hold,
      holdId: 'H2',
      transactionId: 'H2',
      enteredAtMs: START_MS,
      expiresAtMs: START_MS + DAY_MS,
    };
    const due = w.store.open(h2);
    expect(due.map((h) => h.holdId)).toEqual(['H1']);
    for (const h of due) w.watch.watch(h);
    await vi.advanceTimersByTimeAsync(MACHINE_MS);
    expect(w.released).toEqual(['H1']);
    expect(w.outstayed).toEqual([]);
  });

  it('is not owed once the operator released the hold before its expiry: the car was let out', async () => {
    const w = setup([], [], { expiresInMs: DAY_MS / 2 });
    w.watch.watchAll();
    const release = w.watch.release('H1');
    await vi.advanceTimersByTimeAsync(MACHINE_MS);
    if (release.kind === 'started') await release.result;
    expect(w.released).toEqual(['H1']);
    expect(exitOf(w.store)).toBe('none');
  });
});
