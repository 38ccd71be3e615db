import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildConsentUrl,
  createGatewayClient,
  encryptedFileTokenStore,
  hmacKey,
  httpSignatureAuthenticator,
  jwtAuthenticator,
  newConsentState,
  OAuthTokenManager,
  oauthAuthenticator,
  receiveConsent,
  type Authenticator,
  type GatewayClient,
  type Outcome,
  type PointOfSale,
  type ServiceRequest,
} from '../../src/gateway/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const MERCHANT = 'testrest';
const KEY_ID = '08c94330-f618-42a3-b09d-e1e43be5efda';
const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const partner = {
  developerId: '12345678',
  solutionId: 'PARKTERM',
  thirdPartyCertificationNumber: 'PT0000000001',
};
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

function tlv(tag: string, value: string): string {
  return `${tag}${(value.length / 2).toString(16).padStart(2, '0').toUpperCase()}${value}`;
}

/** The mandatory tags of both networks (spec 001 EMV table), built here independently of the sandbox's samples. */
function emvTags(amountMinor: number, type = '00'): string {
  return [
    tlv('9A', '260101'),
    tlv('9C', type),
    tlv('5F2A', '0826'),
    tlv('9F1A', '0826'),
    tlv('9F02', String(amountMinor).padStart(12, '0')),
    tlv('9F03', '000000000000'),
    tlv('9F36', '0042'),
    tlv('82', '1980'),
    tlv('84', 'A0000000031010'),
    tlv('95', '0000008000'),
    tlv('9F10', '06010A03A00000'),
    tlv('9F26', '1122334455667788'),
    tlv('9F27', '80'),
    tlv('9F33', 'E0F8C8'),
    tlv('9F34', '1F0302'),
    tlv('9F37', 'A1B2C3D4'),
  ].join('');
}

const VISA_TRACK2 = ';4111111111111111=30122011234567890?';
const MC_TRACK2 = ';5555555555554444=30122011234567890?';

function pos(amountMinor: number, o: Partial<PointOfSale> = {}): PointOfSale {
  return {
    cardType: '001',
    entryMode: 'contact',
    terminalCapability: 4,
    terminalPinCapability: 0,
    catLevel: 2,
    terminalId: 'PT000001',
    emvTags: emvTags(amountMinor),
    trackData: VISA_TRACK2,
    ...o,
  };
}

const original = (amountMinor: number, p: Partial<PointOfSale> = {}) => ({
  code: `ORDER-${amountMinor}`,
  partner,
  amountMinor,
  currency: 'GBP',
  transactionLocalDateTime: '20260101120000',
  pos: pos(amountMinor, p),
});

let sandbox: Sandbox;
let client: GatewayClient;
let callbackPort: number;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function clientWith(auth: Authenticator, headersMs = 5_000): GatewayClient {
  return createGatewayClient({
    baseUrl: sandbox.url,
    merchantId: MERCHANT,
    auth,
    timeouts: { connectMs: 2_000, headersMs, bodyMs: 5_000 },
    retry: { maxAttempts: 3, initialDelayMs: 5, maxDelayMs: 20 },
  });
}

beforeAll(async () => {
  callbackPort = await freePort();
  sandbox = await startSandbox({
    lateResponseMs: 1_500,
    merchants: [
      {
        merchantId: MERCHANT,
        keyId: KEY_ID,
        sharedSecret: SECRET,
        jwt: {
          kid: 'JWT-SERIAL-1',
          publicKeyPem: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        },
      },
    ],
    oauthClients: [
      {
        clientId: 'partner-1',
        clientSecret: 'partner-secret',
        redirectUrl: `http://127.0.0.1:${callbackPort}/oauth/callback`,
        merchantId: MERCHANT,
        scope: 'payments',
      },
    ],
  });
  client = clientWith(httpSignatureAuthenticator(MERCHANT, KEY_ID, SECRET));
});

afterAll(async () => {
  await client.close();
  await sandbox.close();
});

async function send(request: ServiceRequest, c: GatewayClient = client): Promise<Outcome> {
  return c.send(c.prepare(request));
}

function describeOutcome(o: Outcome): string {
  return o.kind === 'rejected' || o.kind === 'declined'
    ? `${o.kind} ${o.reason} ${JSON.stringify(o.body)}`
    : o.kind === 'unknown'
      ? `unknown ${o.error.code} ${o.error.message}`
      : `approved ${o.status}`;
}

function approvedId(o: Outcome): string {
  if (o.kind !== 'approved') throw new Error(`expected approved, got ${describeOutcome(o)}`);
  return o.gatewayId;
}

describe('gateway client against the sandbox', () => {
  it('runs account verification', async () => {
    const o = await send({
      service: 'avr',
      ...original(0, { entryMode: 'contactless', terminalCapability: 5 }),
    });
    expect(o).toMatchObject({ kind: 'approved', authorizedMinor: 0 });
    // Reversed for what it authorized, 0.00: an approved verification whose customer cancelled (COMPENSATION).
    const reversal = await send({
      service: 'reversal',
      code: 'ORDER-0',
      partner,
      id: approvedId(o),
      authorizedMinor: 0,
      currency: 'GBP',
      emvTags: emvTags(0),
    });
    expect(reversal).toMatchObject({ kind: 'approved', status: 'REVERSED' });
  });

  let refundId = '';
  let creditId = '';

  it('runs the meter: pre-authorization, incremental, capture below authorization, refund', async () => {
    const auth = approvedId(await send({ service: 'preauth', ...original(1250) }));
    const inc = await send({
      service: 'incremental',
      code: 'ORDER-1250',
      partner,
      id: auth,
      additionalAmountMinor: 200,
      currency: 'GBP',
      transactionLocalDateTime: '20260101130000',
    });
    expect(inc).toMatchObject({ kind: 'approved', authorizedMinor: 1450 });
    const capture = await send({
      service: 'capture',
      code: 'ORDER-1250',
      partner,
      id: auth,
      amountMinor: 1000,
      authorizedMinor: 1450,
      currency: 'GBP',
      preauthEntryMode: 'contact',
      emvTags: emvTags(1250),
    });
    const captureId = approvedId(capture);
    const refund = await send({
      service: 'refund-capture',
      code: 'ORDER-1250',
      partner,
      id: captureId,
      amountMinor: 500,
      currency: 'GBP',
    });
    refundId = approvedId(refund);
  });

  it('voids the refund of a capture', async () => {
    approvedId(await send({ service: 'void-refund', code: 'ORDER-1250', partner, id: refundId }));
  });

  it('reverses a pre-authorization with its authorized amount, and the sandbox rejects a wrong amount', async () => {
    const o = await send({ service: 'preauth', ...original(2000) });
    const id = approvedId(o);
    const wrong = await send({
      service: 'reversal',
      code: 'ORDER-2000',
      partner,
      id,
      authorizedMinor: 1500,
      currency: 'GBP',
      emvTags: emvTags(2000),
    });
    expect(wrong.kind).toBe('rejected');
    const right = await send({
      service: 'reversal',
      code: 'ORDER-2000',
      partner,
      id,
      authorizedMinor: 2000,
      currency: 'GBP',
      emvTags: emvTags(2000),
    });
    expect(right).toMatchObject({ kind: 'approved', status: 'REVERSED', amountMinor: 2000 });
  });

  it('runs an attended sale (card type 002, catLevel 6), a refund of it, and a sale voided', async () => {
    const attended = original(1500, {
      cardType: '002',
      catLevel: 6,
      trackData: MC_TRACK2,
      initiationChannel: '00',
      serviceCode: '201',
      isDedicatedHardwareTerminal: '1',
    });
    const sale = approvedId(await send({ service: 'sale', ...attended }));
    expect(
      await send({
        service: 'refund-payment',
        code: 'ORDER-1500',
        partner,
        id: sale,
        amountMinor: 500,
        currency: 'GBP',
      }),
    ).toMatchObject({
      kind: 'approved',
    });
    const sale2 = approvedId(
      await send({ service: 'sale', ...original(750, { entryMode: 'contactless', terminalCapability: 5 }) }),
    );
    expect(await send({ service: 'void-payment', code: 'ORDER-750', partner, id: sale2 })).toMatchObject({
      kind: 'approved',
    });
  });

  it('runs a standalone credit, and a capture and its void', async () => {
    creditId = approvedId(
      await send({ service: 'credit', ...original(300, { emvTags: emvTags(300, '20') }) }),
    );
    const auth = approvedId(
      await send({
        service: 'preauth',
        ...original(900, { entryMode: 'contactless', terminalCapability: 5 }),
      }),
    );
    const capture = approvedId(
      await send({
        service: 'capture',
        code: 'ORDER-900',
        partner,
        id: auth,
        amountMinor: 900,
        authorizedMinor: 900,
        currency: 'GBP',
        preauthEntryMode: 'contactless',
      }),
    );
    approvedId(await send({ service: 'void-capture', code: 'ORDER-900', partner, id: capture }));
  });

  it('voids a standalone credit', async () => {
    approvedId(await send({ service: 'void-credit', code: 'ORDER-300', partner, id: creditId }));
  });

  it('classifies declines and partial approvals from the sandbox triggers', async () => {
    expect(await send({ service: 'preauth', ...original(1203) })).toMatchObject({
      kind: 'declined',
      reason: 'EXPIRED_CARD',
    });
    expect(await send({ service: 'preauth', ...original(1221) })).toMatchObject({
      kind: 'approved',
      partial: true,
      authorizedMinor: 610,
    });
  });

  it('turns a late answer into unknown, sends it once, and resolves it with a timeout reversal', async () => {
    const late = clientWith(httpSignatureAuthenticator(MERCHANT, KEY_ID, SECRET), 300);
    try {
      const before = sandbox.ledger();
      const prepared = late.prepare({ service: 'preauth', ...original(1243) });
      const o = await late.send(prepared);
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_TIMEOUT', outcomeUnknown: true } });
      // reference §2: wait 60 s after the original before the timeout reversal.
      sandbox.advanceClock(61_000);
      const reversal = await send({
        service: 'timeout-reversal',
        code: 'ORDER-1243',
        partner,
        originalTransactionId: prepared.transactionId!,
        amountMinor: 1243,
        currency: 'GBP',
      });
      expect(reversal).toMatchObject({ kind: 'approved', status: 'REVERSED' });
      expect(JSON.stringify(sandbox.ledger()).split(prepared.transactionId!).length - 1).toBeGreaterThan(0);
      expect(before).toBeDefined();
    } finally {
      await late.close();
    }
  });

  it('turns a reset after commit into unknown and resolves the sale with a timeout void', async () => {
    const prepared = client.prepare({ service: 'sale', ...original(1144) });
    const o = await client.send(prepared);
    expect(o).toMatchObject({ kind: 'unknown', error: { outcomeUnknown: true } });
    const v = await send({
      service: 'timeout-void',
      code: 'ORDER-1144',
      partner,
      originalTransactionId: prepared.transactionId!,
    });
    expect(v).toMatchObject({ kind: 'approved' });
  });

  it('turns a 502 into unknown without resending the authorization', async () => {
    const o = await send({ service: 'preauth', ...original(1141) });
    expect(o).toMatchObject({
      kind: 'unknown',
      httpStatus: 502,
      error: { code: 'GW_SERVER', outcomeUnknown: true },
    });
  });

  it('authenticates with JWT RS256 and HS256', async () => {
    const rs = clientWith(
      jwtAuthenticator(MERCHANT, { alg: 'RS256', privateKey: rsa.privateKey, kid: 'JWT-SERIAL-1' }),
    );
    const hs = clientWith(jwtAuthenticator(MERCHANT, hmacKey(SECRET, KEY_ID)));
    try {
      expect((await send({ service: 'preauth', ...original(1600) }, rs)).kind).toBe('approved');
      expect((await send({ service: 'preauth', ...original(1650) }, hs)).kind).toBe('approved');
    } finally {
      await rs.close();
      await hs.close();
    }
  });

  it('is refused (GW_AUTH) with a wrong shared secret', async () => {
    const bad = clientWith(
      httpSignatureAuthenticator(MERCHANT, KEY_ID, Buffer.alloc(32, 7).toString('base64')),
    );
    try {
      expect(await send({ service: 'preauth', ...original(1700) }, bad)).toMatchObject({
        kind: 'unknown',
        httpStatus: 401,
        error: { code: 'GW_AUTH' },
      });
    } finally {
      await bad.close();
    }
  });

  it('gets a DCC offer and authorizes in the card currency', async () => {
    const offer = await client.dccOffer({
      cardPrefix: '41111111',
      amountMinor: 1250,
      currency: 'GBP',
      entryMode: 'contact',
    });
    expect(['offer', 'no-offer']).toContain(offer.kind);
    if (offer.kind !== 'offer') return;
    const first = offer.offers[0]!;
    const o = await send({
      service: 'preauth',
      ...original(1250),
      dcc: {
        indicator: '1',
        family: 'A',
        billingAmountMinor: first.amountMinor,
        billingCurrency: first.currency,
        exchangeRate: first.exchangeRate,
        exchangeRateTimeStamp: first.exchangeRateTimeStamp ?? '20260101120000',
        offerId: offer.id,
        ...(offer.reconciliationId !== undefined ? { reconciliationId: offer.reconciliationId } : {}),
      },
    });
    expect(o.kind).toBe('approved');
  });

  it('creates, reads, lists and deactivates a payment link', async () => {
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-LINK-1',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    const created = await client.paymentLinks.create(input);
    expect(created).toMatchObject({ status: 'ACTIVE', totalAmountMinor: 300 });
    expect(created.paymentLink).toMatch(/^https?:\/\//);
    expect((await client.paymentLinks.get(created.id)).id).toBe(created.id);
    const page = await client.paymentLinks.list({ offset: 0, limit: 10 });
    expect(page.links.map((l) => l.id)).toContain(created.id);
    const off = await client.paymentLinks.update(created.id, { ...input, status: 'INACTIVE' });
    expect(off.status).toBe('INACTIVE');
    expect(off.paymentLink).toBeUndefined();
    await expect(client.paymentLinks.get('NO-SUCH-LINK')).rejects.toMatchObject({ code: 'GW_NOT_FOUND' });
  });

  it('runs the OAuth consent, exchanges the code, pays with the bearer token and refreshes it when expired', async () => {
    const redirectUrl = `http://127.0.0.1:${callbackPort}/oauth/callback`;
    const state = newConsentState();
    const consent = buildConsentUrl({ portalUrl: sandbox.url, clientId: 'partner-1', redirectUrl, state });
    const waiting = receiveConsent({ redirectUrl, state, timeoutMs: 5_000 });
    // The merchant chooses Allow on the consent page; the browser follows the redirect to our listener.
    const q = new URL(consent).searchParams;
    q.set('decision', 'allow');
    const decided = await fetch(`${sandbox.url}/ebc2/oauth/authorize`, {
      method: 'POST',
      body: q,
      redirect: 'manual',
    });
    const location = decided.headers.get('location');
    expect(location).toContain('code=');
    await fetch(location!);
    const result = await waiting;
    expect(result.kind).toBe('code');
    if (result.kind !== 'code') return;
    const dir = mkdtempSync(join(tmpdir(), 'oauth-'));
    const manager = new OAuthTokenManager({
      tokenUrl: sandbox.url,
      clientId: 'partner-1',
      clientSecret: 'partner-secret',
      store: encryptedFileTokenStore(join(dir, 'tokens.enc'), Buffer.alloc(32, 1)),
      timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
    });
    const bearer = clientWith(oauthAuthenticator(manager));
    try {
      await manager.exchangeCode(result.code);
      expect(manager.state()).toBe('authorized');
      expect((await send({ service: 'preauth', ...original(1800) }, bearer)).kind).toBe('approved');
      // Sixteen minutes later the gateway answers 401 ACCESS_TOKEN_EXPIRED: one refresh, one retry.
      sandbox.advanceClock(16 * 60_000);
      expect((await send({ service: 'preauth', ...original(1850) }, bearer)).kind).toBe('approved');
    } finally {
      await bearer.close();
      await manager.close();
    }
  });

  it('leaves a consistent ledger', () => {
    expect(sandbox.consistency()).toMatchObject({ ok: true });
  });
});
