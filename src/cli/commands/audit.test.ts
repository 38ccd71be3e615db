import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditStore, openJournal, type NewAuditRecord, type SqliteJournal } from '../../journal/index.js';
import { main } from '../main.js';
import { capturedIo as io } from '../testing/io.js';

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  t = T0;
});

/** A terminal directory whose configuration puts the journal at var/j.db, and the terminal's open journal. */
function terminal(records: NewAuditRecord[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'audit-cli-'));
  writeFileSync(join(dir, 'terminal.json'), JSON.stringify({ journal: { path: 'var/j.db' } }));
  const journal = openJournal(join(dir, 'var/j.db'), { now: () => new Date(t) });
  journals.push(journal);
  // As the running terminal holds it.
  journal.acquireSenderLock('the terminal');
  const store = new AuditStore(journal);
  for (const r of records) {
    store.append(r);
    t += 60_000;
  }
  return { dir, store };
}

async function run(dir: string, args: string[]) {
  const { io: cli, out } = io(dir);
  const code = await main(['audit', ...args], cli);
  return { code, out: out() };
}

const signIn: NewAuditRecord = { actor: 'operator', action: 'sign-in', result: 'ok' };
const refund: NewAuditRecord = {
  actor: 'operator',
  action: 'refund',
  subject: 'S1',
  result: 'ok',
  code: 'APPROVED',
  details: { amountMinor: 600, outcome: 'approved' },
};

describe('parking-terminal audit', () => {
  it('prints the log as JSON while the terminal holds the journal, oldest first', async () => {
    const { dir } = terminal([signIn, refund]);
    const { code, out } = await run(dir, ['--config', 'terminal.json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      records: [
        {
          id: 1,
          time: '2030-01-01T08:00:00.000Z',
          actor: 'operator',
          action: 'sign-in',
          result: 'ok',
          details: {},
        },
        {
          id: 2,
          time: '2030-01-01T08:01:00.000Z',
          actor: 'operator',
          action: 'refund',
          subject: 'S1',
          result: 'ok',
          code: 'APPROVED',
          details: { amountMinor: 600, outcome: 'approved' },
        },
      ],
    });
  });

  it('filters by --since and --limit, and reads --journal PATH', async () => {
    const { dir } = terminal([signIn, refund, refund, signIn]);
    const since = await run(dir, ['--journal', 'var/j.db', '--since', '2030-01-01T08:01:00Z']);
    expect((JSON.parse(since.out) as { records: { id: number }[] }).records.map((r) => r.id)).toEqual([
      2, 3, 4,
    ]);
    const limited = await run(dir, ['--journal', 'var/j.db', '--since', '2030-01-01T08:01', '--limit', '2']);
    expect((JSON.parse(limited.out) as { records: { id: number }[] }).records.map((r) => r.id)).toEqual([
      3, 4,
    ]);
    const day = await run(dir, ['--journal', 'var/j.db', '--since', '2030-01-02']);
    expect(JSON.parse(day.out)).toEqual({ records: [] });
  });

  it('prints CSV with a header row, RFC 4180 quoting and formula cells defused', async () => {
    const { dir } = terminal([
      refund,
      {
        actor: 'system',
        action: 'configuration-change',
        subject: '=HYPERLINK("http://x","click")',
        result: 'failed',
        code: '@SUM',
        details: { note: 'a, "quoted"\nline' },
      },
      { actor: 'fleet', action: 'service-mode-on', subject: '-1+2', result: 'ok' },
      { actor: 'operator', action: 'reprint', subject: '+44', result: 'ok' },
    ]);
    const { code, out } = await run(dir, ['--config', 'terminal.json', '--csv']);
    expect(code).toBe(0);
    const rows = out.split('\r\n');
    expect(rows).toEqual([
      'id,time,actor,action,subject,result,code,details',
      '1,2030-01-01T08:00:00.000Z,operator,refund,S1,ok,APPROVED,"{""amountMinor"":600,""outcome"":""approved""}"',
      `2,2030-01-01T08:01:00.000Z,system,configuration-change,"'=HYPERLINK(""http://x"",""click"")",failed,'@SUM,"{""note"":""a, \\""quoted\\""\\nline""}"`,
      "3,2030-01-01T08:02:00.000Z,fleet,service-mode-on,'-1+2,ok,,{}",
      "4,2030-01-01T08:03:00.000Z,operator,reprint,'+44,ok,,{}",
      '',
    ]);
  });

  it('quotes a field that holds a line break', async () => {
    const { dir } = terminal([{ ...signIn, subject: 'two\nlines' }]);
    const { out } = await run(dir, ['--config', 'terminal.json', '--csv']);
    expect(out.split('\r\n')[1]).toBe('1,2030-01-01T08:00:00.000Z,operator,sign-in,"two\nlines",ok,,{}');
  });

  it('prints an empty log for a journal that does not exist, without creating it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-cli-'));
    const json = await run(dir, ['--journal', 'var/none.db']);
    expect(json).toEqual({ code: 0, out: `${JSON.stringify({ records: [] }, null, 2)}\n` });
    const csv = await run(dir, ['--journal', 'var/none.db', '--csv']);
    expect(csv.out).toBe('id,time,actor,action,subject,result,code,details\r\n');
    expect(existsSync(join(dir, 'var/none.db'))).toBe(false);
  });

  it('leaves the log as it was: it only reads', async () => {
    const { dir, store } = terminal([signIn]);
    await run(dir, ['--config', 'terminal.json']);
    // The terminal goes on writing beside it.
    expect(store.append(refund).id).toBe(2);
    expect(store.list()).toHaveLength(2);
  });

  it.each([
    ['an unknown option', ['--delete']],
    ['a positional argument', ['list']],
    ['a --since that is not ISO 8601', ['--since', 'yesterday']],
    ['a --since that is not a date', ['--since', '2030-13-45']],
    ['a --limit of 0', ['--limit', '0']],
    ['a --limit that is not a number', ['--limit', 'ten']],
    ['a --limit above the maximum', ['--limit', '100001']],
    ['--csv with a value', ['--csv=yes']],
  ])('refuses %s with exit 2', async (_name, args) => {
    const { dir } = terminal();
    const { code, out } = await run(dir, args);
    expect(code).toBe(2);
    expect(JSON.parse(out)).toMatchObject({ error: { code: 'BAD_ARGUMENTS' } });
  });

  it('refuses a configuration file that does not exist with exit 2', async () => {
    const { dir } = terminal();
    const { code, out } = await run(dir, ['--config', 'missing.json']);
    expect(code).toBe(2);
    expect(JSON.parse(out)).toHaveProperty('error.code');
  });
});
