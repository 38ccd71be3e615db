import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { ServiceRequest, SubmitOutcome } from '../flows/index.js';
import { FollowUpStore, HoldStore, openJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { OpenAuthorizations } from './open-authorizations.js';

function setup(answer: (r: ServiceRequest) => SubmitOutcome) {
  let t = Date.parse('2030-01-01T08:00:00Z');
  const now = (): Date => new Date(t);
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
      return Promise.resolve(answer(r));
    },
    authorizedTotal: () => undefined,
    now,
    logger: silentLogger(),
  });
  const f = followUps.add({
    kind: 'reverse-authorization',
    authorizationTransactionId: 'A1',
    gatewayId: 'G1',
    amountMinor: 1_200,
    currency: 'GBP',
    includeEmvTags: true,
    reason: 'capture voided',
  });
  return { open, followUps, sent, id: f.id, advance: (ms: number) => (t += ms), journal };
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
