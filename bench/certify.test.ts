import { describe, expect, it } from 'vitest';
import { checkSession } from '../certification/check.js';
import { benchmarks, buildCorpus } from './certify.js';

describe('certify benchmark', () => {
  it('builds a corpus of compliant sessions with the asked number of messages and fresh ids', () => {
    const { sessions, messages } = buildCorpus(100);
    expect(messages).toBe(100);
    const all = sessions.map(
      (s) => JSON.parse(s) as Array<{ body: { clientReferenceInformation?: { transactionId?: string } } }>,
    );
    expect(all.flat()).toHaveLength(100);
    for (const session of all) {
      const result = checkSession(session);
      expect(result.messages.flatMap((m) => m.findings)).toEqual([]);
    }
    const ids = all.flat().flatMap((m) => m.body.clientReferenceInformation?.transactionId ?? []);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('reports certify.check against Ajv and the JSON.parse floor with ours/peer ratios', async () => {
    const rows = (await Promise.all(benchmarks.map((b) => b.run({ quick: true })))).flat();
    expect(rows.map((r) => [r.name, r.unit])).toEqual([
      ['certify.check', 'msgs/s'],
      ['certify.check', 'msgs/s'],
    ]);
    expect(rows[0]?.peer).toMatch(/^ajv /);
    expect(rows[1]?.peer).toMatch(/^JSON\.parse/);
    for (const r of rows) {
      expect(r.ours).toBeGreaterThan(0);
      expect(r.peerValue).toBeGreaterThan(0);
      expect(r.extra).toMatchObject({ messages: 180 });
    }
  });
});
