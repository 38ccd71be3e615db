import { afterEach, describe, expect, it } from 'vitest';
import { AuditStore, openJournal, type SqliteJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { AuditTrail } from './audit-trail.js';

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

function setup() {
  const journal = openJournal(':memory:', { now: () => new Date('2030-01-01T08:00:00Z') });
  journals.push(journal);
  return { journal, trail: new AuditTrail(new AuditStore(journal), silentLogger()) };
}

describe('AuditTrail', () => {
  it('records a recovery: settled as ok, one that needs the operator as refused', () => {
    const { trail } = setup();
    trail.recovery({
      entryId: 4,
      transactionId: 'A1',
      service: 'preauth',
      amountMinor: 2_000,
      currency: 'GBP',
      resolution: 'timeout-reversal',
      resolvedByEntryId: 5,
      attempts: 1,
      needsOperator: false,
      at: '2030-01-01T08:00:00.000Z',
    });
    trail.recovery({
      entryId: 6,
      service: 'void-payment',
      resolution: 'not-voidable',
      attempts: 2,
      needsOperator: true,
      at: '2030-01-01T08:00:00.000Z',
    });
    expect(trail.list().map(({ id: _id, time: _time, ...r }) => r)).toEqual([
      {
        actor: 'system',
        action: 'recovery',
        subject: 'A1',
        result: 'ok',
        code: 'timeout-reversal',
        details: {
          entryId: 4,
          service: 'preauth',
          amountMinor: 2_000,
          currency: 'GBP',
          attempts: 1,
          needsOperator: false,
          resolvedByEntryId: 5,
        },
      },
      {
        actor: 'system',
        action: 'recovery',
        subject: 'entry-6',
        result: 'refused',
        code: 'not-voidable',
        details: { entryId: 6, service: 'void-payment', attempts: 2, needsOperator: true },
      },
    ]);
  });

  it('records a configuration change with its values, but never the values of a secret', () => {
    const { trail } = setup();
    trail.configurationChange({
      actor: 'operator',
      key: 'offline.policy',
      from: 'online-only',
      to: 'prefer-online',
    });
    // The path of a secret file and a public key id are not secrets; a key that could hold one is never recorded.
    trail.configurationChange({ actor: 'fleet', key: 'terminal.operatorPinFile', from: '/a', to: '/b' });
    trail.configurationChange({ actor: 'fleet', key: 'gateway.auth.keyId', from: 'k1', to: 'k2' });
    trail.configurationChange({ actor: 'fleet', key: 'fleet.signingKey', from: 'abc', to: 'def' });
    trail.configurationChange({ actor: 'fleet', key: 'terminal.operatorPin', to: '1234' });
    trail.configurationChange({ actor: 'system', key: 'tariff.bands', from: 'x'.repeat(5_000), to: '[]' });
    expect(trail.list().map((r) => [r.actor, r.subject, r.details])).toEqual([
      ['operator', 'offline.policy', { from: 'online-only', to: 'prefer-online' }],
      ['fleet', 'terminal.operatorPinFile', { from: '/a', to: '/b' }],
      ['fleet', 'gateway.auth.keyId', { from: 'k1', to: 'k2' }],
      ['fleet', 'fleet.signingKey', { values: 'not recorded (secret)' }],
      ['fleet', 'terminal.operatorPin', { values: 'not recorded (secret)' }],
      ['system', 'tariff.bands', { from: `${'x'.repeat(240)}… (5000 characters)`, to: '[]' }],
    ]);
  });

  it('records service mode on with its reason, and off', () => {
    const { trail } = setup();
    trail.serviceMode({ actor: 'operator', on: true, reason: 'Paper jam' });
    trail.serviceMode({ actor: 'operator', on: false });
    expect(trail.list().map((r) => [r.action, r.details])).toEqual([
      ['service-mode-on', { reason: 'Paper jam' }],
      ['service-mode-off', {}],
    ]);
  });

  it('logs a record it cannot write instead of throwing', () => {
    const { trail, journal } = setup();
    journal.db.exec('DROP TABLE audit_log');
    expect(trail.serviceMode({ actor: 'operator', on: true })).toBeUndefined();
  });
});
