import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let client: SignedClient;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
});

/** Every leaf path of a JSON object. */
function leaves(o: unknown, prefix = ''): string[] {
  if (typeof o !== 'object' || o === null) return [prefix];
  return Object.entries(o).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
}

function setPath(o: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur: Record<string, unknown> = o;
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  cur[keys[keys.length - 1] ?? ''] = value;
}

const PATHS = [
  '/pts/v2/payments',
  '/pts/v2/reversals',
  '/pts/v2/voids',
  '/pts/v2/credits',
  '/vas/v1/currencyconversion',
  '/ipl/v2/payment-links',
];

describe('bad input never crashes the sandbox', () => {
  it('answers arbitrary JSON on every service with a documented status, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), fc.jsonValue({ maxDepth: 3 }), async (path, body) => {
        const a = await client.send('POST', path, body);
        expect([200, 201, 400, 404]).toContain(a.status);
      }),
      { numRuns: 120 },
    );
  });

  it('answers a valid authorization with one field replaced by anything with 201 or 400', async () => {
    const base = samplePayment({ amountMinor: 1000, transactionId: 'fuzz' });
    // The amount is left alone: its last digits select deliberate faults (README, trigger table).
    const paths = leaves(base).filter((p) => p !== 'orderInformation.amountDetails.totalAmount');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 2 }), async (path, value) => {
        const body = samplePayment({ amountMinor: 1000, transactionId: `fuzz-${++n}` });
        setPath(body, path, value);
        const a = await client.send('POST', '/pts/v2/payments', body);
        expect([201, 400]).toContain(a.status);
        if (a.status === 400) expect(a.body.status).toBe('INVALID_REQUEST');
      }),
      { numRuns: 150 },
    );
    expect(sandbox.consistency().ok).toBe(true);
  });
});
