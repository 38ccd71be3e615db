import { afterEach, describe, expect, it } from 'vitest';
import { createReader } from '../../devices/index.js';
import { parseConfig } from '../config/index.js';
import type { DccOfferSummary, DccSelection, ServiceRequest } from '../flows/index.js';
import { formatAmount } from '../i18n/index.js';
import { createAuthenticator, createGatewayClient } from '../gateway/index.js';
import { classifyPaymentAnswer } from '../gateway/outcome.js';
import type { PreparedRequest } from '../gateway/services/types.js';
import {
  AuthorizationDataStore,
  FollowUpStore,
  HoldStore,
  JournaledSender,
  openJournal,
  type OutgoingRequest,
  type SqliteJournal,
} from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { CardStore } from './card-store.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { SANDBOX_SHARED_SECRET, toSendOutcome } from './gateway-adapters.js';
import { OpenAuthorizations } from './open-authorizations.js';
import { findTransaction } from './operator-desk.js';
import { PaymentService } from './payments.js';
import { captureRule, heldAmount } from '../sandbox/money-rules.js';
import { journaledReceiptFacts } from './receipt-desk.js';
import { buildReceipt, RECEIPT_LABELS, ReceiptFactsLog, receiptSettingsFromConfig } from './receipts.js';

/**
 * The amounts of follow-ons: of an authorization whose increments' answers stated no total, and of a converted (DCC,
 * processor family A) authorization, through the real payment service, request
 * builders, journal, follow-on store and answer classifier; only the network is faked. EUR terminal, JPY card:
 * 1 EUR = 161.234 JPY, so 10.00 EUR is offered as 1612 JPY.
 */

const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 1_000,
  localCurrency: 'EUR',
  billingAmountMinor: 1_612,
  billingCurrency: 'JPY',
  exchangeRate: '161.234',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20300101080000',
  expiresAtUtc: '2999-01-01T08:00:00Z',
  disclaimer: 'disclaimer',
};
const SELECTION: DccSelection = { indicator: '1', offer: OFFER };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const config = parseConfig({
  terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
  dcc: { enabled: true, processorFamily: 'A' },
});

/** Gateway answers by service, as JSON bodies; every request sent is recorded with its body. */
type Answers = Partial<Record<string, (r: OutgoingRequest) => unknown>>;

function fakeTransmitter(answers: Answers, sent: OutgoingRequest[]) {
  return {
    transmit(request: OutgoingRequest) {
      sent.push(request);
      const body = answers[request.service]?.(request) ?? { id: `G-${sent.length}`, status: 'PENDING' };
      // The real classifier of the gateway client over the real answer body.
      const outcome = classifyPaymentAnswer(
        request as unknown as PreparedRequest,
        201,
        Buffer.from(JSON.stringify(body)),
      );
      return Promise.resolve(toSendOutcome(outcome));
    },
  };
}

function paymentService(
  journal: SqliteJournal,
  answers: Answers,
  sent: OutgoingRequest[],
  terminalConfig: typeof config = config,
) {
  const gateway = createGatewayClient({
    baseUrl: 'http://127.0.0.1:9',
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    logger: silentLogger(),
  });
  cleanups.push(() => gateway.close());
  const cards = new CardStore(Buffer.alloc(32, 7));
  // As the host builds it: the family of the terminal's configuration, for the terms of authorizations it makes.
  const followOns = journalFollowOnStore(
    new AuthorizationDataStore(journal, Buffer.alloc(32, 5)),
    terminalConfig.dcc.processorFamily,
  );
  const payments = new PaymentService({
    config: terminalConfig,
    gateway,
    sender: new JournaledSender(journal, fakeTransmitter(answers, sent)),
    journal,
    cards,
    logger: silentLogger(),
    now: () => new Date(),
    followOns,
    health: { gatewayAnswered: () => undefined, gatewayUnreachable: () => undefined },
  });
  return { payments, cards, followOns };
}

async function cardRead(amountMinor: number) {
  const reader = createReader(
    { ...config.reader, sim: { ...config.reader.sim, presentDelayMs: 0 } },
    { logger: silentLogger(), timeZone: config.terminal.timezone },
  );
  await reader.connect();
  cleanups.push(() => reader.close());
  return reader.activate({
    amountMinor,
    otherAmountMinor: 0,
    currencyNumeric: '978',
    countryNumeric: '276',
    transactionType: '00',
    timeoutSeconds: 30,
  });
}

const amountOf = (r: OutgoingRequest | undefined) =>
  JSON.parse(r?.body.toString('utf8') ?? '{}') as {
    reversalInformation?: { amountDetails?: { totalAmount?: string } };
    orderInformation?: { amountDetails?: { totalAmount?: string; currency?: string } };
  };

const authorized =
  (billing: string, status = 'AUTHORIZED') =>
  () => ({
    id: 'AUTH-1',
    status,
    orderInformation: { amountDetails: { authorizedAmount: billing, currency: 'JPY' } },
  });
const reversed = (r: OutgoingRequest) => ({
  id: 'REV-1',
  status: 'REVERSED',
  reversalAmountDetails: { reversedAmount: amountOf(r).reversalInformation?.amountDetails?.totalAmount },
});

/**
 * An approved pre-authorization of 10.00 EUR over a fresh journal (converted with `dcc`), and the reference its
 * follow-ons name.
 */
async function approvedPreauth(answers: Answers, sent: OutgoingRequest[], dcc?: typeof SELECTION) {
  const journal = openJournal(':memory:');
  cleanups.push(() => journal.close());
  const { payments, cards, followOns } = paymentService(journal, answers, sent);
  const held = cards.hold(await cardRead(1_000));
  const preauth = await payments.submit({
    service: 'preauth',
    comments: 'Parking Auth',
    amountMinor: 1_000,
    currency: 'EUR',
    catLevel: 2,
    cardRef: held.ref,
    includeEmvTags: false,
    ...(dcc !== undefined ? { dcc } : {}),
  });
  if (preauth.outcome.kind !== 'approved') throw new Error(`preauth ${preauth.outcome.kind}`);
  const original = {
    transactionId: preauth.outcome.transactionId,
    gatewayId: preauth.outcome.gatewayId ?? '',
    service: 'preauth' as const,
  };
  return { journal, payments, followOns, held, outcome: preauth.outcome, original };
}

/** {@link approvedPreauth} converted with {@link SELECTION}. */
function convertedPreauth(answers: Answers, sent: OutgoingRequest[]) {
  return approvedPreauth(answers, sent, SELECTION);
}

/** The capture of the whole 10.00 EUR of {@link convertedPreauth}'s authorization. */
function captureOfAll(
  held: { ref: string },
  outcome: { transactionId: string; gatewayId?: string },
): Parameters<PaymentService['submit']>[0] {
  return {
    service: 'capture',
    comments: 'Parking Capture',
    amountMinor: 1_000,
    currency: 'EUR',
    catLevel: 2,
    cardRef: held.ref,
    includeEmvTags: true,
    original: {
      transactionId: outcome.transactionId,
      gatewayId: outcome.gatewayId ?? '',
      service: 'preauth',
    },
  };
}

/** A refund of `minor` EUR of a converted capture: its outcome and the request it sent. */
async function refundOf(
  payments: PaymentService,
  sent: readonly OutgoingRequest[],
  capture: { transactionId: string; gatewayId: string },
  minor: number,
) {
  const record = await payments.submit({
    service: 'refund-capture',
    comments: 'REFUND Capture',
    amountMinor: minor,
    currency: 'EUR',
    catLevel: 2,
    includeEmvTags: false,
    original: { ...capture, service: 'capture' },
  });
  expect(record.outcome.kind).toBe('approved');
  return { outcome: record.outcome, request: sent.at(-1) };
}

describe('follow-ons of a converted authorization (family A)', () => {
  it('reverses an orphaned converted pre-authorization for the amount it authorized after a restart', async () => {
    const sent: OutgoingRequest[] = [];
    const answers: Answers = { preauth: authorized('1612'), reversal: reversed };
    const { journal, payments, outcome } = await convertedPreauth(answers, sent);
    expect(sent[0]).toMatchObject({ service: 'preauth', amountMinor: 1_612, currency: 'JPY' });
    // Before the restart the host counts the authorized total in EUR (the machines' local currency).
    expect(payments.authorizedTotal(outcome.transactionId)).toBe(1_000);

    // The process restarts: a new payment service over the same journal, nothing in memory. Recovery reverses the
    // meter pre-authorization whose session died, once its capture window has passed.
    const later = new Date(Date.now() + 2 * 86_400_000);
    const after = paymentService(journal, answers, sent);
    const open = new OpenAuthorizations({
      config,
      journal,
      holds: new HoldStore(journal),
      followUps: new FollowUpStore(journal),
      submit: async (r: ServiceRequest) => (await after.payments.submit(r)).outcome,
      authorizedTotal: (tx) => after.payments.localAuthorizedTotal(tx),
      now: () => later,
      logger: silentLogger(),
    });
    // After it, the same call still answers in EUR (from the journal's JPY figure); the gateway's figure is kept
    // for the reversal, which must not convert it a second time.
    expect(after.payments.authorizedTotal(outcome.transactionId)).toBe(1_000);
    expect(after.payments.gatewayAuthorizedTotal(outcome.transactionId)).toEqual({
      amountMinor: 1_612,
      currency: 'JPY',
    });
    await open.settle();
    const reversal = sent.find((r) => r.service === 'reversal');
    expect(reversal?.referencedTransactionId ?? outcome.transactionId).toBe(outcome.transactionId);
    // spec 001, Reversal: the amount equals the authorized amount: 1612 JPY.
    expect({
      currency: reversal?.currency,
      amount: amountOf(reversal).reversalInformation?.amountDetails?.totalAmount,
    }).toEqual({
      currency: 'JPY',
      amount: '1612',
    });
  });

  it('undoes a partially approved converted pre-authorization with a reversal of exactly the approved amount', async () => {
    // Approved for 802 JPY of the 1612 asked (PARTIAL_AUTHORIZED). The meter does not accept a partial: the
    // transaction actor reverses it with the outcome's authorizedMinor and the hold's conversion terms
    // (src/flows/transaction.ts, compensationRequest).
    const sent: OutgoingRequest[] = [];
    const answers: Answers = { preauth: authorized('802', 'PARTIAL_AUTHORIZED'), reversal: reversed };
    const { payments, held, outcome } = await convertedPreauth(answers, sent);
    expect(outcome).toMatchObject({ kind: 'approved', partial: true });
    await payments.submit({
      service: 'reversal',
      comments: 'REVERSAL',
      amountMinor: outcome.authorizedMinor ?? 0,
      currency: 'EUR',
      catLevel: 2,
      cardRef: held.ref,
      includeEmvTags: false,
      original: {
        transactionId: outcome.transactionId,
        gatewayId: outcome.gatewayId ?? '',
        service: 'preauth',
      },
      dcc: SELECTION,
    });
    const reversal = sent.find((r) => r.service === 'reversal');
    expect({
      currency: reversal?.currency,
      amount: amountOf(reversal).reversalInformation?.amountDetails?.totalAmount,
    }).toEqual({
      currency: 'JPY',
      amount: '802',
    });
  });
});

describe('refunds of a converted capture (family A)', () => {
  it('never refund more in the card currency than was captured, and the last one refunds exactly the rest', async () => {
    // A capture of the full 10.00 EUR = 1612 JPY, refunded as 0.01 EUR and then the remaining 9.99 EUR: converted one
    // by one they would be 2 + 1611 = 1613 JPY.
    const sent: OutgoingRequest[] = [];
    const { payments, held, outcome } = await convertedPreauth({ preauth: authorized('1612') }, sent);
    const capture = await payments.submit(captureOfAll(held, outcome));
    expect(capture.outcome).toMatchObject({ kind: 'approved' });
    expect(sent.at(-1)).toMatchObject({ service: 'capture', amountMinor: 1_612, currency: 'JPY' });
    const captured = {
      transactionId: capture.prepared?.transactionId ?? '',
      gatewayId: capture.outcome.kind === 'approved' ? (capture.outcome.gatewayId ?? '') : '',
    };
    const refund = async (minor: number) => (await refundOf(payments, sent, captured, minor)).request;
    expect(await refund(1)).toMatchObject({ service: 'refund-capture', amountMinor: 2, currency: 'JPY' });
    expect(await refund(999)).toMatchObject({
      service: 'refund-capture',
      amountMinor: 1_610,
      currency: 'JPY',
    });
  });
});

describe('receipts of refunds of a converted capture (family A)', () => {
  it('state the card-currency amount each refund took, live and from the journal after a restart', async () => {
    // 0.01 EUR and then the remaining 9.99 EUR of 10.00 EUR = 1612 JPY: the second refund takes the 1610 JPY left, not
    // the 1611 JPY its 9.99 EUR would convert to on its own.
    const sent: OutgoingRequest[] = [];
    const { journal, payments, followOns, held, outcome } = await convertedPreauth(
      { preauth: authorized('1612') },
      sent,
    );
    const live = new ReceiptFactsLog(undefined, journaledReceiptFacts(journal, followOns));
    live.noteSubmit({ service: 'preauth', dcc: SELECTION }, outcome);
    const capture = await payments.submit(captureOfAll(held, outcome));
    if (capture.outcome.kind !== 'approved') throw new Error(`capture ${capture.outcome.kind}`);
    const captured = {
      transactionId: capture.outcome.transactionId,
      gatewayId: capture.outcome.gatewayId ?? '',
    };
    live.noteSubmit({ service: 'capture', original: outcome }, capture.outcome);
    const settings = receiptSettingsFromConfig(config);
    const refunds: { transactionId: string; localMinor: number; billedMinor: number }[] = [];
    for (const localMinor of [1, 999]) {
      const refund = await refundOf(payments, sent, captured, localMinor);
      if (refund.outcome.kind !== 'approved') throw new Error(`refund ${refund.outcome.kind}`);
      live.noteSubmit({ service: 'refund-capture', original: captured }, refund.outcome);
      refunds.push({
        transactionId: refund.outcome.transactionId,
        localMinor,
        billedMinor: refund.request?.amountMinor ?? 0,
      });
    }
    expect(refunds.map((r) => r.billedMinor)).toEqual([2, 1_610]);
    // After a restart: nothing noted, all of it read from the journal.
    const restarted = new ReceiptFactsLog(undefined, journaledReceiptFacts(journal, followOns));
    for (const facts of [live, restarted])
      for (const refund of refunds) {
        const doc = buildReceipt(
          {
            service: 'refund-capture',
            comments: 'REFUND Capture',
            amountMinor: refund.localMinor,
            currency: 'EUR',
            transactionId: refund.transactionId,
            atMs: Date.now(),
            lines: [],
          },
          facts.factsFor(refund.transactionId),
          settings,
          'en_GB',
        );
        expect(doc.fields.find((f) => f.label === RECEIPT_LABELS.convertedAmount('JPY'))?.value).toBe(
          formatAmount(refund.billedMinor, 'JPY', 'en_GB'),
        );
      }
  });
});

describe('refunds of a converted capture that recovery found standing (family A)', () => {
  it('bound the billing amount by what the journal says remains, as for a capture answered in time', async () => {
    // The capture's answer came after its machine stopped waiting (journaled unknown, the answer's facts kept), and
    // recovery's timeout void of it was refused NOT_VOIDABLE: it stands at the gateway, and the operator refunds it
    // (src/host/operator-desk.ts findTransaction). Refunded as 0.01 EUR and then the remaining 9.99 EUR.
    const sent: OutgoingRequest[] = [];
    const stopped = new AbortController();
    const answers: Answers = {
      preauth: authorized('1612'),
      capture: () => {
        stopped.abort();
        return {
          id: 'CAP-1',
          status: 'PENDING',
          orderInformation: { amountDetails: { totalAmount: '1612', currency: 'JPY' } },
        };
      },
    };
    const { journal, payments, held, outcome } = await convertedPreauth(answers, sent);
    const capture = await payments.submit(captureOfAll(held, outcome), { signal: stopped.signal });
    expect(capture.outcome).toMatchObject({ kind: 'unknown' });
    const captureTx = capture.prepared?.transactionId ?? '';
    journal.resolve(capture.entryId ?? 0, 'not-voidable');
    const standing = findTransaction(journal, captureTx, {
      now: new Date(),
      timeZone: 'Europe/Berlin',
      currency: 'EUR',
      authorizedTotal: () => undefined,
      toLocal: (tx, minor, currency) => payments.toLocal(tx, minor, currency),
    });
    expect(standing).toMatchObject({ gatewayId: 'CAP-1', amountMinor: 1_000, currency: 'EUR' });
    const captured = { transactionId: captureTx, gatewayId: standing?.gatewayId ?? '' };
    const refund = async (minor: number) => (await refundOf(payments, sent, captured, minor)).request;
    expect(await refund(1)).toMatchObject({ service: 'refund-capture', amountMinor: 2, currency: 'JPY' });
    // Converted on its own the 9.99 EUR would be 1611 JPY: 1613 in all, more than the 1612 captured.
    expect(await refund(999)).toMatchObject({
      service: 'refund-capture',
      amountMinor: 1_610,
      currency: 'JPY',
    });
  });
});

describe('follow-ons of an authorization with increments', () => {
  it('counts an approved increment whose answer stated no total as the total before it plus its amount', async () => {
    const sent: OutgoingRequest[] = [];
    const answers: Answers = {
      preauth: () => ({
        id: 'AUTH-1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '10.00', currency: 'EUR' } },
      }),
      // gateway.md §7 says the answer carries the new total; this one does not.
      incremental: () => ({ id: 'INC-1', status: 'AUTHORIZED' }),
      reversal: reversed,
    };
    const { journal, payments, held, original } = await approvedPreauth(answers, sent);
    const increment = await payments.submit({
      service: 'incremental',
      comments: 'Parking Incremental Auth',
      amountMinor: 500,
      currency: 'EUR',
      catLevel: 2,
      cardRef: held.ref,
      includeEmvTags: false,
      original,
    });
    // The machine is told the new total, not the 500 asked for (which it would take as the hold's total).
    expect(increment.outcome).toMatchObject({ kind: 'approved', authorizedMinor: 1_500 });
    // After a restart, the journal answers the same.
    expect(paymentService(journal, answers, sent).payments.authorizedTotal(original.transactionId)).toBe(
      1_500,
    );
    await payments.submit({
      service: 'reversal',
      comments: 'REVERSAL',
      amountMinor: 1_500,
      currency: 'EUR',
      catLevel: 2,
      cardRef: held.ref,
      includeEmvTags: false,
      original,
    });
    const reversal = sent.find((r) => r.service === 'reversal');
    expect(amountOf(reversal).reversalInformation?.amountDetails?.totalAmount).toBe('15.00');
  });
});

describe('follow-ons of an authorization in another currency than the one they are priced in', () => {
  it('sends no capture nor increment in a currency the authorization is not in: refused unsent', async () => {
    const sent: OutgoingRequest[] = [];
    const answers: Answers = {
      preauth: () => ({
        id: 'AUTH-1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '10.00', currency: 'EUR' } },
      }),
    };
    const { payments, original } = await approvedPreauth(answers, sent);
    // A fee priced after the terminal's currency was changed to GBP.
    const capture = await payments.submit({
      service: 'capture',
      comments: 'Parking Capture Less Than Auth',
      amountMinor: 900,
      currency: 'GBP',
      catLevel: 2,
      includeEmvTags: false,
      original,
    });
    const increment = await payments.submit({
      service: 'incremental',
      comments: 'Parking Incremental Auth',
      amountMinor: 500,
      currency: 'GBP',
      catLevel: 2,
      includeEmvTags: false,
      original,
    });
    expect([capture.outcome, increment.outcome]).toEqual([
      { kind: 'rejected', transactionId: 'not-sent', reason: 'CURRENCY_MISMATCH' },
      { kind: 'rejected', transactionId: 'not-sent', reason: 'CURRENCY_MISMATCH' },
    ]);
    expect(sent.map((r) => r.service)).toEqual(['preauth']);
  });
});

describe('a converted sale approved after its machine stopped waiting, found standing by recovery', () => {
  it('is listed for a refund in the local currency, and refunded at its own conversion terms', async () => {
    const sent: OutgoingRequest[] = [];
    const waiting = new AbortController();
    const answers: Answers = {
      // The machine stops waiting while the sale is out (a graceful stop, its backstop); the approval comes after.
      sale: () => {
        waiting.abort();
        return {
          id: 'SALE-1',
          status: 'AUTHORIZED',
          orderInformation: { amountDetails: { authorizedAmount: '1612', currency: 'JPY' } },
        };
      },
      'refund-payment': () => ({ id: 'REF-1', status: 'PENDING' }),
    };
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const { payments, cards } = paymentService(journal, answers, sent);
    const held = cards.hold(await cardRead(1_000));
    const sale = await payments.submit(
      {
        service: 'sale',
        comments: 'Parking Sale',
        amountMinor: 1_000,
        currency: 'EUR',
        catLevel: 2,
        cardRef: held.ref,
        includeEmvTags: false,
        dcc: SELECTION,
      },
      { signal: waiting.signal },
    );
    expect(sale.sent).toMatchObject({ kind: 'unknown', reason: 'ABANDONED', gatewayId: 'SALE-1' });
    const saleTx = sale.prepared?.transactionId ?? '';
    // Recovery's timeout void of it is refused NOT_VOIDABLE (past the cut-off, e.g. after a stop overnight).
    const entry = journal.findByTransactionId(saleTx);
    if (!entry) throw new Error('the sale was not journaled');
    const attempt = journal.begin({
      transactionId: `TV-${saleTx}`,
      referencedTransactionId: saleTx,
      service: 'timeout-void',
      comments: 'VOID Timeout',
      method: 'POST',
      path: '/pts/v2/voids',
      body: Buffer.from('{}'),
      moneyMoving: true,
      resolvesEntryId: entry.id,
    });
    journal.recordOutcome(attempt.id, { state: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 });
    journal.resolve(entry.id, 'not-voidable', attempt.id);

    // The operator finds it standing: 10.00 EUR, as the customer paid it.
    const found = findTransaction(journal, saleTx, {
      now: new Date(),
      timeZone: config.terminal.timezone,
      currency: 'EUR',
      authorizedTotal: (tx) => payments.authorizedTotal(tx),
      toLocal: (tx, minor, currency) => payments.toLocal(tx, minor, currency),
    });
    expect(found).toMatchObject({
      gatewayId: 'SALE-1',
      amountMinor: 1_000,
      currency: 'EUR',
      voidable: false,
    });

    // Its full refund goes back in the card's currency, at the sale's terms: 1612 JPY.
    await payments.submit({
      service: 'refund-payment',
      comments: 'REFUND Payment',
      amountMinor: found?.amountMinor ?? 0,
      currency: 'EUR',
      catLevel: 2,
      includeEmvTags: false,
      original: { transactionId: saleTx, gatewayId: 'SALE-1', service: 'sale' },
    });
    expect(sent.at(-1)).toMatchObject({ service: 'refund-payment', amountMinor: 1_612, currency: 'JPY' });
  });
});

describe('follow-ons of a converted sale after a restart with another processor family configured', () => {
  it('refund it at the terms the journal kept, family A included, not the family configured now', async () => {
    // A kiosk sale of 10.00 EUR paid as 1612 JPY through a family A acquirer; the terminal restarts configured for
    // family B (a new acquirer contract). The sale's conversion is the journal's: its listed amount and its refund
    // follow the family it was authorized with.
    const sent: OutgoingRequest[] = [];
    const answers: Answers = {
      sale: () => ({
        id: 'SALE-1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '1612', currency: 'JPY' } },
      }),
      'refund-payment': () => ({ id: 'REF-1', status: 'PENDING' }),
    };
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const { payments, cards } = paymentService(journal, answers, sent);
    const held = cards.hold(await cardRead(1_000));
    const sale = await payments.submit({
      service: 'sale',
      comments: 'Parking Sale',
      amountMinor: 1_000,
      currency: 'EUR',
      catLevel: 2,
      cardRef: held.ref,
      includeEmvTags: false,
      dcc: SELECTION,
    });
    expect(sale.outcome).toMatchObject({ kind: 'approved', gatewayId: 'SALE-1' });
    const saleTx = sale.prepared?.transactionId ?? '';

    const familyB = parseConfig({
      terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
      dcc: { enabled: true, processorFamily: 'B' },
    });
    const after = paymentService(journal, answers, sent, familyB);
    const found = findTransaction(journal, saleTx, {
      now: new Date(),
      timeZone: familyB.terminal.timezone,
      currency: 'EUR',
      authorizedTotal: (tx) => after.payments.authorizedTotal(tx),
      toLocal: (tx, minor, currency) => after.payments.toLocal(tx, minor, currency),
    });
    expect(found).toMatchObject({ gatewayId: 'SALE-1', amountMinor: 1_000, currency: 'EUR' });

    await after.payments.submit({
      service: 'refund-payment',
      comments: 'REFUND Payment',
      amountMinor: 1_000,
      currency: 'EUR',
      catLevel: 2,
      includeEmvTags: false,
      original: { transactionId: saleTx, gatewayId: 'SALE-1', service: 'sale' },
    });
    const refund = sent.at(-1);
    expect(refund).toMatchObject({ service: 'refund-payment', amountMinor: 1_612, currency: 'JPY' });
    expect(amountOf(refund).orderInformation?.amountDetails).toMatchObject({
      totalAmount: '1612',
      currency: 'JPY',
      originalAmount: '10.00',
      originalCurrency: 'EUR',
    });
  });
});

describe('refunds of a converted sale (family B)', () => {
  it('never credit more in the card currency than was paid, and the last one credits exactly the rest', async () => {
    // A sale of 10.00 EUR paid as 1612 JPY through a family B acquirer (totalAmount in EUR, the card's amount as
    // foreignAmount), refunded as 0.01 EUR and then the remaining 9.99 EUR: converted one by one their foreign
    // amounts would be 2 + 1611 = 1613 JPY, one yen more than the card paid.
    const familyB = parseConfig({
      terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
      dcc: { enabled: true, processorFamily: 'B' },
    });
    const sent: OutgoingRequest[] = [];
    const answers: Answers = {
      sale: () => ({
        id: 'SALE-1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '10.00', currency: 'EUR' } },
      }),
      'refund-payment': (r) => ({
        id: `REF-${sent.length}`,
        status: 'PENDING',
        refundAmountDetails: {
          refundAmount: amountOf(r).orderInformation?.amountDetails?.totalAmount,
          currency: 'EUR',
        },
      }),
    };
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const { payments, cards, followOns } = paymentService(journal, answers, sent, familyB);
    const held = cards.hold(await cardRead(1_000));
    const sale = await payments.submit({
      service: 'sale',
      comments: 'Parking Sale',
      amountMinor: 1_000,
      currency: 'EUR',
      catLevel: 2,
      cardRef: held.ref,
      includeEmvTags: false,
      dcc: SELECTION,
    });
    expect(sale.outcome).toMatchObject({ kind: 'approved', gatewayId: 'SALE-1' });
    const live = new ReceiptFactsLog(undefined, journaledReceiptFacts(journal, followOns));
    live.noteSubmit({ service: 'sale', dcc: SELECTION }, sale.outcome);
    expect(
      (amountOf(sent.at(-1)).orderInformation?.amountDetails as { foreignAmount?: string }).foreignAmount,
    ).toBe('1612');
    const original = {
      transactionId: sale.prepared?.transactionId ?? '',
      gatewayId: 'SALE-1',
      service: 'sale' as const,
    };
    const foreignOf = async (minor: number) => {
      const record = await payments.submit({
        service: 'refund-payment',
        comments: 'REFUND Payment',
        amountMinor: minor,
        currency: 'EUR',
        catLevel: 2,
        includeEmvTags: false,
        original,
      });
      expect(record.outcome.kind).toBe('approved');
      live.noteSubmit({ service: 'refund-payment', original }, record.outcome);
      refunds.push({ transactionId: record.outcome.transactionId, localMinor: minor });
      const details = amountOf(sent.at(-1)).orderInformation?.amountDetails as {
        totalAmount?: string;
        foreignAmount?: string;
        foreignCurrency?: string;
      };
      expect(details).toMatchObject({ currency: 'EUR', foreignCurrency: 'JPY' });
      return details.foreignAmount;
    };
    const refunds: { transactionId: string; localMinor: number }[] = [];
    expect(await foreignOf(1)).toBe('2');
    expect(await foreignOf(999)).toBe('1610');
    // Their receipts state the card amounts the refunds carried, live and from the journal after a restart.
    const restarted = new ReceiptFactsLog(undefined, journaledReceiptFacts(journal, followOns));
    for (const facts of [live, restarted])
      expect(
        refunds.map(
          (refund) =>
            buildReceipt(
              {
                service: 'refund-payment',
                comments: 'REFUND Payment',
                amountMinor: refund.localMinor,
                currency: 'EUR',
                transactionId: refund.transactionId,
                atMs: Date.now(),
                lines: [],
              },
              facts.factsFor(refund.transactionId),
              receiptSettingsFromConfig(familyB),
              'en_GB',
            ).fields.find((f) => f.label === RECEIPT_LABELS.convertedAmount('JPY'))?.value,
        ),
      ).toEqual([formatAmount(2, 'JPY', 'en_GB'), formatAmount(1_610, 'JPY', 'en_GB')]);
  });
});

describe('a capture for less than asked of a converted authorization, after a restart with another family configured', () => {
  // A pre-authorization of 10.00 EUR converted to 1612 JPY through a family A acquirer; the terminal restarts
  // configured for family B. The capture of the 10.00 EUR is sent as 1612 JPY (the family the journal kept), and the
  // gateway captures 806 JPY of it: 5.00 EUR at the authorization's rate, whatever family is configured now.
  for (const [name, withTerms] of [
    ["with the machine's terms", true],
    ['without terms (a capture recovery makes)', false],
  ] as const) {
    it(`counts the amount captured in local units at the family kept with the authorization, ${name}`, async () => {
      const sent: OutgoingRequest[] = [];
      const answers: Answers = {
        preauth: authorized('1612'),
        capture: () => ({
          id: 'CAP-1',
          status: 'PENDING',
          orderInformation: { amountDetails: { totalAmount: '806', currency: 'JPY' } },
        }),
      };
      const { journal, held, outcome } = await convertedPreauth(answers, sent);
      const familyB = parseConfig({
        terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
        dcc: { enabled: true, processorFamily: 'B' },
      });
      const after = paymentService(journal, answers, sent, familyB);
      const capture = await after.payments.submit({
        ...captureOfAll(held, outcome),
        ...(withTerms ? { dcc: SELECTION } : {}),
      });
      expect(sent.at(-1)).toMatchObject({ service: 'capture', amountMinor: 1_612, currency: 'JPY' });
      expect(capture.outcome).toMatchObject({ kind: 'approved', gatewayId: 'CAP-1', authorizedMinor: 500 });
    });
  }
});

describe("a converted meter hold's capture cut off by a restart and resolved by recovery (family A)", () => {
  // The sandbox's rates with its 3.5 % margin (src/sandbox/dcc.ts): 1 EUR = 1.120388 USD and 1 EUR = 0.870642 GBP. A
  // hold of 10.00 EUR; the meter session's fee, captured from it below the authorization, is cut off by a restart and
  // recovery's timeout void resolves it: the follow-up written at the next start captures the fee again, as the
  // session's capture did. The capture had not reached the gateway (its void found nothing: the whole hold stands), or
  // it had (its void answered the amount it voided: the capture released the rest of the hold, and its void gave back
  // only what it took, so the hold is now that capture's card amount, and the follow-up's is all of it).
  const meter = parseConfig({
    terminal: {
      model: 'meter',
      currency: 'EUR',
      country: 'DE',
      countryNumeric: '276',
      timezone: 'Europe/Berlin',
    },
    dcc: { enabled: true, processorFamily: 'A' },
  });
  const cases = [
    // 2.37 EUR is 2.66 USD; 2.66 USD scaled back by the hold's two amounts is 2.38 EUR, which is 2.67 USD.
    { billingCurrency: 'USD', exchangeRate: '1.120388', holdBilling: 1_120, feeMinor: 237, feeBilling: 266 },
    // 2.60 EUR is 2.26 GBP; 2.26 GBP scaled back is 2.59 EUR, which is 2.25 GBP.
    { billingCurrency: 'GBP', exchangeRate: '0.870642', holdBilling: 871, feeMinor: 260, feeBilling: 226 },
  ];
  for (const c of cases)
    for (const reached of [false, true])
      it(`captures the fee again for the card amount the cut-off capture carried, in ${c.billingCurrency}${reached ? ', all the hold still holds once that capture had reached the gateway' : ''}`, async () => {
        const selection: DccSelection = {
          indicator: '1',
          offer: {
            ...OFFER,
            billingAmountMinor: c.holdBilling,
            billingCurrency: c.billingCurrency,
            exchangeRate: c.exchangeRate,
          },
        };
        const decimal = (minor: number): string => (minor / 100).toFixed(2);
        const stopped = new AbortController();
        const sent: OutgoingRequest[] = [];
        const answers: Answers = {
          preauth: () => ({
            id: 'AUTH-1',
            status: 'AUTHORIZED',
            orderInformation: {
              amountDetails: { authorizedAmount: decimal(c.holdBilling), currency: c.billingCurrency },
            },
          }),
          // Its answer comes after the machine stopped waiting (the process going down): journaled unknown.
          capture: () => {
            stopped.abort();
            return { id: 'CAP-1', status: 'PENDING' };
          },
        };
        const { journal, held, outcome, payments } = await approvedPreauth(answers, sent, selection);
        // The session's capture: the fee at the offer's rate, journaled in the card's currency.
        const cut = await payments.submit(
          {
            ...captureOfAll(held, outcome),
            comments: 'Parking Capture Less Than Auth',
            amountMinor: c.feeMinor,
          },
          { signal: stopped.signal },
        );
        expect(cut.outcome).toMatchObject({ kind: 'unknown' });
        expect(journal.get(cut.entryId ?? 0)).toMatchObject({
          service: 'capture',
          amountMinor: c.feeBilling,
          currency: c.billingCurrency,
        });
        // Recovery's timeout void of it, approved: nothing captured, the hold stands (reference/gateway.md §7).
        const timeoutVoid = journal.begin({
          transactionId: 'TV-1',
          referencedTransactionId: cut.prepared?.transactionId ?? '',
          service: 'timeout-void',
          comments: 'VOID Timeout',
          method: 'POST',
          path: '/pts/v2/voids',
          body: Buffer.from('{}'),
          moneyMoving: true,
          resolvesEntryId: cut.entryId ?? 0,
        });
        journal.markSent(timeoutVoid.id);
        journal.recordOutcome(timeoutVoid.id, {
          state: 'approved',
          gatewayId: 'VOID-1',
          ...(reached ? { authorizedMinor: c.feeBilling } : {}),
        });
        journal.resolve(cut.entryId ?? 0, 'timeout-void', timeoutVoid.id);

        // The next start: nothing in memory.
        const after = paymentService(journal, answers, sent, meter);
        const open = new OpenAuthorizations({
          config: meter,
          journal,
          holds: new HoldStore(journal),
          followUps: new FollowUpStore(journal),
          submit: async (r: ServiceRequest) => (await after.payments.submit(r)).outcome,
          authorizedTotal: (tx) => after.payments.localAuthorizedTotal(tx),
          toLocal: (tx, minor, currency) => after.payments.toLocal(tx, minor, currency),
          now: () => new Date(),
          logger: silentLogger(),
        });
        await open.settle();
        const captures = sent.filter((r) => r.service === 'capture');
        expect(captures).toHaveLength(2);
        const again = JSON.parse(captures[1]?.body.toString('utf8') ?? '{}') as {
          orderInformation?: { amountDetails?: Record<string, unknown> };
        };
        expect({
          amountMinor: captures[1]?.amountMinor,
          currency: captures[1]?.currency,
          comments: captures[1]?.comments,
          originalAmount: again.orderInformation?.amountDetails?.originalAmount,
        }).toEqual({
          amountMinor: c.feeBilling,
          currency: c.billingCurrency,
          comments: reached ? 'Parking Capture' : 'Parking Capture Less Than Auth',
          originalAmount: decimal(c.feeMinor),
        });
        // What the gateway still holds takes it (the sandbox's money rule: one that exceeds it is refused for good).
        const stillHeld = heldAmount({
          authorized: c.holdBilling,
          captured: 0,
          reversed: reached ? c.holdBilling - c.feeBilling : 0,
        });
        expect(captureRule(stillHeld, captures[1]?.amountMinor ?? 0)).toMatchObject({ ok: true });
      });
});
