import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bytesToHex, decodeTlv, encodeTlv, flattenTlv, hexToBytes } from '../src/emv/index.js';
import type * as SandboxModule from '../src/sandbox/index.js';
import type { Ledger } from '../src/sandbox/ledger.js';
import { maskCardData } from './runner/mask.js';
import type { CapturedMessage } from './session.js';
import { CertifyInputError, checkSession, type SessionResult } from './check.js';

/**
 * The compliant sessions are the real terminal's own messages: the simulations of `parking-terminal simulate` run
 * against the embedded sandbox, whose ledger keeps each request's (masked) body and answer. The sandbox is wrapped so
 * that its ledger is read just before the simulation closes it.
 */
const ledgers: Ledger[] = [];
vi.mock('../src/sandbox/index.js', async (importOriginal) => {
  const mod = await importOriginal<typeof SandboxModule>();
  return {
    ...mod,
    startSandbox: async (...args: Parameters<typeof mod.startSandbox>) => {
      const sandbox = await mod.startSandbox(...args);
      const close = sandbox.close.bind(sandbox);
      sandbox.close = async () => {
        ledgers.push(sandbox.ledger());
        await close();
      };
      return sandbox;
    },
  };
});
const { runSimulation } = await import('../src/host/simulation.js');

type Scenario = Parameters<typeof runSimulation>[0];
const BASE: Omit<Scenario, 'model' | 'card'> = {
  minutes: 60,
  extend: 0,
  actual: 15,
  ticketMinutes: 90,
  lostTicket: false,
  amountMinor: 1250,
  refund: true,
  void: false,
  credit: false,
  timeout: false,
  reversalDelayMs: 10,
};

/** The session a simulation sent, in order, each request with the answer the terminal received (if any). */
async function capture(
  scenario: Partial<Scenario> & Pick<Scenario, 'model' | 'card'>,
  config?: NonNullable<Parameters<typeof runSimulation>[1]>['config'],
): Promise<CapturedMessage[]> {
  await runSimulation({ ...BASE, ...scenario }, config !== undefined ? { config } : {});
  const ledger = ledgers.at(-1)!;
  const seen = new Set<object>();
  const requests = [...ledger.unmatchedRequests, ...ledger.transactions.flatMap((t) => t.requests)]
    .filter((r) => (seen.has(r) ? false : (seen.add(r), true)))
    .filter((r) => r.path.startsWith('/pts/') || r.path.startsWith('/vas/'));
  requests.sort((a, b) => a.at.localeCompare(b.at));
  return requests.map((r) => ({
    method: r.method,
    path: r.path,
    body: structuredClone(r.body) as Record<string, unknown>,
    ...(r.delivered ? { response: structuredClone(r.response) } : {}),
  }));
}

const sessions: Record<string, CapturedMessage[]> = {};

beforeAll(async () => {
  sessions.meterContact = await capture({ model: 'meter', card: 'n2-contact' });
  sessions.meterContactless = await capture({ model: 'meter', card: 'n1-contactless' });
  sessions.attendedSale = await capture({ model: 'attended', card: 'n1-contact' });
  sessions.tapAndGoMsd = await capture({ model: 'tap-and-go', card: 'n2-msd' });
  sessions.kioskSwipe = await capture({ model: 'kiosk', card: 'n1-swipe' });
  sessions.saleTimeout = await capture({
    model: 'attended',
    card: 'n2-contact',
    timeout: true,
    refund: false,
  });
  sessions.creditN2 = await capture({
    model: 'attended',
    card: 'n2-contactless',
    credit: true,
    refund: false,
  });
  sessions.creditN1 = await capture({
    model: 'attended',
    card: 'n1-contactless',
    credit: true,
    refund: false,
  });
  // Currency conversion: a EUR terminal and the sandbox's JPY-billing card accept the offer, per processor family.
  const euro = (family: 'A' | 'B') => ({
    terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276' },
    dcc: { processorFamily: family },
  });
  sessions.meterDccA = await capture({ model: 'meter', card: 'n2-contact', dcc: 'card' }, euro('A'));
  sessions.meterDccB = await capture({ model: 'meter', card: 'n2-contact', dcc: 'card' }, euro('B'));
  sessions.saleDccA = await capture({ model: 'attended', card: 'n2-contact', dcc: 'card' }, euro('A'));
  sessions.saleDccB = await capture({ model: 'attended', card: 'n2-contact', dcc: 'card' }, euro('B'));
  sessions.meterLocalEuro = await capture({ model: 'meter', card: 'n2-contact', dcc: 'local' }, euro('A'));
}, 120_000);

/** A deep copy of a generated session, to seed a defect in. */
function copy(name: string): CapturedMessage[] {
  const s = sessions[name];
  if (!s) throw new Error(`no session ${name}`);
  return structuredClone(s);
}

function message(session: CapturedMessage[], service: string): CapturedMessage {
  const result = checkSession(session);
  const at = result.messages.find((m) => m.service === service);
  if (!at) throw new Error(`no ${service} in the session`);
  return session[at.index]!;
}

/** Sets (or with undefined, deletes) the value at a dotted path. */
function set(body: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) {
    at[key] ??= {};
    at = at[key] as Record<string, unknown>;
  }
  const last = keys.at(-1)!;
  if (value === undefined) delete at[last];
  else at[last] = value;
}

function tagsOf(m: CapturedMessage): string {
  return (m.body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
}

/** The tag string with `tag` set to `value` (appended when absent) or removed (undefined). */
function withTag(hex: string, tag: string, value: string | undefined): string {
  const nodes = flattenTlv(decodeTlv(hexToBytes(hex))).map((e) => ({ tag: e.tag, value: e.value }));
  const i = nodes.findIndex((n) => n.tag === tag);
  if (value === undefined) nodes.splice(i, 1);
  else if (i >= 0) nodes[i] = { tag, value: hexToBytes(value) };
  else nodes.push({ tag, value: hexToBytes(value) });
  return bytesToHex(encodeTlv(nodes.map((n) => ({ tag: n.tag, length: n.value.length, value: n.value }))));
}

/** The hex value of `tag` in the message's tags. */
function tagValue(m: CapturedMessage, tag: string): string {
  const entry = flattenTlv(decodeTlv(hexToBytes(tagsOf(m)))).find((e) => e.tag === tag);
  if (entry === undefined) throw new Error(`the captured message has no tag ${tag}`);
  return bytesToHex(entry.value);
}

function setTag(m: CapturedMessage, tag: string, value: string | undefined): void {
  set(m.body, 'pointOfSaleInformation.emv.tags', withTag(tagsOf(m), tag, value));
}

function errors(result: SessionResult): Array<{ index: number; rule: string; field: string }> {
  return result.messages.flatMap((m) =>
    m.findings
      .filter((f) => f.severity === 'error')
      .map((f) => ({ index: m.index, rule: f.rule, field: f.field })),
  );
}

/** The partner ids every parking request carries (spec 001 required fields; gateway.md §7 for the follow-ons). */
const PARTNER = {
  developerId: '12345678',
  solutionId: 'PARKTERM',
  thirdPartyCertificationNumber: 'PT0000000001',
};

/** A reversal of the first authorization of a session, as gateway.md §7 shapes it. */
function reversalOf(auth: CapturedMessage, amount: string, tags: boolean): CapturedMessage {
  const id = (auth.response as { id: string }).id;
  const order = auth.body.orderInformation as { amountDetails: { currency: string } };
  return {
    method: 'POST',
    path: `/pts/v2/payments/${id}/reversals`,
    body: {
      clientReferenceInformation: { code: 'PT000001-rev-1', comments: 'REVERSAL', partner: PARTNER },
      orderInformation: { amountDetails: { currency: order.amountDetails.currency } },
      reversalInformation: { amountDetails: { totalAmount: amount } },
      ...(tags ? { pointOfSaleInformation: { emv: { tags: tagsOf(auth) } } } : {}),
    },
    response: { id: '9000000000000000000001', status: 'REVERSED' },
  };
}

/**
 * An incremental authorization of 5.00 GBP on the first authorization of a session, as gateway.md §7 shapes it, with
 * `storedCredentialUsed`; answered with a new total of 17.00 under an id of its own unless `answered` is false.
 */
function incrementOf(auth: CapturedMessage, storedCredentialUsed: boolean, answered = true): CapturedMessage {
  const id = (auth.response as { id: string }).id;
  return {
    method: 'PATCH',
    path: `/pts/v2/payments/${id}`,
    body: {
      clientReferenceInformation: {
        code: 'PT000001-inc',
        comments: 'Parking Incremental Auth',
        transactionId: 'TINC1',
        partner: PARTNER,
      },
      processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed } } },
      orderInformation: { amountDetails: { additionalAmount: '5.00', currency: 'GBP' } },
      merchantInformation: { transactionLocalDateTime: '20261124101500' },
    },
    ...(answered
      ? {
          response: {
            id: '7000000000000000000007',
            status: 'AUTHORIZED',
            orderInformation: { amountDetails: { authorizedAmount: '17.00' } },
          },
        }
      : {}),
  };
}

describe('certify check: the terminal’s own sessions', () => {
  it('passes every generated session with no error finding', () => {
    for (const [name, session] of Object.entries(sessions)) {
      expect(session.length, name).toBeGreaterThan(0);
      const result = checkSession(session);
      expect(errors(result), name).toEqual([]);
      expect(result.ok, name).toBe(true);
    }
  });

  it('identifies the service of every message from method, path and body', () => {
    const services = (name: string): string[] => checkSession(sessions[name]).messages.map((m) => m.service);
    expect(services('meterContact')).toEqual(
      expect.arrayContaining(['preauth', 'capture', 'refund-capture']),
    );
    expect(services('attendedSale')).toEqual(expect.arrayContaining(['sale', 'refund-payment']));
    expect(services('tapAndGoMsd')).toEqual(expect.arrayContaining(['avr', 'preauth', 'capture']));
    expect(services('saleTimeout')).toEqual(expect.arrayContaining(['sale', 'timeout-void']));
    expect(services('creditN1')).toEqual(expect.arrayContaining(['credit']));
  });

  it('passes the timeout reversal of an account verification without answer: 0.00, by its transactionId', () => {
    const [avr, reversal] = unansweredVerification('0.00');
    const result = checkSession([avr, reversal]);
    expect(result.messages.map((m) => m.service)).toEqual(['avr', 'timeout-reversal']);
    expect(errors(result)).toEqual([]);
  });

  it('passes a reversal of the authorized amount repeating the authorization’s tags', () => {
    const session = copy('meterContact');
    const auth = message(session, 'preauth');
    const result = checkSession([auth, reversalOf(auth, '12.00', true)]);
    expect(errors(result)).toEqual([]);
  });

  it('passes an incremental authorization and a capture of the new total', () => {
    const session = copy('meterContact');
    const auth = message(session, 'preauth');
    const capture = message(session, 'capture');
    const incremental = incrementOf(auth, true);
    set(capture.body, 'orderInformation.amountDetails.totalAmount', '17.00');
    set(capture.body, 'clientReferenceInformation.comments', 'Parking Capture');
    expect(errors(checkSession([auth, incremental, capture]))).toEqual([]);
  });

  it('judges a capture after a voided one against what that capture left held', () => {
    // The meter's capture of 3.00 on the 12.00 hold lost its answer, its timeout void was answered VOIDED: the capture
    // below the authorization had the gateway release the rest, and the void gave back only what it took. The fee
    // captured again is all the hold still holds: "Parking Capture", not "Less Than Auth".
    const session = copy('meterContact');
    const auth = message(session, 'preauth');
    const lost = structuredClone(message(session, 'capture'));
    set(lost.body, 'orderInformation.amountDetails.totalAmount', '3.00');
    set(lost.body, 'clientReferenceInformation.comments', 'Parking Capture Less Than Auth');
    set(lost.body, 'clientReferenceInformation.transactionId', 'TCAP1');
    delete lost.response;
    const timeoutVoid: CapturedMessage = {
      method: 'POST',
      path: '/pts/v2/voids',
      body: {
        clientReferenceInformation: { code: 'PT000001-tv', comments: 'VOID Timeout', transactionId: 'TCAP1' },
      },
      response: {
        id: '9000000000000000000002',
        status: 'VOIDED',
        voidAmountDetails: { voidAmount: '3.00', currency: 'GBP' },
      },
    };
    const again = (comments: string): CapturedMessage => {
      const m = structuredClone(lost);
      set(m.body, 'clientReferenceInformation.transactionId', 'TCAP2');
      set(m.body, 'clientReferenceInformation.comments', comments);
      m.response = { id: '9000000000000000000003', status: 'PENDING' };
      return m;
    };
    const comments = (s: CapturedMessage[]) =>
      errors(checkSession(s)).filter((e) => e.rule === 'CE-COMMENTS-SERVICE');
    expect(comments([auth, lost, timeoutVoid, again('Parking Capture')])).toEqual([]);
    expect(comments([auth, lost, timeoutVoid, again('Parking Capture Less Than Auth')])).toEqual([
      { index: 3, rule: 'CE-COMMENTS-SERVICE', field: 'clientReferenceInformation.comments' },
    ]);
    // A timeout void answered without an amount: the capture never reached the gateway, the whole hold stands.
    const { voidAmountDetails: _amount, ...ofNothing } = timeoutVoid.response as Record<string, unknown>;
    expect(comments([auth, lost, { ...timeoutVoid, response: ofNothing }, again('Parking Capture')])).toEqual(
      [{ index: 3, rule: 'CE-COMMENTS-SERVICE', field: 'clientReferenceInformation.comments' }],
    );
    // The capture below the hold had the gateway release the rest: a capture of the whole 12.00 is above what is held.
    const whole = again('Parking Capture');
    set(whole.body, 'orderInformation.amountDetails.totalAmount', '12.00');
    expect(errors(checkSession([auth, lost, timeoutVoid, whole]))).toEqual([
      { index: 3, rule: 'IC-CAPTURE-AUTHORIZED', field: 'orderInformation.amountDetails.totalAmount' },
    ]);
    // Without the void, the capture of 3.00 is below the authorization.
    expect(comments([auth, again('Parking Capture')])).toEqual([
      { index: 1, rule: 'CE-COMMENTS-SERVICE', field: 'clientReferenceInformation.comments' },
    ]);
  });

  it('requires the partner ids on a reversal and storedCredentialUsed true on an increment', () => {
    const session = copy('meterContact');
    const auth = message(session, 'preauth');
    const reversal = reversalOf(auth, '12.00', true);
    set(reversal.body, 'clientReferenceInformation.partner', undefined);
    expect(errors(checkSession([auth, reversal]))).toContainEqual({
      index: 1,
      rule: 'DE-REQUIRED-FIELD',
      field: 'clientReferenceInformation.partner.solutionId',
    });
    const incremental = incrementOf(auth, false, false);
    expect(errors(checkSession([auth, incremental]))).toContainEqual({
      index: 1,
      rule: 'DE-REQUIRED-FIELD',
      field: 'processingInformation.authorizationOptions.initiator.storedCredentialUsed',
    });
  });

  it('refuses a follow-on on an original it cannot follow: a reversal of a sale, a void of an authorization', () => {
    const sale = message(copy('attendedSale'), 'sale');
    const reversal = reversalOf(
      sale,
      (sale.body.orderInformation as { amountDetails: { totalAmount: string } }).amountDetails.totalAmount,
      true,
    );
    expect(errors(checkSession([sale, reversal]))).toContainEqual({
      index: 1,
      rule: 'IC-FOLLOW-ON-ORIGINAL',
      field: 'path',
    });
    const auth = message(copy('meterContact'), 'preauth');
    const voided: CapturedMessage = {
      method: 'POST',
      path: `/pts/v2/payments/${(auth.response as { id: string }).id}/voids`,
      body: {
        clientReferenceInformation: { code: 'PT000001-void', comments: 'VOID Payment', partner: PARTNER },
      },
      response: {
        id: '9000000000000000000002',
        status: 'VOIDED',
        voidAmountDetails: { voidAmount: '3.00', currency: 'GBP' },
      },
    };
    expect(errors(checkSession([auth, voided]))).toContainEqual({
      index: 1,
      rule: 'IC-FOLLOW-ON-ORIGINAL',
      field: 'path',
    });
  });

  it('refuses a capture naming the id of an increment instead of its authorization', () => {
    const session = copy('meterContact');
    const auth = message(session, 'preauth');
    const capture = message(session, 'capture');
    const incremental = incrementOf(auth, true);
    // gateway.md §7: the increment's answer has an id of its own; its _links.capture points at the original.
    capture.path = '/pts/v2/payments/7000000000000000000007/captures';
    expect(errors(checkSession([auth, incremental, capture]))).toContainEqual({
      index: 2,
      rule: 'IC-FOLLOW-ON-ORIGINAL',
      field: 'path',
    });
  });

  it('passes track data in clear when it agrees with the card type and service code', () => {
    const auth = message(copy('meterContact'), 'preauth');
    set(auth.body, 'pointOfSaleInformation.trackData', ';4761739001010119=28122011973393000?');
    expect(errors(checkSession([auth]))).toEqual([]);
  });
});

/** One seeded defect: the session, then the rule and field the error finding must name. */
interface Defect {
  rule: string;
  field: string;
  seed: () => CapturedMessage[];
}

function seeded(
  name: string,
  service: string,
  change: (m: CapturedMessage, s: CapturedMessage[]) => void,
): () => CapturedMessage[] {
  return () => {
    const s = copy(name);
    change(message(s, service), s);
    return s;
  };
}

const LOCAL = 'merchantInformation.transactionLocalDateTime';
const TOTAL = 'orderInformation.amountDetails.totalAmount';
const POS = 'pointOfSaleInformation';
const TAG = (t: string): string => `pointOfSaleInformation.emv.tags[${t}]`;

const DCC = 'orderInformation.amountDetails';

const DEFECTS: Defect[] = [
  {
    // gateway.md §3: terminalCapability 4 is a contact chip terminal, 5 a contactless one; a tap needs 5.
    rule: 'DE-TERMINAL-CAPABILITY',
    field: `${POS}.terminalCapability`,
    seed: seeded('meterContactless', 'preauth', (m) => set(m.body, `${POS}.terminalCapability`, 4)),
  },
  {
    // Contactless magnetic-stripe mode is a tap as well, on a terminal declared stripe-only here.
    rule: 'DE-TERMINAL-CAPABILITY',
    field: `${POS}.terminalCapability`,
    seed: seeded('tapAndGoMsd', 'preauth', (m) => set(m.body, `${POS}.terminalCapability`, 1)),
  },
  {
    // spec 001 required fields: trackData for the sale and the pre-authorization.
    rule: 'DE-REQUIRED-FIELD',
    field: `${POS}.trackData`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.trackData`, undefined)),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: `${POS}.trackData`,
    seed: seeded('creditN2', 'credit', (m) => set(m.body, `${POS}.trackData`, undefined)),
  },
  {
    // gateway.md §7: a capture, a reversal, an increment and a refund carry the partner ids.
    rule: 'DE-REQUIRED-FIELD',
    field: 'clientReferenceInformation.partner.thirdPartyCertificationNumber',
    seed: seeded('meterContact', 'capture', (m) =>
      set(m.body, 'clientReferenceInformation.partner.thirdPartyCertificationNumber', undefined),
    ),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: 'clientReferenceInformation.partner.developerId',
    seed: seeded('attendedSale', 'refund-payment', (m) =>
      set(m.body, 'clientReferenceInformation.partner', undefined),
    ),
  },
  {
    // The first message already: a UK terminal pricing in GBP is in country 826.
    rule: 'CE-9F1A-COUNTRY',
    field: TAG('9F1A'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F1A', '0840')),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: 'clientReferenceInformation.transactionId',
    seed: seeded('meterContact', 'capture', (m) =>
      set(m.body, 'clientReferenceInformation.transactionId', undefined),
    ),
  },
  {
    rule: 'CE-CAT-LEVEL-ATTENDED',
    field: `${POS}.catLevel`,
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F35', '22')),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-FIELDS',
    field: `${DCC}.exchangeRate`,
    seed: seeded('meterDccA', 'capture', (m) => set(m.body, `${DCC}.exchangeRate`, undefined)),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-FIELDS',
    field: `${DCC}.originalAmount`,
    seed: seeded('saleDccA', 'refund-payment', (m) => {
      set(m.body, `${DCC}.originalAmount`, undefined);
      set(m.body, `${DCC}.originalCurrency`, undefined);
    }),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-FIELDS',
    field: `${DCC}.foreignAmount`,
    seed: seeded('meterDccB', 'capture', (m) => set(m.body, `${DCC}.foreignAmount`, undefined)),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-FIELDS',
    field: `${DCC}.exchangeRateTimeStamp`,
    seed: seeded('meterDccB', 'refund-capture', (m) =>
      set(m.body, `${DCC}.exchangeRateTimeStamp`, undefined),
    ),
  },
  {
    // The whole field set dropped: a capture of a converted sale in the local currency.
    rule: 'IC-DCC-FOLLOW-ON-FIELDS',
    field: `${DCC}.foreignCurrency`,
    seed: seeded('meterDccB', 'capture', (m) => set(m.body, DCC, { totalAmount: '1.50', currency: 'EUR' })),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-RATE',
    field: `${DCC}.exchangeRate`,
    seed: seeded('meterDccA', 'capture', (m) => set(m.body, `${DCC}.exchangeRate`, '160.5')),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-RATE',
    field: `${DCC}.exchangeRateTimeStamp`,
    seed: seeded('meterDccB', 'capture', (m) =>
      set(m.body, `${DCC}.exchangeRateTimeStamp`, '20260101000000'),
    ),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-CURRENCY',
    field: `${DCC}.foreignCurrency`,
    seed: seeded('meterDccB', 'capture', (m) => set(m.body, `${DCC}.foreignCurrency`, 'USD')),
  },
  {
    rule: 'IC-DCC-FOLLOW-ON-CURRENCY',
    field: `${DCC}.originalCurrency`,
    seed: seeded('saleDccA', 'refund-payment', (m) => set(m.body, `${DCC}.originalCurrency`, 'GBP')),
  },
  {
    rule: 'CE-DCC-CONVERTED-AMOUNT',
    field: `${DCC}.totalAmount`,
    seed: seeded('meterDccA', 'capture', (m) => set(m.body, `${DCC}.totalAmount`, '300')),
  },
  {
    rule: 'CE-DCC-CONVERTED-AMOUNT',
    field: `${DCC}.foreignAmount`,
    seed: seeded('meterDccB', 'capture', (m) => set(m.body, `${DCC}.foreignAmount`, '240')),
  },
  {
    rule: 'CE-DCC-CONVERTED-AMOUNT',
    field: `${DCC}.totalAmount`,
    seed: seeded('saleDccA', 'sale', (m) => set(m.body, `${DCC}.totalAmount`, '1900')),
  },
  {
    rule: 'IC-DCC-NOT-CONVERTED',
    field: `${DCC}.currencyConversion.indicator`,
    seed: seeded('meterLocalEuro', 'capture', (m) =>
      set(m.body, DCC, {
        totalAmount: '251',
        currency: 'EUR',
        originalAmount: '1.50',
        originalCurrency: 'EUR',
        exchangeRate: '167.01795',
        exchangeRateTimeStamp: '20261124100000',
        currencyConversion: { indicator: '1' },
      }),
    ),
  },
  {
    rule: 'IC-DCC-NOT-CONVERTED',
    field: `${DCC}.foreignAmount`,
    seed: seeded('attendedSale', 'refund-payment', (m) => {
      set(m.body, `${DCC}.foreignAmount`, '20.00');
      set(m.body, `${DCC}.foreignCurrency`, 'USD');
    }),
  },
  {
    rule: 'IC-DCC-OFFER-RATE',
    field: `${DCC}.exchangeRate`,
    seed: seeded('saleDccB', 'sale', (m, s) => {
      set(m.body, `${DCC}.exchangeRate`, '150.0');
      set(m.body, `${DCC}.foreignAmount`, '1875');
      // The refund follows the sale's (defective) rate: only the sale is wrong.
      const refund = message(s, 'refund-payment');
      set(refund.body, `${DCC}.exchangeRate`, '150.0');
      set(refund.body, `${DCC}.foreignAmount`, '1875');
    }),
  },
  {
    // Converted consistently, but not the price the customer was offered.
    rule: 'IC-DCC-OFFER-RATE',
    field: `${DCC}.originalAmount`,
    seed: seeded('saleDccA', 'sale', (m) => {
      set(m.body, `${DCC}.originalAmount`, '12.00');
      set(m.body, `${DCC}.totalAmount`, '2004');
    }),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: `${DCC}.exchangeRateTimeStamp`,
    seed: seeded('meterDccA', 'preauth', (m) => set(m.body, `${DCC}.exchangeRateTimeStamp`, undefined)),
  },
  {
    rule: 'IC-FOLLOW-ON-CURRENCY',
    field: `${DCC}.currency`,
    seed: seeded('meterContact', 'capture', (m) => set(m.body, `${DCC}.currency`, 'EUR')),
  },
  {
    // Family A authorized in the billing currency: a reversal in the local one is refused.
    rule: 'IC-FOLLOW-ON-CURRENCY',
    field: `${DCC}.currency`,
    seed: () => {
      const s = copy('meterDccA');
      const auth = message(s, 'preauth');
      const reversal = reversalOf(auth, '2004', true);
      set(reversal.body, `${DCC}.currency`, 'EUR');
      set(reversal.body, 'reversalInformation.amountDetails.totalAmount', '12.00');
      return [s[0]!, auth, reversal];
    },
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: LOCAL,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, LOCAL, undefined)),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: 'pointOfSaleInformation.serviceCode',
    seed: seeded('attendedSale', 'sale', (m) => set(m.body, `${POS}.serviceCode`, undefined)),
  },
  {
    // The offer's ISO 8601 time sent unchanged: the gateway takes 14 digits yyyyMMDDhhmmss in GMT.
    rule: 'DE-DCC-RATE-TIMESTAMP',
    field: `${DCC}.exchangeRateTimeStamp`,
    seed: seeded('meterDccA', 'preauth', (m, s) => {
      set(m.body, `${DCC}.exchangeRateTimeStamp`, '2026-11-24T10:00:00Z');
      set(message(s, 'capture').body, `${DCC}.exchangeRateTimeStamp`, '2026-11-24T10:00:00Z');
    }),
  },
  {
    rule: 'DE-DCC-RATE-TIMESTAMP',
    field: `${DCC}.exchangeRateTimeStamp`,
    seed: seeded('meterDccB', 'capture', (m) =>
      set(m.body, `${DCC}.exchangeRateTimeStamp`, '20260230100000'),
    ),
  },
  {
    rule: 'DE-LOCAL-DATETIME',
    field: LOCAL,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, LOCAL, '20261331120000')),
  },
  {
    rule: 'DE-AMOUNT-FORMAT',
    field: TOTAL,
    seed: seeded('meterContact', 'refund-capture', (m) => set(m.body, TOTAL, '3.0')),
  },
  {
    rule: 'DE-CURRENCY-CODE',
    field: 'orderInformation.amountDetails.currency',
    seed: seeded('meterContact', 'refund-capture', (m) =>
      set(m.body, 'orderInformation.amountDetails.currency', 'GBX'),
    ),
  },
  {
    rule: 'DE-CARD-TYPE',
    field: 'paymentInformation.card.type',
    seed: seeded('kioskSwipe', 'sale', (m) => set(m.body, 'paymentInformation.card.type', '003')),
  },
  {
    rule: 'DE-CAT-LEVEL',
    field: `${POS}.catLevel`,
    seed: seeded('kioskSwipe', 'sale', (m) => set(m.body, `${POS}.catLevel`, 3)),
  },
  {
    rule: 'DE-ENTRY-MODE',
    field: `${POS}.entryMode`,
    seed: seeded('kioskSwipe', 'sale', (m) => set(m.body, `${POS}.entryMode`, 'keyed')),
  },
  {
    rule: 'DE-TERMINAL-CAPABILITY',
    field: `${POS}.terminalCapability`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.terminalCapability`, 2)),
  },
  {
    rule: 'DE-PIN-CAPABILITY',
    field: `${POS}.terminalPinCapability`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.terminalPinCapability`, 3)),
  },
  {
    rule: 'DE-OPERATING-ENVIRONMENT',
    field: `${POS}.operatingEnvironment`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.operatingEnvironment`, '5')),
  },
  {
    rule: 'DE-DEDICATED-HARDWARE',
    field: `${POS}.isDedicatedHardwareTerminal`,
    seed: seeded('attendedSale', 'sale', (m) => set(m.body, `${POS}.isDedicatedHardwareTerminal`, '2')),
  },
  {
    rule: 'DE-COMMERCE-INDICATOR',
    field: 'processingInformation.commerceIndicator',
    seed: seeded('meterContact', 'preauth', (m) =>
      set(m.body, 'processingInformation.commerceIndicator', 'internet'),
    ),
  },
  {
    rule: 'DE-AUTH-INDICATOR',
    field: 'processingInformation.authorizationOptions.authIndicator',
    seed: seeded('meterContact', 'preauth', (m) =>
      set(m.body, 'processingInformation.authorizationOptions.authIndicator', '1'),
    ),
  },
  {
    rule: 'DE-AUTH-INDICATOR',
    field: 'processingInformation.authorizationOptions.authIndicator',
    seed: seeded('attendedSale', 'sale', (m) =>
      set(m.body, 'processingInformation.authorizationOptions.authIndicator', '1'),
    ),
  },
  {
    // The unattended sale (catLevel 2) as the pay station sends it: spec 001 lists `0` for it as well.
    rule: 'DE-AUTH-INDICATOR',
    field: 'processingInformation.authorizationOptions.authIndicator',
    seed: seeded('kioskSwipe', 'sale', (m) =>
      set(m.body, 'processingInformation.authorizationOptions.authIndicator', '1'),
    ),
  },
  {
    rule: 'DE-REQUIRED-FIELD',
    field: 'processingInformation.authorizationOptions.authIndicator',
    seed: seeded('kioskSwipe', 'sale', (m) =>
      set(m.body, 'processingInformation.authorizationOptions.authIndicator', undefined),
    ),
  },
  {
    rule: 'DE-CARD-SEQUENCE-NUMBER',
    field: `${POS}.emv.cardSequenceNumber`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.emv.cardSequenceNumber`, 'A1')),
  },
  {
    rule: 'DE-SERVICE-CODE',
    field: `${POS}.serviceCode`,
    seed: seeded('kioskSwipe', 'sale', (m) => set(m.body, `${POS}.serviceCode`, '1O1')),
  },
  {
    rule: 'DE-CATEGORY-CODE',
    field: 'merchantInformation.categoryCode',
    seed: seeded('kioskSwipe', 'sale', (m) => set(m.body, 'merchantInformation.categoryCode', '5999')),
  },
  {
    rule: 'DE-EMV-TLV',
    field: `${POS}.emv.tags`,
    seed: seeded('meterContact', 'preauth', (m) =>
      set(m.body, `${POS}.emv.tags`, `${tagsOf(m)}DF9A03001736`),
    ),
  },
  {
    rule: 'DE-EMV-TAG-FORMAT',
    field: TAG('9F02'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F02', '0000000012AB')),
  },
  {
    rule: 'DE-EMV-TAG-FORMAT',
    field: TAG('9F26'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F26', '0102030405')),
  },
  {
    // n3 in two bytes: a digit in the leading nibble is no country code, even where the last three digits are one.
    rule: 'DE-EMV-TAG-FORMAT',
    field: TAG('9F1A'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F1A', `1${tagValue(m, '9F1A').slice(1)}`)),
  },
  {
    rule: 'CE-9F02-TOTAL',
    field: TAG('9F02'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F02', '000000001300')),
  },
  {
    rule: 'CE-5F2A-CURRENCY',
    field: TAG('5F2A'),
    seed: seeded('attendedSale', 'sale', (m) => setTag(m, '5F2A', '0978')),
  },
  {
    rule: 'CE-9A-LOCAL-DATE',
    field: TAG('9A'),
    // A date no captured message carries: the captures are dated the day the tests run.
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, LOCAL, '20200101101010')),
  },
  {
    rule: 'CE-9F1A-COUNTRY',
    field: TAG('9F1A'),
    seed: () => {
      const credit = message(copy('creditN2'), 'credit');
      setTag(credit, '9F1A', '0250');
      return [message(copy('meterContact'), 'preauth'), credit];
    },
  },
  {
    rule: 'CE-9C-SERVICE',
    field: TAG('9C'),
    seed: seeded('creditN2', 'credit', (m) => setTag(m, '9C', '00')),
  },
  {
    rule: 'CE-9C-SERVICE',
    field: TAG('9C'),
    seed: seeded('attendedSale', 'sale', (m) => setTag(m, '9C', '20')),
  },
  {
    rule: 'CE-CARD-SEQUENCE-5F34',
    field: `${POS}.emv.cardSequenceNumber`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.emv.cardSequenceNumber`, '02')),
  },
  {
    rule: 'CE-CARD-SEQUENCE-5F34',
    field: `${POS}.emv.cardSequenceNumber`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.emv.cardSequenceNumber`, undefined)),
  },
  {
    rule: 'CE-CAT-LEVEL-ATTENDED',
    field: `${POS}.catLevel`,
    seed: seeded('meterContact', 'preauth', (m) => set(m.body, `${POS}.catLevel`, 6)),
  },
  {
    rule: 'CE-DEDICATED-HARDWARE',
    field: `${POS}.isDedicatedHardwareTerminal`,
    seed: seeded('attendedSale', 'sale', (m) => set(m.body, `${POS}.isDedicatedHardwareTerminal`, undefined)),
  },
  {
    rule: 'CE-COMMENTS-SERVICE',
    field: 'clientReferenceInformation.comments',
    seed: seeded('attendedSale', 'sale', (m) =>
      set(m.body, 'clientReferenceInformation.comments', 'Parking Auth'),
    ),
  },
  {
    rule: 'CE-COMMENTS-SERVICE',
    field: 'clientReferenceInformation.comments',
    seed: seeded('meterContact', 'capture', (m) =>
      set(m.body, 'clientReferenceInformation.comments', 'Parking Capture'),
    ),
  },
  {
    rule: 'CE-COMMENTS-SERVICE',
    field: 'clientReferenceInformation.comments',
    seed: seeded('saleTimeout', 'timeout-void', (m) =>
      set(m.body, 'clientReferenceInformation.comments', 'VOID Payment'),
    ),
  },
  {
    rule: 'IC-NEVER-SEND',
    field: TAG('5A'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '5A', '4761739001010119')),
  },
  {
    rule: 'IC-NEVER-SEND',
    field: TAG('57'),
    seed: seeded('attendedSale', 'sale', (m) => setTag(m, '57', '5413339000001513D2512201')),
  },
  {
    rule: 'IC-NETWORK-MANDATORY',
    field: TAG('9F27'),
    seed: seeded('attendedSale', 'sale', (m) => setTag(m, '9F27', undefined)),
  },
  {
    rule: 'IC-NETWORK-MANDATORY',
    field: TAG('9F37'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F37', undefined)),
  },
  {
    rule: 'IC-NETWORK-PROHIBITED',
    field: TAG('9F6E'),
    seed: seeded('creditN1', 'credit', (m) => setTag(m, '9F6E', '20700000')),
  },
  {
    // A refund names no card type of its own: the network is the one of the sale it refunds (N1, card type 002).
    rule: 'IC-NETWORK-PROHIBITED',
    field: TAG('9F6E'),
    seed: seeded('attendedSale', 'refund-payment', (m, s) => {
      const sale = message(s, 'sale');
      set(m.body, `${POS}.emv.tags`, withTag(withTag(tagsOf(sale), '9C', '20'), '9F6E', '20700000'));
    }),
  },
  {
    // reference/emv.md: 9F6E is Visa's 4-byte Form Factor Indicator (card type 001)...
    rule: 'IC-NETWORK-LENGTH',
    field: TAG('9F6E'),
    seed: seeded('creditN2', 'credit', (m) => setTag(m, '9F6E', '2070000000')),
  },
  {
    // ... but Mastercard's 5–32-byte Third Party Data (002).
    rule: 'IC-NETWORK-LENGTH',
    field: TAG('9F6E'),
    seed: seeded('meterContactless', 'preauth', (m) => setTag(m, '9F6E', '20700000')),
  },
  {
    rule: 'IC-EMV-TAGS-ENTRY-MODE',
    field: `${POS}.emv.tags`,
    seed: seeded('meterContactless', 'preauth', (m) => set(m.body, `${POS}.emv`, undefined)),
  },
  {
    rule: 'IC-CAPTURE-AUTHORIZED',
    field: TOTAL,
    seed: seeded('meterContact', 'capture', (m) => set(m.body, TOTAL, '12.01')),
  },
  {
    rule: 'IC-REVERSAL-AMOUNT',
    field: 'reversalInformation.amountDetails.totalAmount',
    seed: () => {
      const auth = message(copy('meterContact'), 'preauth');
      return [auth, reversalOf(auth, '11.00', true)];
    },
  },
  {
    rule: 'IC-REVERSAL-AMOUNT',
    field: 'reversalInformation.amountDetails.totalAmount',
    seed: () => {
      // A partial approval: the reversal carries the approved amount, not the requested one.
      const auth = message(copy('meterContact'), 'preauth');
      set(auth.response as Record<string, unknown>, 'status', 'PARTIAL_AUTHORIZED');
      set(
        auth.response as Record<string, unknown>,
        'orderInformation.amountDetails.authorizedAmount',
        '8.00',
      );
      return [auth, reversalOf(auth, '12.00', true)];
    },
  },
  {
    rule: 'IC-REFUND-CAPTURED',
    field: TOTAL,
    seed: seeded('meterContact', 'refund-capture', (m) => set(m.body, TOTAL, '3.01')),
  },
  {
    rule: 'IC-REFUND-CAPTURED',
    field: TOTAL,
    seed: seeded('attendedSale', 'refund-payment', (m) => set(m.body, TOTAL, '12.51')),
  },
  {
    rule: 'IC-REVERSAL-EMV-TAGS',
    field: `${POS}.emv.tags`,
    seed: () => {
      const auth = message(copy('meterContact'), 'preauth');
      return [auth, reversalOf(auth, '12.00', false)];
    },
  },
  {
    rule: 'IC-CAPTURE-CONTACT-TAGS',
    field: `${POS}.emv.tags`,
    seed: seeded('meterContact', 'capture', (m) => set(m.body, POS, undefined)),
  },
  {
    rule: 'IC-CAPTURE-CONTACT-TAGS',
    field: TAG('9F10'),
    seed: seeded('meterContact', 'capture', (m) => setTag(m, '9F10', undefined)),
  },
  {
    rule: 'IC-CAPTURE-CONTACT-TAGS',
    field: `${POS}.emv.tags`,
    seed: seeded('meterContactless', 'capture', (m, s) =>
      set(m.body, `${POS}.emv.tags`, tagsOf(message(s, 'preauth'))),
    ),
  },
  {
    rule: 'IC-FOLLOW-ON-TAGS-REPEAT',
    field: TAG('9F26'),
    seed: seeded('meterContact', 'capture', (m) => setTag(m, '9F26', '0102030405060708')),
  },
  {
    rule: 'IC-AVR-ZERO',
    field: 'processingInformation.capture',
    seed: seeded('tapAndGoMsd', 'avr', (m) => set(m.body, 'processingInformation.capture', true)),
  },
  {
    rule: 'IC-TRANSACTION-ID-UNIQUE',
    field: 'clientReferenceInformation.transactionId',
    seed: seeded('meterContact', 'capture', (m, s) =>
      set(
        m.body,
        'clientReferenceInformation.transactionId',
        (message(s, 'preauth').body.clientReferenceInformation as { transactionId: string }).transactionId,
      ),
    ),
  },
  {
    rule: 'IC-TIMEOUT-ORIGINAL',
    field: 'clientReferenceInformation.transactionId',
    seed: seeded('saleTimeout', 'timeout-void', (m) =>
      set(m.body, 'clientReferenceInformation.transactionId', 'T0NOSUCHORIGINAL'),
    ),
  },
  {
    rule: 'IC-TIMEOUT-ORIGINAL',
    field: 'clientReferenceInformation.transactionId',
    seed: () => {
      // A sale is undone by a timeout void, never by a timeout reversal.
      const s = copy('saleTimeout');
      const sale = message(s, 'sale');
      return [sale, timeoutReversal(sale, '12.50')];
    },
  },
  {
    rule: 'IC-TIMEOUT-ORIGINAL',
    field: 'clientReferenceInformation.transactionId',
    seed: () => {
      // gateway.md §7: a timeout reversal is only for an authorization not yet captured.
      const s = copy('meterContact');
      const auth = message(s, 'preauth');
      const capture = message(s, 'capture');
      const amount = (auth.body.orderInformation as { amountDetails: { totalAmount: string } }).amountDetails
        .totalAmount;
      return [auth, capture, timeoutReversal(auth, amount)];
    },
  },
  {
    rule: 'IC-TIMEOUT-REVERSAL-AMOUNT',
    field: 'reversalInformation.amountDetails.totalAmount',
    seed: () => {
      const auth = message(copy('meterContact'), 'preauth');
      delete auth.response;
      return [auth, timeoutReversal(auth, '11.00')];
    },
  },
  {
    // An account verification without answer is reversed for what it requested: 0.00.
    rule: 'IC-TIMEOUT-REVERSAL-AMOUNT',
    field: 'reversalInformation.amountDetails.totalAmount',
    seed: () => [...unansweredVerification('0.01')],
  },
  {
    rule: 'IC-TIMEOUT-ORIGINAL',
    field: 'clientReferenceInformation.transactionId',
    seed: () => {
      const [avr, reversal] = unansweredVerification('0.00');
      set(reversal.body, 'clientReferenceInformation.transactionId', 'T0NOSUCHVERIFICATION');
      return [avr, reversal];
    },
  },
  {
    rule: 'DM-TRACK-PAN',
    field: `${POS}.trackData`,
    seed: seeded('meterContact', 'preauth', (m) =>
      set(m.body, `${POS}.trackData`, ';5413339000001513=28122011973393000?'),
    ),
  },
  {
    rule: 'DM-TRACK-SERVICE-CODE',
    field: `${POS}.serviceCode`,
    seed: seeded('meterContact', 'preauth', (m) =>
      set(m.body, `${POS}.trackData`, ';4761739001010119=28121011973393000?'),
    ),
  },
  {
    rule: 'DM-AID-CARD-TYPE',
    field: TAG('84'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '84', 'A0000000041010')),
  },
  {
    rule: 'DM-9F39-ENTRY-MODE',
    field: TAG('9F39'),
    seed: seeded('meterContact', 'preauth', (m) => setTag(m, '9F39', '07')),
  },
];

function timeoutReversal(original: CapturedMessage, amount: string): CapturedMessage {
  const ref = original.body.clientReferenceInformation as { transactionId: string };
  return {
    method: 'POST',
    path: '/pts/v2/reversals',
    body: {
      clientReferenceInformation: {
        code: 'PT000001-R1',
        comments: 'REVERSAL Timeout',
        transactionId: ref.transactionId,
      },
      orderInformation: { amountDetails: { currency: 'GBP' } },
      reversalInformation: { amountDetails: { totalAmount: amount } },
    },
  };
}

/** The tap-and-go entry's account verification left without answer, then its timeout reversal of `amount`. */
function unansweredVerification(amount: string): [CapturedMessage, CapturedMessage] {
  const avr = message(copy('tapAndGoMsd'), 'avr');
  delete avr.response;
  return [avr, timeoutReversal(avr, amount)];
}

describe('certify check: seeded defects', () => {
  it.each(DEFECTS.map((d) => [`${d.rule} at ${d.field}`, d] as const))(
    '%s is an error finding',
    (_name, defect) => {
      const result = checkSession(defect.seed());
      expect(result.ok).toBe(false);
      expect(errors(result)).toContainEqual(
        expect.objectContaining({ rule: defect.rule, field: defect.field }),
      );
    },
  );

  it('gives every finding its rule’s category and severity', () => {
    const result = checkSession(DEFECTS.find((d) => d.rule === 'IC-NEVER-SEND')!.seed());
    const never = result.messages.flatMap((m) => m.findings).find((f) => f.rule === 'IC-NEVER-SEND');
    expect(never).toMatchObject({ category: 'interchange compliance', severity: 'error' });
    expect(never?.message).not.toContain('4761739001010119');
  });

  it('reports unreadable track data and unknown tags as warnings only', () => {
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    set(auth.body, `${POS}.trackData`, 'not a track');
    setTag(auth, 'DF01', '01');
    const result = checkSession(s);
    expect(result.ok).toBe(true);
    const rules = result.messages.flatMap((m) => m.findings).map((f) => `${f.rule} ${f.severity}`);
    expect(rules).toEqual(expect.arrayContaining(['DE-TRACK-DATA warning', 'DE-EMV-TAG-UNKNOWN warning']));
  });
});

const AMOUNTS = 'orderInformation.amountDetails';

describe('certify check: currency conversion (DCC)', () => {
  it('passes converted sessions of both processor families, and one the customer kept local', () => {
    for (const name of ['meterDccA', 'meterDccB', 'saleDccA', 'saleDccB', 'meterLocalEuro']) {
      const result = checkSession(copy(name));
      expect(errors(result), name).toEqual([]);
    }
    // The rate time of the offer (ISO 8601, UTC) goes out as 14 digits yyyyMMddHHmmss, the same on every follow-on.
    const dccB = copy('meterDccB');
    const offered = message(dccB, 'dcc-offer').response as {
      orderInformation: { currencyConversion: { offer: { exchangeRateTimeUtc: string }[] } };
    };
    const rateTime = offered.orderInformation.currencyConversion.offer[0]!.exchangeRateTimeUtc;
    const stamp = rateTime.replace(/\D/g, '').slice(0, 14);
    expect(rateTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    for (const service of ['preauth', 'capture', 'refund-capture'])
      expect(message(dccB, service).body, service).toMatchObject({
        orderInformation: { amountDetails: { exchangeRateTimeStamp: stamp } },
      });
    const services = checkSession(copy('meterDccA')).messages.map((m) => m.service);
    expect(services).toEqual(['dcc-offer', 'preauth', 'capture', 'refund-capture']);
    const capture = message(copy('meterDccA'), 'capture');
    expect(capture.body).toMatchObject({
      orderInformation: {
        amountDetails: { currencyConversion: { indicator: '1' }, originalCurrency: 'EUR' },
      },
    });
  });

  it('passes a partial refund of a converted sale converted at the sale’s rate', () => {
    const s = copy('saleDccA');
    const refund = message(s, 'refund-payment');
    // 5.00 EUR at 167.01795 is 835.09 JPY: 835 (half up), and the rounding either way is accepted.
    set(refund.body, `${AMOUNTS}.originalAmount`, '5.00');
    set(refund.body, `${AMOUNTS}.totalAmount`, '835');
    expect(errors(checkSession(s))).toEqual([]);
    set(refund.body, `${AMOUNTS}.totalAmount`, '836');
    expect(errors(checkSession(s))).toEqual([]);
  });

  it('passes a reversal of a converted authorization in the authorization’s currency, without DCC fields', () => {
    const s = copy('meterDccA');
    const auth = message(s, 'preauth');
    const offer = s[0]!;
    const authorized = (
      auth.response as { orderInformation: { amountDetails: { authorizedAmount: string } } }
    ).orderInformation.amountDetails.authorizedAmount;
    const reversal = reversalOf(auth, authorized, true);
    expect(errors(checkSession([offer, auth, reversal]))).toEqual([]);
  });

  it('passes a capture after a restart that carries only the rate terms of the authorization', () => {
    const s = copy('meterDccA');
    const capture = message(s, 'capture');
    set(capture.body, `${AMOUNTS}.currencyConversion`, { indicator: '1' });
    expect(errors(checkSession(s))).toEqual([]);
  });
});

describe('certify check: legitimate sessions that look unusual', () => {
  it('passes a partial approval captured for the approved amount, and refunds within it', () => {
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    set(auth.response as Record<string, unknown>, 'status', 'PARTIAL_AUTHORIZED');
    set(auth.response as Record<string, unknown>, 'orderInformation.amountDetails.authorizedAmount', '10.00');
    const capture = message(s, 'capture');
    set(capture.body, TOTAL, '10.00');
    set(capture.body, 'clientReferenceInformation.comments', 'Parking Capture');
    set(message(s, 'refund-capture').body, TOTAL, '10.00');
    expect(errors(checkSession(s))).toEqual([]);
    set(capture.body, TOTAL, '10.50');
    expect(errors(checkSession(s))).toContainEqual(
      expect.objectContaining({ rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL }),
    );
  });

  it('judges a capture or refund sent again after a refusal against what was taken, not what was asked', () => {
    // The gateway refused the first capture (400, nothing captured) and the terminal sent it again: the second is the
    // only capture of the authorization. Likewise a refund declined, then sent again for the whole capture.
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    const capture = message(s, 'capture');
    const refund = message(s, 'refund-capture');
    const refused = (m: CapturedMessage, status: string, transactionId: string): CapturedMessage => {
      const r = structuredClone(m);
      set(r.body, 'clientReferenceInformation.transactionId', transactionId);
      r.response = {
        submitTimeUtc: '2025-03-01T09:30:00Z',
        status,
        ...(status === 'INVALID_REQUEST'
          ? { reason: 'PROCESSOR_UNAVAILABLE', message: 'try again' }
          : { errorInformation: { reason: 'PROCESSOR_DECLINED', message: 'declined' } }),
      };
      return r;
    };
    // More than half the 12.00 hold: two captures of it would be above the authorization.
    set(capture.body, TOTAL, '7.00');
    set(refund.body, TOTAL, '7.00');
    const rules = (session: CapturedMessage[]) =>
      errors(checkSession(session)).filter(
        (e) => e.rule === 'IC-CAPTURE-AUTHORIZED' || e.rule === 'IC-REFUND-CAPTURED',
      );
    expect(rules([auth, refused(capture, 'INVALID_REQUEST', 'TCAP0'), capture, refund])).toEqual([]);
    expect(rules([auth, capture, refused(refund, 'DECLINED', 'TREF0'), refund])).toEqual([]);
    // A capture that was taken, or whose answer is unknown, still counts: the one sent after it goes above the hold.
    const taken = structuredClone(capture);
    set(taken.body, 'clientReferenceInformation.transactionId', 'TCAP0');
    set(taken.response as Record<string, unknown>, 'id', '9000000000000000000009');
    const { response: _lost, ...unanswered } = taken;
    for (const first of [taken, unanswered])
      expect(rules([auth, first, capture])).toEqual([
        { index: 2, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
      ]);
  });

  /**
   * The meter's 12.00 hold, an increment of 5.00 whose answer is no decision (gateway.md §4: a 502 is "server error or
   * timeout: outcome unknown"; or no answer at all), optionally the timeout reversal of that increment answered
   * REVERSED, then `last` (a capture or a reversal of the whole hold) of `amount`.
   */
  function afterUnknownIncrement(
    answer: '502' | 'none',
    reversed: boolean,
    last: 'capture' | 'reversal',
    amount: string,
  ): CapturedMessage[] {
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    const increment = incrementOf(auth, true, false);
    if (answer === '502') {
      increment.response = {
        submitTimeUtc: '2026-11-24T10:15:30Z',
        status: 'SERVER_ERROR',
        reason: 'SERVER_TIMEOUT',
        message: 'server timeout',
      };
      increment.httpStatus = 502;
    }
    const timeout = timeoutReversal(increment, '5.00');
    timeout.response = {
      id: '9000000000000000000004',
      status: 'REVERSED',
      reversalAmountDetails: { reversedAmount: '5.00', currency: 'GBP' },
    };
    let final: CapturedMessage;
    if (last === 'capture') {
      final = message(s, 'capture');
      set(final.body, TOTAL, amount);
      set(final.body, 'clientReferenceInformation.comments', 'Parking Capture');
    } else final = reversalOf(auth, amount, true);
    return [auth, increment, ...(reversed ? [timeout] : []), final];
  }

  it('judges a capture after an increment answered 502 against the total the increment may have raised', () => {
    // The increment may have been approved: a capture of the raised 17.00 is no over-capture, 17.50 is.
    expect(errors(checkSession(afterUnknownIncrement('502', false, 'capture', '17.00')))).toEqual([]);
    expect(errors(checkSession(afterUnknownIncrement('502', false, 'capture', '17.50')))).toEqual([
      { index: 2, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
    ]);
    // A decline is a decision: the increment added nothing.
    const declined = afterUnknownIncrement('502', false, 'capture', '17.00');
    declined[1]!.response = { id: '7000000000000000000008', status: 'DECLINED' };
    declined[1]!.httpStatus = 201;
    expect(errors(checkSession(declined))).toEqual([
      { index: 2, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
    ]);
    // A capture of 12.00 is of exactly the hold without the increment, or of less than the hold with it.
    const captureOf = (amount: string, comments: string) => {
      const s = afterUnknownIncrement('502', false, 'capture', amount);
      set(s[2]!.body, 'clientReferenceInformation.comments', comments);
      return errors(checkSession(s));
    };
    expect(captureOf('12.00', 'Parking Capture')).toEqual([]);
    expect(captureOf('12.00', 'Parking Capture Less Than Auth')).toEqual([]);
    expect(captureOf('14.00', 'Parking Capture Less Than Auth')).toEqual([]);
    expect(captureOf('14.00', 'Parking Capture')).toEqual([
      { index: 2, rule: 'CE-COMMENTS-SERVICE', field: 'clientReferenceInformation.comments' },
    ]);
    // A reversal of the whole hold: 12.00 or 17.00, whichever it holds; nothing else.
    const reversal = (amount: string) =>
      errors(checkSession(afterUnknownIncrement('502', false, 'reversal', amount)));
    expect(reversal('17.00')).toEqual([]);
    expect(reversal('12.00')).toEqual([]);
    expect(reversal('17.50')).toEqual([
      { index: 2, rule: 'IC-REVERSAL-AMOUNT', field: 'reversalInformation.amountDetails.totalAmount' },
    ]);
    expect(reversal('11.00')).toEqual([
      { index: 2, rule: 'IC-REVERSAL-AMOUNT', field: 'reversalInformation.amountDetails.totalAmount' },
    ]);
  });

  it('judges a capture after the timeout reversal of an increment without decision against the authorization', () => {
    for (const answer of ['502', 'none'] as const) {
      // The timeout reversal of the increment answered REVERSED: the hold is the 12.00 of the authorization again.
      expect(errors(checkSession(afterUnknownIncrement(answer, true, 'capture', '12.00'))), answer).toEqual(
        [],
      );
      expect(errors(checkSession(afterUnknownIncrement(answer, true, 'capture', '17.00'))), answer).toEqual([
        { index: 3, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
      ]);
      expect(errors(checkSession(afterUnknownIncrement(answer, true, 'reversal', '12.00'))), answer).toEqual(
        [],
      );
      expect(errors(checkSession(afterUnknownIncrement(answer, true, 'reversal', '17.00'))), answer).toEqual([
        { index: 3, rule: 'IC-REVERSAL-AMOUNT', field: 'reversalInformation.amountDetails.totalAmount' },
      ]);
    }
  });

  it('flags the timeout reversal of an increment sent after its authorization was captured', () => {
    // gateway.md §7: a timeout reversal is only for an authorization not yet captured. An increment is part of its
    // authorization (its capture names the authorization, gateway.md §7): once that is captured, it is voided.
    const TXID = 'clientReferenceInformation.transactionId';
    for (const answer of ['502', 'none'] as const) {
      const [auth, increment, final] = afterUnknownIncrement(answer, false, 'capture', '12.00');
      const timeout = afterUnknownIncrement(answer, true, 'capture', '12.00')[2]!;
      expect(errors(checkSession([auth!, increment!, final!, timeout])), answer).toEqual([
        { index: 3, rule: 'IC-TIMEOUT-ORIGINAL', field: TXID },
      ]);
      // A capture the gateway refused took nothing: the authorization is not captured.
      const refused = structuredClone(final!);
      refused.response = { status: 'INVALID_REQUEST', reason: 'PROCESSOR_UNAVAILABLE', message: 'try again' };
      expect(errors(checkSession([auth!, increment!, refused, timeout])), answer).toEqual([]);
    }
  });

  /**
   * The meter's 12.00 hold (answered AUTHORIZED), its timeout reversal of 12.00 answered `status` (or not at all),
   * then the meter's capture of 12.00.
   */
  function captureAfterTimeoutReversal(status: string | undefined): CapturedMessage[] {
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    const timeout = timeoutReversal(auth, '12.00');
    if (status !== undefined)
      timeout.response = {
        id: '9000000000000000000005',
        status,
        ...(status === 'REVERSED'
          ? { reversalAmountDetails: { reversedAmount: '12.00', currency: 'GBP' } }
          : {}),
      };
    const capture = message(s, 'capture');
    set(capture.body, TOTAL, '12.00');
    set(capture.body, 'clientReferenceInformation.comments', 'Parking Capture');
    return [auth, timeout, capture];
  }

  it('flags a capture of an authorization its timeout reversal reversed', () => {
    expect(errors(checkSession(captureAfterTimeoutReversal('REVERSED')))).toEqual([
      { index: 2, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
    ]);
    const finding = checkSession(captureAfterTimeoutReversal('REVERSED')).messages[2]!.findings.find(
      (f) => f.rule === 'IC-CAPTURE-AUTHORIZED',
    );
    expect(finding?.message).toContain('reversed');
    // Nor is there anything left to reverse (spec 001: a reversal follows an AUTHORIZED authorization).
    const [auth, timeout] = captureAfterTimeoutReversal('REVERSED');
    expect(errors(checkSession([auth!, timeout!, reversalOf(auth!, '12.00', true)]))).toEqual([
      { index: 2, rule: 'IC-REVERSAL-AMOUNT', field: 'reversalInformation.amountDetails.totalAmount' },
    ]);
    // A timeout reversal without an answer, or one that is no decision, may not have reversed anything: the hold may
    // stand, and its capture is not judged an error.
    expect(errors(checkSession(captureAfterTimeoutReversal(undefined)))).toEqual([]);
    expect(errors(checkSession(captureAfterTimeoutReversal('SERVER_ERROR')))).toEqual([]);
  });

  it('flags a capture of an authorization a reversal reversed', () => {
    const s = copy('meterContact');
    const auth = message(s, 'preauth');
    const capture = message(s, 'capture');
    set(capture.body, TOTAL, '12.00');
    set(capture.body, 'clientReferenceInformation.comments', 'Parking Capture');
    expect(errors(checkSession([auth, reversalOf(auth, '12.00', true), capture]))).toEqual([
      { index: 2, rule: 'IC-CAPTURE-AUTHORIZED', field: TOTAL },
    ]);
    // A reversal without an answer may not have reached the gateway: the hold may stand.
    const { response: _lost, ...unanswered } = reversalOf(auth, '12.00', true);
    expect(errors(checkSession([auth, unanswered, capture]))).toEqual([]);
  });

  it('passes a chip card swiped in fallback (service code 201, no tags, emv.fallback with its condition)', () => {
    const s = copy('kioskSwipe');
    const sale = message(s, 'sale');
    set(sale.body, `${POS}.trackData`, ';5413339000001513=28122011973393000?');
    set(sale.body, `${POS}.serviceCode`, '201');
    set(sale.body, `${POS}.emv`, { fallback: true, fallbackCondition: 1 });
    expect(errors(checkSession(s))).toEqual([]);
  });

  it('finds a chip card swiped sent as a plain swipe, and a fallback that is no swipe or has no condition', () => {
    const fallbackFinding = (field: string): unknown =>
      expect.objectContaining({ rule: 'IC-EMV-FALLBACK', field });
    const s = copy('kioskSwipe');
    const sale = message(s, 'sale');
    set(sale.body, `${POS}.trackData`, ';5413339000001513=28122011973393000?');
    set(sale.body, `${POS}.serviceCode`, '201');
    expect(errors(checkSession(s))).toEqual([fallbackFinding(`${POS}.emv.fallback`)]);
    set(sale.body, `${POS}.emv`, { fallback: true });
    expect(errors(checkSession(s))).toEqual([fallbackFinding(`${POS}.emv.fallbackCondition`)]);
    set(sale.body, `${POS}.emv`, { fallbackCondition: 1 });
    expect(errors(checkSession(s))).toContainEqual(fallbackFinding(`${POS}.emv.fallbackCondition`));
    const chip = copy('meterContact');
    set(message(chip, 'preauth').body, `${POS}.emv.fallback`, true);
    set(message(chip, 'preauth').body, `${POS}.emv.fallbackCondition`, 1);
    expect(errors(checkSession(chip))).toEqual([fallbackFinding(`${POS}.emv.fallback`)]);
    // A stripe-only card (service code 101) has no chip to fall back from (the sandbox refuses it too).
    const stripe = copy('kioskSwipe');
    const stripeSale = message(stripe, 'sale');
    set(stripeSale.body, `${POS}.trackData`, ';5413339000001513=28121011973393000?');
    set(stripeSale.body, `${POS}.serviceCode`, '101');
    expect(errors(checkSession(stripe))).toEqual([]);
    set(stripeSale.body, `${POS}.emv`, { fallback: true, fallbackCondition: 1 });
    expect(errors(checkSession(stripe))).toEqual([fallbackFinding(`${POS}.emv.fallback`)]);
  });

  it('passes a terminal type (9F35) that agrees with catLevel', () => {
    const s = copy('meterContact');
    setTag(message(s, 'preauth'), '9F35', '25');
    expect(errors(checkSession(s))).toEqual([]);
  });
});

describe('certify check: capture files and evidence bundles', () => {
  function asCapture(session: CapturedMessage[]): Array<Record<string, unknown>> {
    return session.map((m, i) => ({
      ...m,
      httpStatus: m.response === undefined ? null : 201,
      at: new Date(Date.UTC(2026, 10, 24, 10, 0, i)).toISOString(),
    }));
  }

  it('reads the capture file the runner writes like the plain array', () => {
    const plain = checkSession(copy('meterDccB'));
    const file = {
      format: 'parking-terminal-capture/1',
      case: 'PK-MTR-N2-CT-01',
      messages: asCapture(copy('meterDccB')),
    };
    expect(checkSession(file)).toEqual(plain);
  });

  it('reads a case evidence bundle (any object with a messages array)', () => {
    const bundle = { id: 'PK-ATT-N1-CT-01', verdict: 'passed', messages: asCapture(copy('attendedSale')) };
    const result = checkSession(bundle);
    expect(result.ok).toBe(true);
    expect(result.messages.map((m) => m.service)).toEqual(expect.arrayContaining(['sale', 'refund-payment']));
  });

  it('refuses a capture file of an unknown format with its own code', () => {
    const file = { format: 'parking-terminal-capture/9', messages: [] };
    expect(() => checkSession(file)).toThrow(
      expect.objectContaining({ name: 'CertifyInputError', code: 'CAPTURE_UNKNOWN_FORMAT' }),
    );
  });

  it('reports judged defects in a capture file as in the plain array', () => {
    const s = copy('meterDccA');
    set(message(s, 'capture').body, `${AMOUNTS}.exchangeRate`, '170.5');
    const file = { format: 'parking-terminal-capture/1', case: 'X', messages: asCapture(s) };
    expect(errors(checkSession(file))).toContainEqual(
      expect.objectContaining({ rule: 'IC-DCC-FOLLOW-ON-RATE', field: `${AMOUNTS}.exchangeRate` }),
    );
  });

  it('skips masked card data instead of reporting it', () => {
    const masked = copy('meterContact').map((m) => ({
      ...m,
      body: maskCardData(m.body) as Record<string, unknown>,
      ...(m.response !== undefined ? { response: maskCardData(m.response) } : {}),
    }));
    const auth = message(masked, 'preauth');
    set(auth.body, `${POS}.trackData`, ';476173******0119=*****************?');
    const result = checkSession(masked);
    expect(result.ok).toBe(true);
    expect(result.messages.flatMap((m) => m.findings)).toEqual([]);

    // A card-data tag whose value the capture starred (tag and length kept) is present, its value unknown.
    const starred = copy('meterContact');
    const a = message(starred, 'preauth');
    setTag(a, '5F30', '0201');
    set(a.body, 'pointOfSaleInformation.emv.tags', tagsOf(a).replace(/5F30020201/, '5F3002****'));
    set(a.body, `${POS}.trackData`, '[REDACTED]');
    expect(checkSession(starred).messages.flatMap((m) => m.findings)).toEqual([]);

    // Tags redacted whole: a reversal still carries them, nothing else can be compared.
    const whole = copy('meterContact');
    const original = message(whole, 'preauth');
    const reversal = reversalOf(original, '12.00', true);
    set(reversal.body, 'pointOfSaleInformation.emv.tags', '[REDACTED]');
    expect(errors(checkSession([original, reversal]))).toEqual([]);
  });

  it('compares the BIN a masked track keeps with the card type', () => {
    const s = copy('meterContact');
    set(message(s, 'preauth').body, `${POS}.trackData`, ';541333******1513=*****************?');
    expect(errors(checkSession(s))).toEqual([
      expect.objectContaining({ rule: 'DM-TRACK-PAN', field: `${POS}.trackData` }),
    ]);
    set(message(s, 'preauth').body, `${POS}.trackData`, '%B476173******0119^*********************?');
    expect(checkSession(s).messages.flatMap((m) => m.findings)).toEqual([]);
  });

  it('still reports a never-send tag whose value a capture masked', () => {
    const s = copy('meterContact');
    const a = message(s, 'preauth');
    setTag(a, '5A', '4761739001010119');
    set(
      a.body,
      'pointOfSaleInformation.emv.tags',
      tagsOf(a).replace(/5A084761739001010119/, `5A08${'*'.repeat(16)}`),
    );
    expect(errors(checkSession(s))).toContainEqual(
      expect.objectContaining({ rule: 'IC-NEVER-SEND', field: TAG('5A') }),
    );
  });
});

describe('certify check: bad input', () => {
  const cases: Array<[string, unknown, string]> = [
    ['not an array', { method: 'POST' }, 'SESSION_NOT_ARRAY'],
    ['a message that is not an object', [42], 'MESSAGE_NOT_OBJECT'],
    ['a message without method', [{ path: '/pts/v2/payments', body: {} }], 'MESSAGE_BAD_METHOD'],
    ['a message without path', [{ method: 'POST', body: {} }], 'MESSAGE_BAD_PATH'],
    [
      'a body that is not an object',
      [{ method: 'POST', path: '/pts/v2/payments', body: '{}' }],
      'MESSAGE_BAD_BODY',
    ],
    ['a body that is an array', [{ method: 'POST', path: '/pts/v2/payments', body: [] }], 'MESSAGE_BAD_BODY'],
  ];
  it.each(cases)('refuses %s with a stable code', (_name, input, code) => {
    expect(() => checkSession(input)).toThrow(CertifyInputError);
    try {
      checkSession(input);
    } catch (e) {
      expect((e as CertifyInputError).code).toBe(code);
    }
  });

  it('judges fields of the wrong type as findings, never crashes', () => {
    const body = {
      clientReferenceInformation: { comments: 7, transactionId: ['x'] },
      orderInformation: { amountDetails: { totalAmount: 12.5, currency: null } },
      pointOfSaleInformation: { emv: { tags: 12 }, trackData: {} },
      merchantInformation: { transactionLocalDateTime: 20261124101010 },
      processingInformation: 'retail',
    };
    const result = checkSession([
      { method: 'POST', path: '/pts/v2/payments', body },
      { method: 'POST', path: '/nowhere', body: {} },
    ]);
    expect(result.ok).toBe(false);
    expect(errors(result).map((e) => e.rule)).toEqual(
      expect.arrayContaining(['DE-EMV-TLV', 'DE-LOCAL-DATETIME', 'DE-AMOUNT-FORMAT', 'CE-COMMENTS-SERVICE']),
    );
    expect(result.messages[1]?.findings[0]).toMatchObject({
      rule: 'DE-UNKNOWN-SERVICE',
      severity: 'warning',
    });
  });
});
