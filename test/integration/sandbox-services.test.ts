import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import {
  sampleCapture,
  sampleEmvTags,
  samplePayment,
  sampleRefund,
  sampleReversal,
  sampleTimeoutReversal,
} from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let client: SignedClient;
let offsetMs = 0;
let seq = 0;
const tid = (): string => `S${String(++seq).padStart(6, '0')}`;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url, undefined, () => new Date(Date.now() + offsetMs));
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => {
  sandbox.reset();
  offsetMs = 0;
});

function advance(ms: number): void {
  sandbox.advanceClock(ms);
  offsetMs += ms;
}

function set(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const keys = path.split('.');
  let cur = body;
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  const last = keys[keys.length - 1] ?? '';
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return body;
}

async function sale(
  amountMinor: number,
  extra: Parameters<typeof samplePayment>[0] extends infer O ? Partial<O> : never = {},
): Promise<string> {
  const a = await client.send(
    'POST',
    '/pts/v2/payments',
    samplePayment({ amountMinor, transactionId: tid(), sale: true, ...extra }),
  );
  expect(a.body.status).toBe('AUTHORIZED');
  return String(a.body.id);
}

describe('card-present field rules (spec 001)', () => {
  it.each([
    ['merchantInformation.transactionLocalDateTime', '2026112210150', 'INVALID_DATA'],
    ['merchantInformation.transactionLocalDateTime', '20261322101500', 'INVALID_DATA'],
    ['clientReferenceInformation.comments', 'Parking Sale', 'INVALID_DATA'],
    ['pointOfSaleInformation.catLevel', '7', 'INVALID_DATA'],
    ['pointOfSaleInformation.terminalCapability', '2', 'INVALID_DATA'],
    ['processingInformation.commerceIndicator', 'internet', 'INVALID_DATA'],
    ['clientReferenceInformation.partner.solutionId', undefined, 'MISSING_FIELD'],
    ['pointOfSaleInformation.trackData', undefined, 'MISSING_FIELD'],
    ['pointOfSaleInformation.emv.tags', undefined, 'MISSING_FIELD'],
  ])('rejects %s = %s with %s', async (field, value, reason) => {
    const body = set(samplePayment({ amountMinor: 1000, transactionId: tid() }), field, value);
    const a = await client.send('POST', '/pts/v2/payments', body);
    expect(a.status).toBe(400);
    expect(a.body.details).toContainEqual({ field, reason });
  });

  it('rejects EMV tags missing a mandatory tag or carrying a never-send tag', async () => {
    const tags = sampleEmvTags(1000, 'EUR').replace('9F3704A1B2C3D4', '');
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      set(
        samplePayment({ amountMinor: 1000, transactionId: tid() }),
        'pointOfSaleInformation.emv.tags',
        tags,
      ),
    );
    expect(a.body.details).toContainEqual({
      field: 'pointOfSaleInformation.emv.tags',
      reason: 'INVALID_DATA',
    });
    expect(String(a.body.message)).toContain('mandatory tag 9F37');
    const withPan = `${sampleEmvTags(1000, 'EUR')}5A084111111111111111`;
    const b = await client.send(
      'POST',
      '/pts/v2/payments',
      set(
        samplePayment({ amountMinor: 1000, transactionId: tid() }),
        'pointOfSaleInformation.emv.tags',
        withPan,
      ),
    );
    expect(String(b.body.message)).toContain('tag 5A must never be sent');
    expect(JSON.stringify(sandbox.ledger())).not.toContain('4111111111111111');
  });

  it('requires isDedicatedHardwareTerminal for an attended mobile sale of card type 002', async () => {
    const body = samplePayment({
      amountMinor: 1000,
      transactionId: tid(),
      sale: true,
      catLevel: '6',
      card: 'mastercard',
    });
    set(body, 'pointOfSaleInformation.isDedicatedHardwareTerminal', undefined);
    const a = await client.send('POST', '/pts/v2/payments', body);
    expect(a.body.details).toContainEqual({
      field: 'pointOfSaleInformation.isDedicatedHardwareTerminal',
      reason: 'MISSING_FIELD',
    });
  });

  it('refuses card types other than 001 and 002 with CARD_TYPE_NOT_ACCEPTED', async () => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      set(samplePayment({ amountMinor: 1000, transactionId: tid() }), 'paymentInformation.card.type', '003'),
    );
    expect(a.body.reason).toBe('CARD_TYPE_NOT_ACCEPTED');
  });

  it('answers a zero-amount account verification with AUTHORIZED 0.00', async () => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 0, transactionId: tid() }),
    );
    expect(a.body.status).toBe('AUTHORIZED');
    expect(valueAt(a.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('0.00');
  });
});

describe('incremental authorization', () => {
  const increment = (extra: Record<string, unknown>): Record<string, unknown> => ({
    clientReferenceInformation: { comments: 'Parking Incremental Auth' },
    merchantInformation: { transactionLocalDateTime: '20261122111500' },
    processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
    orderInformation: { amountDetails: { currency: 'EUR', ...extra } },
  });

  it('raises the authorized total (additionalAmount or new totalAmount) and the reversal must carry it', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    const id = String(auth.body.id);
    const inc = await client.send('PATCH', `/pts/v2/payments/${id}`, increment({ additionalAmount: '5.00' }));
    expect(inc.status).toBe(201);
    expect(valueAt(inc.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('15.00');
    expect(valueAt(inc.body, '_links.capture.href')).toBe(`/pts/v2/payments/${id}/captures`);
    const inc2 = await client.send('PATCH', `/pts/v2/payments/${id}`, increment({ totalAmount: '20.00' }));
    expect(valueAt(inc2.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('20.00');
    const tags = sampleEmvTags(1000, 'EUR');
    expect(
      (await client.send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(1000, 'EUR', tags))).body
        .reason,
    ).toBe('INVALID_AMOUNT');
    expect(
      (await client.send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(2000, 'EUR', tags))).body
        .status,
    ).toBe('REVERSED');
  });

  it('takes back only the increment when a timeout reversal names the transactionId of the increment', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    const id = String(auth.body.id);
    const incrementTx = tid();
    const inc = await client.send('PATCH', `/pts/v2/payments/${id}`, {
      ...increment({ additionalAmount: '5.00' }),
      clientReferenceInformation: { comments: 'Parking Incremental Auth', transactionId: incrementTx },
    });
    expect(valueAt(inc.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('15.00');
    expect(
      (await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(incrementTx, 1000))).body.reason,
    ).toBe('INVALID_AMOUNT');
    const back = await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(incrementTx, 500));
    expect(back.body.status).toBe('REVERSED');
    expect(valueAt(back.body, 'reversalAmountDetails.reversedAmount')).toBe('5.00');
    const ledgerAuth = sandbox.ledger().transactions.find((t) => t.id === id);
    expect(ledgerAuth?.amounts.authorized).toBe(1000);
    // The authorization is whole again: its full reversal carries the amount before the increment.
    const tags = sampleEmvTags(1000, 'EUR');
    expect(
      (await client.send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(1000, 'EUR', tags))).body
        .status,
    ).toBe('REVERSED');
    expect(sandbox.consistency().ok).toBe(true);
  });

  it('requires storedCredentialUsed and the parking comment', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    const body = increment({ additionalAmount: '5.00' });
    set(body, 'processingInformation.authorizationOptions.initiator.storedCredentialUsed', false);
    set(body, 'clientReferenceInformation.comments', 'more');
    const a = await client.send('PATCH', `/pts/v2/payments/${String(auth.body.id)}`, body);
    expect(a.status).toBe(400);
    expect(a.body.details).toEqual(
      expect.arrayContaining([
        {
          field: 'processingInformation.authorizationOptions.initiator.storedCredentialUsed',
          reason: 'INVALID_DATA',
        },
        { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
      ]),
    );
  });
});

describe('captures, refunds, credits', () => {
  it('requires the comment that matches a capture below or at the authorization', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2000, transactionId: tid() }),
    );
    const body = sampleCapture(1500, 2000, tid());
    set(body, 'clientReferenceInformation.comments', 'Parking Capture');
    const a = await client.send('POST', `/pts/v2/payments/${String(auth.body.id)}/captures`, body);
    expect(a.body.details).toContainEqual({
      field: 'clientReferenceInformation.comments',
      reason: 'INVALID_DATA',
    });
  });

  it('requires EMV tags with 95, 9F10 and 9F26 on the capture of an EMV contact pre-authorization', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2000, transactionId: tid(), entryMode: 'contact' }),
    );
    const id = String(auth.body.id);
    const bare = await client.send(
      'POST',
      `/pts/v2/payments/${id}/captures`,
      sampleCapture(2000, 2000, tid()),
    );
    expect(bare.body.details).toContainEqual({
      field: 'pointOfSaleInformation.emv.tags',
      reason: 'MISSING_FIELD',
    });
    const withTags = set(sampleCapture(2000, 2000, tid()), 'pointOfSaleInformation', {
      emv: { tags: sampleEmvTags(2000, 'EUR') },
    });
    expect((await client.send('POST', `/pts/v2/payments/${id}/captures`, withTags)).status).toBe(201);
  });

  it('refunds a sale with REFUND Payment and refuses 9F6E on a card type 002 refund', async () => {
    const id = await sale(3000, { card: 'mastercard' });
    const ok = await client.send('POST', `/pts/v2/payments/${id}/refunds`, sampleRefund(1000, tid(), 'sale'));
    expect(ok.status).toBe(201);
    const body = set(sampleRefund(1000, tid(), 'sale'), 'pointOfSaleInformation', {
      emv: { tags: `${sampleEmvTags(1000, 'EUR')}9F6E0420700000` },
    });
    const bad = await client.send('POST', `/pts/v2/payments/${id}/refunds`, body);
    expect(String(bad.body.message)).toContain('9F6E');
  });

  it('accepts a standalone credit with transaction type 20 and rejects type 00', async () => {
    const credit = (type: string): Record<string, unknown> => {
      const body = samplePayment({ amountMinor: 500, transactionId: tid() });
      set(body, 'clientReferenceInformation.comments', 'Parking Standalone Credit');
      set(body, 'pointOfSaleInformation.emv.tags', sampleEmvTags(500, 'EUR', { transactionType: type }));
      set(body, 'pointOfSaleInformation.catLevel', undefined);
      set(body, 'processingInformation.authorizationOptions', undefined);
      return body;
    };
    const ok = await client.send('POST', '/pts/v2/credits', credit('20'));
    expect(ok.status).toBe(201);
    expect(ok.body.status).toBe('PENDING');
    expect((await client.send('POST', '/pts/v2/credits', credit('00'))).body.details).toContainEqual({
      field: 'pointOfSaleInformation.emv.tags',
      reason: 'INVALID_DATA',
    });
  });

  it('answers GET of each resource with its current status and 404 for another kind', async () => {
    const id = await sale(1000);
    const got = await client.send('GET', `/pts/v2/payments/${id}`);
    expect(got).toMatchObject({ status: 200, body: { id, status: 'AUTHORIZED' } });
    expect((await client.send('GET', `/pts/v2/captures/${id}`)).status).toBe(404);
  });
});

describe('voids and timeouts', () => {
  it('voids a sale before the cut-off with VOID Payment and refuses it after (NOT_VOIDABLE)', async () => {
    const early = await sale(1000);
    expect(
      (
        await client.send('POST', `/pts/v2/payments/${early}/voids`, {
          clientReferenceInformation: { comments: 'VOID Capture' },
        })
      ).body.details,
    ).toContainEqual({
      field: 'clientReferenceInformation.comments',
      reason: 'INVALID_DATA',
    });
    expect(
      (
        await client.send('POST', `/pts/v2/payments/${early}/voids`, {
          clientReferenceInformation: { comments: 'VOID Payment' },
        })
      ).body.status,
    ).toBe('VOIDED');
    const late = await sale(1000);
    advance(24 * 3600 * 1000);
    const refused = await client.send('POST', `/pts/v2/payments/${late}/voids`, {
      clientReferenceInformation: { comments: 'VOID Payment' },
    });
    expect(refused.body.reason).toBe('NOT_VOIDABLE');
  });

  it('needs a body on a void ({} is accepted for a card-not-present original)', async () => {
    const id = await sale(1000);
    const res = await fetch(`${sandbox.url}/pts/v2/payments/${id}/voids`, { method: 'POST' });
    expect(res.status).toBe(401);
    const empty = await client.send('POST', `/pts/v2/payments/${id}/voids`);
    expect(empty.status).toBe(400);
  });

  it('times out a void by transactionId, found or not, idempotently', async () => {
    const t = tid();
    const s = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: t, sale: true }),
    );
    const body = { clientReferenceInformation: { transactionId: t, comments: 'VOID Timeout' } };
    const v1 = await client.send('POST', '/pts/v2/voids', body);
    expect(v1.body.status).toBe('VOIDED');
    expect(sandbox.ledger().transactions.find((x) => x.id === s.body.id)?.voided).toBe(true);
    expect((await client.send('POST', '/pts/v2/voids', body)).body).toEqual(v1.body);
    expect(
      (
        await client.send('POST', '/pts/v2/voids', {
          clientReferenceInformation: { transactionId: 'never-sent', comments: 'VOID Timeout' },
        })
      ).body.status,
    ).toBe('VOIDED');
  });

  it('refuses a timeout reversal of a captured authorization and one with another amount', async () => {
    const t = tid();
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2000, transactionId: t }),
    );
    expect((await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, 1500))).body.reason).toBe(
      'INVALID_AMOUNT',
    );
    await client.send(
      'POST',
      `/pts/v2/payments/${String(auth.body.id)}/captures`,
      sampleCapture(2000, 2000, tid()),
    );
    expect((await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, 2000))).body.reason).toBe(
      'TRANSACTION_ALREADY_SETTLED',
    );
  });

  it('records how long after the original a timeout reversal came', async () => {
    const t = tid();
    await client.send('POST', '/pts/v2/payments', samplePayment({ amountMinor: 2000, transactionId: t }));
    advance(60_000);
    await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, 2000));
    const rev = sandbox.ledger().transactions.find((x) => x.kind === 'timeout-reversal')!;
    expect(rev.originalFound).toBe(true);
    expect(rev.delayAfterOriginalMs).toBeGreaterThanOrEqual(60_000);
  });
});

describe('authentication at the HTTP boundary', () => {
  it('answers 401 to a request dated ten minutes off and records the reason', async () => {
    offsetMs = 10 * 60 * 1000;
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    expect(a.status).toBe(401);
    expect(sandbox.ledger().unmatchedRequests[0]?.auth.reason).toBe(
      'date is more than 5 minutes away from the gateway clock',
    );
  });

  it('answers 401 when the body changed after signing', async () => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
      { digest: 'SHA-256=AAAA' },
    );
    expect(a.status).toBe(401);
  });
});

describe('durable ledger', () => {
  it('keeps transactions in the SQLite file across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-ledger-'));
    try {
      const file = join(dir, 'ledger.db');
      const first = await startSandbox({ dataFile: file });
      const c = createSignedClient(first.url);
      const t = tid();
      const auth = await c.send(
        'POST',
        '/pts/v2/payments',
        samplePayment({ amountMinor: 1000, transactionId: t }),
      );
      await first.close();
      const second = await startSandbox({ dataFile: file });
      try {
        const tx = second.ledger().transactions;
        expect(tx.map((x) => x.id)).toEqual([auth.body.id]);
        const c2 = createSignedClient(second.url);
        const replay = await c2.send(
          'POST',
          '/pts/v2/payments',
          samplePayment({ amountMinor: 1000, transactionId: t }),
        );
        expect(replay.body.id).toBe(auth.body.id);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('voids of refunds and credits', () => {
  it('voids a refund with VOID Refund and gives the amount back to the capture', async () => {
    const id = await sale(3000);
    const refund = await client.send(
      'POST',
      `/pts/v2/payments/${id}/refunds`,
      sampleRefund(3000, tid(), 'sale'),
    );
    const v = await client.send('POST', `/pts/v2/refunds/${String(refund.body.id)}/voids`, {
      clientReferenceInformation: { comments: 'VOID Refund' },
    });
    expect(v.body.status).toBe('VOIDED');
    expect(sandbox.ledger().transactions.find((t) => t.id === id)?.amounts.refunded).toBe(0);
    expect(sandbox.consistency().ok).toBe(true);
  });

  it('refuses to void a sale that has refunds', async () => {
    const id = await sale(3000);
    await client.send('POST', `/pts/v2/payments/${id}/refunds`, sampleRefund(1000, tid(), 'sale'));
    const v = await client.send('POST', `/pts/v2/payments/${id}/voids`, {
      clientReferenceInformation: { comments: 'VOID Payment' },
    });
    expect(v.body.reason).toBe('NOT_VOIDABLE');
  });
});

describe('settlement cut-off and status checks', () => {
  it('refuses a void after a configured cut-off of the local day', async () => {
    const start = new Date();
    start.setHours(10, 0, 0, 0);
    let offset = 0;
    const clock = (): Date => new Date(start.getTime() + offset);
    const s = await startSandbox({ now: clock, settlementCutoff: '12:00' });
    try {
      const c = createSignedClient(s.url, undefined, clock);
      const sold = await c.send(
        'POST',
        '/pts/v2/payments',
        samplePayment({ amountMinor: 1000, transactionId: tid(), sale: true }),
      );
      offset = 3 * 3600 * 1000;
      const v = await c.send('POST', `/pts/v2/payments/${String(sold.body.id)}/voids`, {
        clientReferenceInformation: { comments: 'VOID Payment' },
      });
      expect(v.status).toBe(400);
      expect(v.body.reason).toBe('NOT_VOIDABLE');
    } finally {
      await s.close();
    }
  });

  it('answers a status check with the current status', async () => {
    const id = await sale(1000);
    const st = await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, {
      clientReferenceInformation: { code: 'x' },
    });
    expect(st).toMatchObject({ status: 200, body: { id, status: 'AUTHORIZED' } });
  });
});

describe('JWT at the HTTP boundary', () => {
  it('accepts an HS256 v2 token bound to the request and refuses it for another path', async () => {
    const { createHash, createHmac, randomUUID } = await import('node:crypto');
    const { DEMO_MERCHANT } = await import('../../src/sandbox/index.js');
    const body = JSON.stringify(samplePayment({ amountMinor: 1000, transactionId: tid() }));
    const token = (path: string): string => {
      const iat = Math.floor(Date.now() / 1000);
      const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
      const head = `${enc({ alg: 'HS256', kid: DEMO_MERCHANT.keyId })}.${enc({
        iat,
        exp: iat + 120,
        jti: randomUUID(),
        iss: DEMO_MERCHANT.merchantId,
        'v-c-merchant-id': DEMO_MERCHANT.merchantId,
        'v-c-jwt-version': '2',
        'request-host': new URL(sandbox.url).host,
        'request-resource-path': path,
        'request-method': 'POST',
        digest: createHash('sha256').update(body).digest('base64'),
        'digest-algorithm': 'SHA-256',
      })}`;
      return `${head}.${createHmac('sha256', Buffer.from(DEMO_MERCHANT.sharedSecret, 'base64')).update(head).digest('base64url')}`;
    };
    const post = (jwt: string): Promise<Response> =>
      fetch(`${sandbox.url}/pts/v2/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body,
      });
    expect((await post(token('/pts/v2/payments'))).status).toBe(201);
    expect((await post(token('/pts/v2/credits'))).status).toBe(401);
    expect(sandbox.ledger().unmatchedRequests.at(-1)?.auth).toEqual({
      scheme: 'jwt',
      verified: false,
      reason: 'request-resource-path does not match',
    });
  });
});

describe('incremental answer id', () => {
  it('answers with the original authorization id when configured so (reference/gateway.md §2)', async () => {
    const s = await startSandbox({ incrementalAnswerId: 'original' });
    try {
      const c = createSignedClient(s.url);
      const auth = await c.send(
        'POST',
        '/pts/v2/payments',
        samplePayment({ amountMinor: 1000, transactionId: tid() }),
      );
      const inc = await c.send('PATCH', `/pts/v2/payments/${String(auth.body.id)}`, {
        clientReferenceInformation: { comments: 'Parking Incremental Auth' },
        merchantInformation: { transactionLocalDateTime: '20261122111500' },
        processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
        orderInformation: { amountDetails: { currency: 'EUR', additionalAmount: '5.00' } },
      });
      expect(inc.body.id).toBe(auth.body.id);
      expect(valueAt(inc.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('15.00');
    } finally {
      await s.close();
    }
  });
});
