import { describe, expect, it } from 'vitest';
import { MOSQUITTO } from './mosquitto.js';
import { benchmarks } from './fleet.js';

describe.skipIf(!MOSQUITTO && !process.env.CI)('fleet benchmark', () => {
  it('reports heartbeats per second through a real Mosquitto, ours and the bare clients', async () => {
    const rows = (await Promise.all(benchmarks.map((b) => b.run({ quick: true })))).flat();
    expect(rows.map((r) => [r.name, r.unit])).toEqual([['fleet.heartbeats', 'heartbeats/s']]);
    expect(rows[0]!.ours).toBeGreaterThan(0);
    expect(rows[0]!.peerValue).toBeGreaterThan(0);
    expect(rows[0]!.extra).toMatchObject({ terminals: 20 });
  }, 30_000);
});
