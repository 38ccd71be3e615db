import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { AuditStore, ConfigurationState, openJournal, type SqliteJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { AuditTrail } from './audit-trail.js';
import { recordConfiguration, settingChanges, settingsOf } from './configuration-audit.js';

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

function setup(path = ':memory:') {
  const journal = openJournal(path, { now: () => new Date('2030-01-01T08:00:00Z') });
  journals.push(journal);
  const trail = new AuditTrail(new AuditStore(journal), silentLogger());
  const state = new ConfigurationState(journal);
  const start = (input: unknown) => recordConfiguration(journal, state, trail, parseConfig(input), 'system');
  return { journal, trail, state, start };
}

describe('settingsOf / settingChanges', () => {
  it('flattens the configuration to dotted keys, arrays as their JSON text', () => {
    const settings = settingsOf(parseConfig({ terminal: { model: 'meter' } }));
    expect(settings['terminal.model']).toBe('meter');
    expect(settings['offline.policy']).toBeTypeOf('string');
    expect(Object.values(settings).every((v) => v === null || typeof v !== 'object')).toBe(true);
  });

  it('lists changed, added and removed keys in key order', () => {
    expect(settingChanges({ a: 1, b: 'x', c: true }, { a: 1, b: 'y', d: null })).toEqual([
      { key: 'b', from: 'x', to: 'y' },
      { key: 'c', from: true },
      { key: 'd', to: null },
    ]);
    expect(settingChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });
});

describe('recordConfiguration', () => {
  it('records the first start once, then each changed key with its old and new value, and nothing when unchanged', () => {
    const { trail, start } = setup();
    expect(start({})).toEqual([]);
    expect(start({})).toEqual([]);
    const changes = start({ terminal: { model: 'meter' }, offline: { policy: 'prefer-online' } });
    expect(changes.map((c) => c.key)).toEqual(['offline.policy', 'terminal.model']);
    expect(start({ terminal: { model: 'meter' }, offline: { policy: 'prefer-online' } })).toEqual([]);
    const records = trail.list().map((r) => [r.actor, r.action, r.subject, r.code ?? null, r.details]);
    expect(records[0]).toEqual([
      'system',
      'configuration-change',
      '(initial)',
      'INITIAL',
      expect.any(Object),
    ]);
    expect(records.slice(1)).toEqual([
      [
        'system',
        'configuration-change',
        'offline.policy',
        null,
        { from: 'online-only', to: 'prefer-online' },
      ],
      ['system', 'configuration-change', 'terminal.model', null, { from: 'kiosk', to: 'meter' }],
    ]);
  });

  it('keeps the reference across a restart of the journal', async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const file = join(await mkdtemp(join(tmpdir(), 'pt-config-')), 'journal.db');
    setup(file).start({ terminal: { model: 'attended' } });
    journals.splice(0).forEach((j) => j.close());
    const again = setup(file);
    expect(again.start({ terminal: { model: 'attended' } })).toEqual([]);
    expect(again.start({ terminal: { model: 'kiosk' } })).toEqual([
      { key: 'terminal.model', from: 'attended', to: 'kiosk' },
    ]);
  });
});
