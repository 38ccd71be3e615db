import { describe, expect, it } from 'vitest';
import { FleetCommandLog } from './fleet-commands.js';
import { openJournal } from './journal.js';

describe('FleetCommandLog', () => {
  it('claims an id once; a second claim returns the reply of the first', () => {
    let now = 1_000_000;
    const journal = openJournal(':memory:', { now: () => new Date(now) });
    const log = new FleetCommandLog(journal);
    const cmd = { id: 'cmd-1', command: 'flush-queue', expiresAtMs: now + 60_000 };
    expect(log.claim(cmd)).toEqual({ fresh: true });
    // Claimed, not begun: a second delivery finds it waiting (it never took effect); one of them begins it.
    expect(log.claim(cmd)).toEqual({ fresh: false, waiting: true });
    expect(log.begun('cmd-1')).toBe(false);
    expect(log.begin('cmd-1')).toEqual({ begun: true });
    expect(log.begin('cmd-1')).toEqual({ begun: false });
    expect(log.begun('cmd-1')).toBe(true);
    expect(log.claim(cmd)).toEqual({ fresh: false });
    expect(() => log.begin('cmd-unknown')).toThrow(/not claimed/);
    log.finish('cmd-1', { ok: true, result: { forwarded: 0 } });
    expect(log.claim(cmd)).toEqual({ fresh: false, reply: { ok: true, result: { forwarded: 0 } } });
    expect(log.begin('cmd-1')).toEqual({ begun: false, reply: { ok: true, result: { forwarded: 0 } } });
    expect(() => log.finish('cmd-1', { ok: true })).toThrow(/not waiting or executing/);
    // A command refused before its turn (expired meanwhile, the terminal stopping) is answered without beginning.
    log.claim({ id: 'cmd-3', command: 'restart', expiresAtMs: now + 60_000 });
    log.finish('cmd-3', { ok: false, code: 'EXPIRED' });
    expect(log.begin('cmd-3')).toEqual({ begun: false, reply: { ok: false, code: 'EXPIRED' } });
    // A day after its expiry the id is forgotten (the signature check refuses the command by then).
    now += 60_000 + 24 * 60 * 60 * 1000 + 1;
    expect(log.claim({ id: 'cmd-2', command: 'restart', expiresAtMs: now + 1 })).toEqual({ fresh: true });
    expect(log.has('cmd-1')).toBe(false);
    journal.close();
  });

  it('never takes an id it may have forgotten as new: a clock set back past what it pruned', () => {
    // An id is deleted a day after its command expired, judged by the terminal's clock. Set back (a reset real-time
    // clock, a spoofed time server), that clock made a forgotten command fresh again: executed a second time.
    const day = 24 * 60 * 60 * 1000;
    const start = Date.parse('2026-03-01T10:00:00Z');
    let now = start;
    const journal = openJournal(':memory:', { now: () => new Date(now) });
    const log = new FleetCommandLog(journal);
    const old = { id: 'cmd-old', command: 'out-of-service', expiresAtMs: now + 60_000 };
    expect(log.claim(old)).toEqual({ fresh: true });
    now += 2 * day;
    expect(log.claim({ id: 'cmd-new', command: 'flush-queue', expiresAtMs: now + 60_000 })).toEqual({
      fresh: true,
    });
    expect(log.has('cmd-old')).toBe(false);
    // Back to a moment within the old command's validity.
    now = old.expiresAtMs - 30_000;
    // Ids are kept from a day before the newest claim (2 days after the start): the old one may have been pruned.
    expect(log.claim(old)).toEqual({ fresh: false, forgotten: true, keptFromMs: start + day });
    // A new command whose validity reaches into what the log still holds is taken.
    expect(
      log.claim({ id: 'cmd-later', command: 'restart', expiresAtMs: old.expiresAtMs + 2 * day }),
    ).toEqual({
      fresh: true,
    });
    journal.close();
  });

  it('refuses ids that are not printable identifiers', () => {
    const journal = openJournal(':memory:');
    const log = new FleetCommandLog(journal);
    expect(() => log.claim({ id: 'a b', command: 'restart', expiresAtMs: 1 })).toThrow(/printable/);
    journal.close();
  });
});
