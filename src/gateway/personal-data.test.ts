import fc from 'fast-check';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpSignatureAuthenticator } from './auth/authenticator.js';
import { createGatewayClient, type GatewayClient } from './client.js';
import {
  assertNoPersonalData,
  personalDataIn,
  PersonalDataError,
  type PersonalDataKind,
} from './personal-data.js';
import type { PaymentLinkInput } from './services/payment-links.js';

const ORIGIN = 'https://gateway.test';
const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';

// ---- hostile values ----

const digit = fc.integer({ min: 0, max: 9 }).map(String);

/** A Luhn-valid number of 13–19 digits, any prefix (the gateway suspends on any of them, network or not). */
const luhnNumber = fc.integer({ min: 13, max: 19 }).chain((len) =>
  fc.array(digit, { minLength: len - 1, maxLength: len - 1 }).map((ds) => {
    const body = ds.join('');
    let sum = 0;
    for (let i = 0; i < body.length; i++) {
      let d = Number(body[body.length - 1 - i]);
      if (i % 2 === 0) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
    }
    return body + String((10 - (sum % 10)) % 10);
  }),
);

const separator = fc.constantFrom(' ', '-', '.', ' - ', '/', '  ', '\u00a0', '_', ' . ', ',');

/** The number cut into groups of 1–6 digits joined by separators of any kind, mixed. */
const groupedCardNumber = fc
  .tuple(
    luhnNumber,
    fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 19 }),
    fc.array(separator, { minLength: 19, maxLength: 19 }),
  )
  .map(([number, cuts, seps]) => {
    const groups: string[] = [];
    let at = 0;
    for (const c of cuts) {
      if (at >= number.length) break;
      groups.push(number.slice(at, at + c));
      at += c;
    }
    if (at < number.length) groups.push(number.slice(at));
    return groups.map((g, i) => (i === 0 ? g : `${seps[i] ?? ' '}${g}`)).join('');
  });

/** Words around a hostile value; never digits at the edges, so the value keeps its own boundaries. */
const words = fc
  .array(
    fc.constantFrom('Parking', 'pay', 'for', 'zone', 'B', 'ticket', 'please', 'ref', 'Level', 'car', 'park'),
    {
      maxLength: 3,
    },
  )
  .map((w) => w.join(' '));
const embed = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(words, value, words).map(([a, v, b]) => [a, v, b].filter((x) => x !== '').join(' '));

const fullWidth = (s: string): string => s.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)));
const cardNumbers = fc.oneof(groupedCardNumber, groupedCardNumber.map(fullWidth));

const d = (n: number): fc.Arbitrary<string> =>
  fc.array(digit, { minLength: n, maxLength: n }).map((x) => x.join(''));
const letterOf = (chars: string): fc.Arbitrary<string> => fc.constantFrom(...chars.split(''));

const ssn = fc
  .tuple(d(3), d(2), d(4), fc.constantFrom('-', ' ', '.'))
  .map(([a, b, c, s]) => `SSN? no: ${a}${s}${b}${s}${c}`.replace('SSN? no: ', ''));
const ukNino = fc
  .tuple(
    letterOf('ABCEGHJKLMNPRSTWXYZ'),
    letterOf('ABCEGHJKLMNPRSTWXYZ'),
    d(6),
    letterOf('ABCD'),
    fc.boolean(),
  )
  .map(([a, b, n, s, spaced]) =>
    spaced ? `${a}${b} ${n.slice(0, 2)} ${n.slice(2, 4)} ${n.slice(4)} ${s}` : `${a}${b}${n}${s}`,
  );
const iban = fc
  .tuple(letterOf('DEFRGBNLESIT'), letterOf('ABEKRST'), d(2), fc.array(d(4), { minLength: 3, maxLength: 7 }))
  .map(([a, b, check, groups]) => `${a}${b}${check} ${groups.join(' ')}`);
const frenchNir = fc
  .tuple(
    fc.constantFrom('1', '2'),
    d(2),
    fc.constantFrom('01', '05', '12'),
    fc.constantFrom('75', '13', '2A'),
    d(3),
    d(3),
  )
  .map(([sex, yy, mm, dept, commune, order]) => {
    const digits = `${sex}${yy}${mm}${dept.replace('2A', '19')}${commune}${order}`;
    const key = String(97 - Number(BigInt(digits) % 97n)).padStart(2, '0');
    return `${sex} ${yy} ${mm} ${dept} ${commune} ${order} ${key}`;
  });
const spanishDni = d(8).map((n) => `${n}${'TRWAGMYFPDXBNJZSQVHLCKE'[Number(n) % 23]}`);
const italianCf = fc.constantFrom('RSSMRA85T10A562S', 'VRDGPP80A01H501U', 'BNCLRA92M41F205Z');
const idWords = fc
  .tuple(fc.constantFrom('passport', 'Passport no.', 'tax id', 'NIF', 'national id', 'BSN', 'PESEL'), d(6))
  .map(([w, n]) => `${w} ${n}`);
const nationalIds = fc.oneof(ssn, ukNino, iban, frenchNir, spanishDni, italianCf, idWords);

const addresses = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 1, max: 9999 }),
      fc.constantFrom('Baker', 'Main', 'High', 'Elm', 'de Rivoli', 'Old Kent'),
      fc.constantFrom('Street', 'St.', 'Road', 'Avenue', 'Lane', 'Boulevard', 'rue', 'Drive', 'Place'),
    )
    .map(([n, name, w]) => (w === 'rue' ? `${n} rue ${name}` : `${n} ${name} ${w}`)),
  fc
    .tuple(
      fc.constantFrom('Hauptstraße', 'Bahnhofstrasse', 'Via Roma', 'Calle Mayor', 'Damstraat', 'Lindenweg'),
      fc.integer({ min: 1, max: 999 }),
    )
    .map(([s, n]) => `${s} ${n}`),
  fc.constantFrom('SW1A 1AA', 'EC1A 1BB', 'W1A 0AX', 'M1 1AE', 'B33 8TH'),
  fc
    .tuple(d(5), fc.constantFrom('Springfield', 'Berlin', 'Paris'))
    .map(([zip, city]) => `High Street, ${city} ${zip}`),
  fc.tuple(d(5), fc.constantFrom('Springfield', 'Berlin')).map(([zip, city]) => `${city}, ${zip}`),
);

const securityCodes = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        'CVV',
        'cvv',
        'CVC',
        'cvc:',
        'CVV2',
        'security code',
        'Security code:',
        'CSC',
        'CID',
        'card verification value',
      ),
      fc.constantFrom(' ', ': ', ' - ', '='),
      fc.oneof(d(3), d(4)),
    )
    .map(([w, s, n]) => `${w}${s}${n}`),
  fc
    .tuple(fc.constantFrom('Visa', 'card', 'Mastercard', 'Amex'), fc.integer({ min: 1, max: 12 }), d(2), d(3))
    .map(([w, m, y, c]) => `${w} exp ${String(m).padStart(2, '0')}/${y} ${c}`),
  fc.tuple(d(4), d(3)).map(([last, c]) => `card **** ${last} code ${c}`),
);

const hostile: fc.Arbitrary<{ kind: PersonalDataKind; value: string }> = fc.oneof(
  embed(cardNumbers).map((value) => ({ kind: 'card-number' as const, value })),
  embed(nationalIds).map((value) => ({ kind: 'national-id' as const, value })),
  embed(addresses).map((value) => ({ kind: 'address' as const, value })),
  embed(securityCodes).map((value) => ({ kind: 'security-code' as const, value })),
);

const FIELDS = [
  'purchaseNumber',
  'productName',
  'productDescription',
  'productSku',
  'developerId',
  'solutionId',
] as const;
type Field = (typeof FIELDS)[number];

function linkWith(field: Field, value: string): PaymentLinkInput {
  const link: PaymentLinkInput = {
    linkType: 'PURCHASE',
    purchaseNumber: 'T-202611241305',
    currency: 'GBP',
    totalAmountMinor: 450,
    lineItems: [{ productName: 'Parking', unitPriceMinor: 450 }],
  };
  const item = link.lineItems[0]!;
  switch (field) {
    case 'purchaseNumber':
      link.purchaseNumber = value;
      break;
    case 'productName':
      item.productName = value;
      break;
    case 'productDescription':
      item.productDescription = value;
      break;
    case 'productSku':
      item.productSku = value;
      break;
    case 'developerId':
      link.partner = { developerId: value };
      break;
    case 'solutionId':
      link.partner = { solutionId: value };
      break;
  }
  return link;
}

// ---- the client, with every request that leaves counted ----

let agent: MockAgent;
let client: GatewayClient;
let sent: number;

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  sent = 0;
  const pool = agent.get(ORIGIN);
  pool
    .intercept({ path: () => true, method: () => true })
    .reply((o) => {
      sent += 1;
      // The gateway answers a create with the link requested (its id is the purchase number).
      const id = (
        JSON.parse(
          typeof o.body === 'string' ? o.body : Buffer.isBuffer(o.body) ? o.body.toString('utf8') : '{}',
        ) as {
          purchaseInformation: { purchaseNumber: string };
        }
      ).purchaseInformation.purchaseNumber;
      return {
        statusCode: 201,
        data: {
          id,
          status: 'ACTIVE',
          purchaseInformation: { paymentLink: `https://gateway.test/pay/${id}` },
        },
      };
    })
    .persist();
  client = createGatewayClient({
    baseUrl: ORIGIN,
    merchantId: 'testrest',
    auth: httpSignatureAuthenticator('testrest', '08c94330-f618-42a3-b09d-e1e43be5efda', SECRET),
    timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
    retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
    dispatcher: agent,
  });
});
afterEach(async () => {
  await client.close();
  await agent.close();
});

describe('personal-data guard of payment links', () => {
  it('refuses every hostile value in every field before a request leaves, naming the field', async () => {
    await fc.assert(
      fc.asyncProperty(
        hostile,
        fc.constantFrom(...FIELDS),
        fc.boolean(),
        async ({ value }, field, update) => {
          const link = linkWith(field, value);
          const attempt = update ? client.paymentLinks.update('T-1', link) : client.paymentLinks.create(link);
          const error = await attempt.then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(PersonalDataError);
          expect((error as PersonalDataError).code).toBe('LINK_PERSONAL_DATA');
          const path = {
            purchaseNumber: 'purchaseInformation.purchaseNumber',
            productName: 'orderInformation.lineItems[0].productName',
            productDescription: 'orderInformation.lineItems[0].productDescription',
            productSku: 'orderInformation.lineItems[0].productSku',
            developerId: 'clientReferenceInformation.partner.developerId',
            solutionId: 'clientReferenceInformation.partner.solutionId',
          }[field];
          expect((error as PersonalDataError).field).toBe(path);
          // The value itself never travels in the error.
          expect((error as Error).message).not.toContain(value);
        },
      ),
      { numRuns: 600 },
    );
    expect(sent).toBe(0);
  });

  it('recognises each kind of hostile value (a digit-only IBAN may also hold a card-number run)', () => {
    fc.assert(
      fc.property(hostile, ({ kind, value }) => {
        const found = personalDataIn(value);
        if (found !== 'card-number') expect(found).toBe(kind);
      }),
      { numRuns: 400 },
    );
  });

  it('lets ordinary product names and references through, and sends them', async () => {
    const ordinary = [
      'Parking',
      'Parking 2h Zone A',
      'Ticket 202611241305',
      'Level 3 car park',
      'Parking 2 h, zone B',
      'Day ticket',
      'Evening 18:00-23:00',
      'Parking place 12',
      'Bay 1042',
      'Lost ticket fee',
      'T-2026112413050001-2',
      'PARKTERM',
      '12345678',
      'Parking card top-up',
      'Short stay, terminal 5',
      'Overnight 2026-11-24',
    ];
    for (const name of ordinary) expect(personalDataIn(name), name).toBeUndefined();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ordinary),
        fc.constantFrom('productName', 'productDescription', 'productSku'),
        async (name, field) => {
          await client.paymentLinks.create(linkWith(field, name));
        },
      ),
      { numRuns: 30 },
    );
    expect(sent).toBe(30);
  });

  it('walks keys and nested arrays, and names the path', () => {
    expect(() => assertNoPersonalData({ a: [{ b: 'ok' }, { c: 'CVV 123' }] })).toThrow(
      expect.objectContaining({ field: 'a[1].c', kind: 'security-code' }),
    );
    expect(() => assertNoPersonalData({ '4111 1111 1111 1111': 'x' })).toThrow(
      expect.objectContaining({ kind: 'card-number' }),
    );
    expect(() => assertNoPersonalData({ n: 4111111111111111 })).toThrow(
      expect.objectContaining({ field: 'n', kind: 'card-number' }),
    );
  });
});
