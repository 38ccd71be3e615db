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
    expect(log.claim(cmd)).toEqual({ fresh: false });
    log.finish('cmd-1', { ok: true, result: { forwarded: 0 } });
    expect(log.claim(cmd)).toEqual({ fresh: false, reply: { ok: true, result: { forwarded: 0 } } });
    expect(() => log.finish('cmd-1', { ok: true })).toThrow(/not executing/);
    // A day after its expiry the id is forgotten (the signature check refuses the command by then).
    now += 60_000 + 24 * 60 * 60 * 1000 + 1;
    expect(log.claim({ id: 'cmd-2', command: 'restart', expiresAtMs: now + 1 })).toEqual({ fresh: true });
    expect(log.has('cmd-1')).toBe(false);
    journal.close();
  });

  it('refuses ids that are not printable identifiers', () => {
    const journal = openJournal(':memory:');
    const log = new FleetCommandLog(journal);
    expect(() => log.claim({ id: 'a b', command: 'restart', expiresAtMs: 1 })).toThrow(/printable/);
    journal.close();
  });
});
