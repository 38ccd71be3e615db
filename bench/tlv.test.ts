import { describe, expect, it } from 'vitest';
import { decodeTlv } from '../src/emv/index.js';
import { benchmarks, FIELD_55 } from './tlv.js';

describe('tlv benchmarks', () => {
  it('use a realistic field 55 payload of 200-300 bytes of primitive EMV tags', () => {
    expect(FIELD_55.length).toBeGreaterThanOrEqual(200);
    expect(FIELD_55.length).toBeLessThanOrEqual(300);
    expect(decodeTlv(FIELD_55).every((n) => n.value !== undefined)).toBe(true);
  });

  it('report tlv.decode and tlv.encode against node-tlv and ber-tlv with ours/peer ratios', async () => {
    const rows = (await Promise.all(benchmarks.map((b) => b.run({ quick: true })))).flat();
    expect(rows.map((r) => [r.name, r.peer, r.unit])).toEqual([
      ['tlv.decode', 'node-tlv', 'ops/s'],
      ['tlv.decode', 'ber-tlv', 'ops/s'],
      ['tlv.encode', 'node-tlv', 'ops/s'],
      ['tlv.encode', 'ber-tlv', 'ops/s'],
    ]);
    for (const r of rows) {
      expect(r.ours).toBeGreaterThan(0);
      expect(r.peerValue).toBeGreaterThan(0);
      // ours / peer, computed before rounding the figures to whole ops/s.
      expect(Math.abs((r.ratio ?? 0) / (r.ours / (r.peerValue ?? 1)) - 1)).toBeLessThan(0.01);
    }
  });
});
