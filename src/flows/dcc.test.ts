import { describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';
import {
  convertAtOfferRate,
  dccMarginText,
  localAmountsAtOfferRate,
  refundAtOfferRate,
  dccRateText,
  dccReceiptLines,
} from './dcc.js';
import type { DccOfferSummary } from './effects.js';
import { provideFlowEffects } from './provide.js';
import type { FlowSettings } from './settings.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import type { TransactionRequest } from './transaction.js';
import { describeView, screenOf } from './view.js';

const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 500,
  localCurrency: 'GBP',
  billingAmountMinor: 666,
  billingCurrency: 'USD',
  exchangeRate: '1.331838',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20250106080000',
  expiresAtUtc: '2025-01-06T08:10:00Z',
  disclaimer: 'I have chosen to pay in the card currency. The conversion is provided by the merchant.',
};

const DCC_ON: FlowSettings = testSettings({ dcc: { enabled: true, processorFamily: 'A' } });

const sale: TransactionRequest = {
  service: 'sale',
  comments: 'Parking Sale',
  amountMinor: 500,
  read: { purpose: 'sale', transactionType: '00' },
  includeEmvTags: false,
  acceptPartial: false,
  cancellable: true,
  offerDcc: true,
};

function run(fake: FakeTerminal, request: TransactionRequest, settings: FlowSettings = DCC_ON) {
  const actor = createActor(provideFlowEffects.transaction(fake), {
    input: { settings, request, wallClock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

describe('currency conversion in the transaction actor', () => {
  it('asks for an offer after the card read and sends the converted sale once the card currency is chosen', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    const actor = run(fake, sale);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
    expect(fake.offerRequests).toEqual([{ cardRef: 'card-1', amountMinor: 500, currency: 'GBP' }]);
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]).toMatchObject({
      service: 'sale',
      amountMinor: 500,
      currency: 'GBP',
      dcc: { indicator: '1', offer: { billingAmountMinor: 666, billingCurrency: 'USD', offerId: 'offer-1' } },
    });
    expect(actor.getSnapshot().output).toMatchObject({
      kind: 'approved',
      dcc: { indicator: '1', offer: { billingCurrency: 'USD' } },
    });
  });

  it('sends the payment in the local currency with indicator 3 when the customer declines the conversion', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    const actor = run(fake, { ...sale, service: 'preauth', comments: 'Parking Auth' });
    await settle();
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
    await settle();
    expect(fake.sent[0]).toMatchObject({
      service: 'preauth',
      amountMinor: 500,
      currency: 'GBP',
      dcc: { indicator: '3' },
    });
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved', dcc: { indicator: '3' } });
  });

  it('ignores a currency that is neither of the two offered and keeps waiting without a default', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    const actor = run(fake, sale);
    await settle();
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
    expect(fake.sent).toEqual([]);
  });

  it('continues in the local currency without any DCC field when there is no offer', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(null);
    const actor = run(fake, sale);
    await settle();
    expect(fake.offerRequests).toHaveLength(1);
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]?.dcc).toBeUndefined();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved' });
    expect(actor.getSnapshot().output).not.toHaveProperty('dcc');
  });

  it('continues in the local currency when the offer lookup fails', async () => {
    const fake = new FakeTerminal();
    fake.offers.push('fail');
    const actor = run(fake, sale);
    await settle();
    expect(fake.sent[0]?.dcc).toBeUndefined();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved' });
  });

  it('cancels during the choice without sending anything and hands the card back for release', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    const actor = run(fake, sale);
    await settle();
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({
      kind: 'cancelled',
      undone: true,
      card: { cardRef: 'card-1' },
    });
    expect(fake.sent).toEqual([]);
  });

  it('sets no time limit of its own on the choice: the host times it and cancels it unanswered, nothing sent', async () => {
    const fake = new FakeTerminal();
    // An offer that outlasts the wait: its expiry is another matter (below).
    fake.offers.push({ ...OFFER, expiresAtUtc: '2025-01-06T09:00:00Z' });
    const actor = run(fake, sale);
    await settle();
    // Far past the read timeout: a customer listening to the rate, markup and disclaimer still has the choice.
    fake.clock.increment(10 * 65_000);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'cancelled', card: { cardRef: 'card-1' } });
    expect(fake.sent).toEqual([]);
  });

  it('asks for no offer when DCC is disabled or the request does not ask for one', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER, OFFER);
    run(fake, sale, testSettings());
    run(fake, { ...sale, offerDcc: false });
    await settle();
    expect(fake.offerRequests).toEqual([]);
    expect(fake.sent.map((r) => r.dcc)).toEqual([undefined, undefined]);
  });

  it('reverses a converted authorization the customer cancelled in flight with its terms', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    let open!: () => void;
    const actor = run(fake, { ...sale, service: 'preauth', comments: 'Parking Auth' });
    await settle();
    fake.submitGate = new Promise<void>((resolve) => (open = resolve));
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    actor.send({ type: 'CANCEL' });
    fake.submitGate = undefined;
    open();
    await settle();
    expect(fake.sent.map((r) => [r.service, r.dcc?.indicator])).toEqual([
      ['preauth', '1'],
      ['reversal', '1'],
    ]);
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'cancelled', undone: true });
  });
});

/** The offer the gateway gives for the same card and amount once the first one has expired: another rate. */
const RENEWED: DccOfferSummary = {
  ...OFFER,
  offerId: 'offer-2',
  reconciliationId: 'rec-2',
  billingAmountMinor: 671,
  exchangeRate: '1.342105',
  exchangeRateTimeStamp: '20250106081000',
  expiresAtUtc: '2025-01-06T08:20:00Z',
};

/** The offer the transaction shows now. */
function offerShown(actor: { getSnapshot(): { context: { offer?: DccOfferSummary } } }) {
  return actor.getSnapshot().context.offer;
}

describe('an offer that expires while the choice is on screen', () => {
  const OFFER_LIFE_MS = Date.parse(OFFER.expiresAtUtc) - Date.parse('2025-01-06T08:00:00Z');
  const MARGIN_MS = testSettings().timing.dccOfferMarginMs;

  it('shows a fresh offer for the same card and amount, and sends only that one, valid when sent', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER, RENEWED);
    const actor = run(fake, sale);
    await settle();
    expect(offerShown(actor)?.offerId).toBe('offer-1');
    // A customer listening to the rate, markup and disclaimer, asking for more time: the offer's expiry passes.
    fake.clock.increment(OFFER_LIFE_MS);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
    expect(offerShown(actor)).toMatchObject({ offerId: 'offer-2', billingAmountMinor: 671 });
    expect(fake.offerRequests).toEqual([
      { cardRef: 'card-1', amountMinor: 500, currency: 'GBP' },
      { cardRef: 'card-1', amountMinor: 500, currency: 'GBP' },
    ]);
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(fake.sent).toHaveLength(1);
    const sent = fake.sent[0]!;
    expect(sent.dcc).toMatchObject({
      indicator: '1',
      offer: {
        offerId: 'offer-2',
        reconciliationId: 'rec-2',
        billingAmountMinor: 671,
        exchangeRate: '1.342105',
      },
    });
    const offer = (sent.dcc as { offer: DccOfferSummary }).offer;
    expect(Date.parse(offer.expiresAtUtc) - MARGIN_MS).toBeGreaterThan(sent.atMs);
    expect(actor.getSnapshot().output).toMatchObject({
      kind: 'approved',
      dcc: { offer: { offerId: 'offer-2' } },
    });
  });

  it('does not send a choice made when the offer would expire before it reaches the gateway', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER, RENEWED);
    // The terminal's clock runs ahead of the actor's timers, as when a busy process runs a late timer after an event:
    // the choice arrives inside the margin before the offer's expiry, its timer not yet run.
    let aheadMs = 0;
    const modelClock = { now: () => fake.clock.now() + aheadMs };
    const actor = createActor(provideFlowEffects.transaction(fake), {
      input: { settings: DCC_ON, request: sale, wallClock: modelClock },
      clock: fake.clock,
    });
    actor.start();
    await settle();
    aheadMs = OFFER_LIFE_MS - MARGIN_MS / 2;
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    // Not sent with terms about to lapse: the customer sees the fresh rate and chooses again.
    expect(fake.sent).toEqual([]);
    expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
    expect(offerShown(actor)?.offerId).toBe('offer-2');
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(fake.sent.map((r) => r.dcc)).toMatchObject([{ indicator: '1', offer: { offerId: 'offer-2' } }]);
  });

  it('never shows an offer too close to its expiry to be chosen and sent in time: pays as without an offer', async () => {
    const fake = new FakeTerminal();
    fake.offers.push({ ...OFFER, expiresAtUtc: '2025-01-06T08:00:10Z' });
    const actor = run(fake, sale);
    await settle();
    expect(fake.offerRequests).toHaveLength(1);
    expect(fake.sent.map((r) => r.dcc)).toEqual([undefined]);
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved' });
  });

  it('continues in the local currency without any DCC field, as with no offer, when no fresh offer can be had', async () => {
    for (const next of [null, 'fail'] as const) {
      const fake = new FakeTerminal();
      fake.offers.push(OFFER, next);
      const actor = run(fake, sale);
      await settle();
      fake.clock.increment(OFFER_LIFE_MS);
      await settle();
      expect(fake.offerRequests).toHaveLength(2);
      expect(fake.sent).toHaveLength(1);
      expect(fake.sent[0]?.dcc).toBeUndefined();
      expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved' });
      expect(actor.getSnapshot().output).not.toHaveProperty('dcc');
    }
  });

  it('takes a fresh offer that cannot be chosen in time for no offer, and asks no more', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER, { ...RENEWED, expiresAtUtc: '2025-01-06T08:10:01Z' }, RENEWED);
    const actor = run(fake, sale);
    await settle();
    fake.clock.increment(OFFER_LIFE_MS);
    await settle();
    expect(fake.offerRequests).toHaveLength(2);
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]?.dcc).toBeUndefined();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved' });
    expect(actor.getSnapshot().output).not.toHaveProperty('dcc');
  });

  it('keeps an offer that holds longer than a timer can wait on screen, rather than replacing it at once', async () => {
    // Node runs a timer of more than 2^31 - 1 ms (24.8 days) after 1 ms; the fake timers do the same.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const fake = new FakeTerminal();
      // An answer whose expiry lies 30 days ahead (2025-01-06T08:00:00Z on the terminal's clock).
      fake.offers.push(
        { ...OFFER, expiresAtUtc: '2025-02-05T08:00:00Z' },
        { ...RENEWED, expiresAtUtc: '2025-02-05T08:10:00Z' },
      );
      // The machine's delays on the process's timers, as the host runs it.
      const actor = createActor(provideFlowEffects.transaction(fake), {
        input: { settings: DCC_ON, request: sale, wallClock: fake.clock },
      });
      actor.start();
      await settle();
      vi.advanceTimersByTime(60_000);
      await settle();
      expect(fake.offerRequests).toHaveLength(1);
      expect(screenOf(actor.getSnapshot())).toBe('choose-currency');
      expect(offerShown(actor)?.offerId).toBe('offer-1');
      expect(fake.sent).toEqual([]);
      // After a timer's longest wait the offer still holds: the choice waits again, and the expiry renews it.
      fake.clock.increment(MAX_TIMER_DELAY_MS);
      vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
      await settle();
      expect(fake.offerRequests).toHaveLength(1);
      fake.clock.set(Date.parse('2025-02-05T08:00:00Z'));
      vi.advanceTimersToNextTimer();
      await settle();
      expect(fake.offerRequests).toHaveLength(2);
      expect(offerShown(actor)?.offerId).toBe('offer-2');
      actor.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets the customer cancel while the fresh offer is asked for, and sends nothing', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER, 'hang');
    const actor = run(fake, sale);
    await settle();
    fake.clock.increment(OFFER_LIFE_MS);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('processing');
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'cancelled', card: { cardRef: 'card-1' } });
    expect(fake.sent).toEqual([]);
  });
});

describe('currency conversion in the models', () => {
  it('kiosk: forwards the choice to the transaction, shows the offer and prints both amounts on the receipt', async () => {
    const fake = new FakeTerminal();
    fake.offers.push({ ...OFFER, localAmountMinor: 3_000, billingAmountMinor: 3_996 });
    const actor = createActor(provideFlowEffects.kiosk(fake), {
      input: { settings: DCC_ON, clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    expect(describeView(actor.getSnapshot()).actions).not.toContain('CHOOSE_CURRENCY');
    actor.send({ type: 'CONFIRM' });
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'choose-currency',
      dcc: { billingCurrency: 'USD', billingAmountMinor: 3_996, localAmountMinor: 3_000 },
    });
    expect(view.actions).toEqual(expect.arrayContaining(['CHOOSE_CURRENCY', 'CANCEL']));
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    expect(fake.sent[0]).toMatchObject({ service: 'sale', amountMinor: 3_000, dcc: { indicator: '1' } });
    expect(fake.receipts[0]?.lines).toEqual(
      expect.arrayContaining([
        { label: 'Paid in card currency', value: '39.96 USD' },
        { label: 'Exchange rate', value: '1 GBP = 1.331838 USD' },
        { label: 'Markup', value: 'includes 3.5% margin over the wholesale rate' },
        { label: 'Currency conversion', value: OFFER.disclaimer },
      ]),
    );
  });

  it('kiosk: a cancel on the choice screen returns to idle and releases the card', async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    const actor = createActor(provideFlowEffects.kiosk(fake), {
      input: { settings: DCC_ON, clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    expect(fake.sent).toEqual([]);
    expect([...fake.released]).toEqual(['card-1']);
  });

  it('kiosk and attended: the fresh offer is shown, said to be new, sent and printed', async () => {
    for (const model of ['kiosk', 'attended'] as const) {
      const fake = new FakeTerminal();
      fake.offers.push(OFFER, RENEWED);
      const actor = createActor(provideFlowEffects[model](fake), {
        input: { settings: DCC_ON, clock: fake.clock },
        clock: fake.clock,
      });
      actor.start();
      actor.send({ type: 'START' });
      if (model === 'kiosk') actor.send({ type: 'LOST_TICKET' });
      else actor.send({ type: 'ENTER_AMOUNT', minor: 500 });
      actor.send({ type: 'CONFIRM' });
      await settle();
      expect(describeView(actor.getSnapshot()).dcc?.offerId).toBe('offer-1');
      expect(describeView(actor.getSnapshot()).messageKey).not.toBe('dcc.offerRenewed');
      fake.clock.increment(Date.parse(OFFER.expiresAtUtc) - fake.clock.now());
      await settle();
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({
        screen: 'choose-currency',
        messageKey: 'dcc.offerRenewed',
        dcc: { offerId: 'offer-2', exchangeRate: '1.342105' },
      });
      expect(view.actions).toEqual(expect.arrayContaining(['CHOOSE_CURRENCY', 'CANCEL']));
      actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
      await settle();
      expect(describeView(actor.getSnapshot()).screen).toBe('approved');
      expect(fake.sent.map((r) => r.dcc)).toMatchObject([{ indicator: '1', offer: { offerId: 'offer-2' } }]);
      expect(fake.receipts[0]?.lines).toContainEqual({
        label: 'Exchange rate',
        value: '1 GBP = 1.342105 USD',
      });
      actor.stop();
    }
  });

  it("reads the offer's expiry on the terminal's own clock, not on a parking clock moved over a stay", async () => {
    const fake = new FakeTerminal();
    fake.offers.push(OFFER);
    // `simulate` and tests move the parking clock; the gateway dates the offer on the terminal's real clock.
    const parkingClock = { now: () => fake.clock.now() + 3_600_000 };
    const actor = createActor(provideFlowEffects.meter(fake), {
      input: { settings: DCC_ON, clock: parkingClock, wallClock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'choose-currency',
      dcc: { offerId: 'offer-1' },
    });
    actor.stop();
  });

  it('meter: captures and reverses a converted pre-authorization with its terms and never extends it incrementally', async () => {
    const fake = new FakeTerminal();
    fake.offers.push({ ...OFFER, localAmountMinor: 300, billingAmountMinor: 400 }, null);
    // Fixed-time market (the chosen duration is held), where an extension would otherwise be an increment.
    const settings = { ...DCC_ON, tariff: { ...DCC_ON.tariff, meterAuthorization: 'chosen' as const } };
    const actor = createActor(provideFlowEffects.meter(fake), {
      input: { settings, clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('session');
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    fake.clock.increment(20 * 60_000);
    actor.send({ type: 'END_SESSION' });
    await settle();
    // A 20-minute stay costs 150: the converted hold captures it at the hold's rate, the second hold is reversed.
    expect(fake.sent.map((r) => [r.service, r.amountMinor, r.dcc?.indicator])).toEqual([
      ['preauth', 300, '1'],
      ['preauth', 150, undefined],
      ['capture', 150, '1'],
      ['reversal', 150, undefined],
    ]);
    expect(fake.receipts[0]?.lines).toContainEqual({ label: 'Paid in card currency', value: '2.00 USD' });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });
});

describe('refundAtOfferRate', () => {
  it('gives refunds card amounts that add up to the card amount of what they refunded', () => {
    // 5.00 GBP = 666 USD at 1.331838: one by one, 0.01 + 0.01 + 4.98 GBP would be 1 + 1 + 663 = 665 USD, and
    // 0.03 + 4.97 GBP 4 + 662 = 666; telescoped each is within a cent of its own conversion and the sum is exact.
    const parts = (amounts: number[]) =>
      amounts.map((minor, i) =>
        refundAtOfferRate(
          minor,
          amounts.slice(0, i).reduce((a, b) => a + b, 0),
          OFFER,
        ),
      );
    for (const amounts of [[1, 1, 498], [3, 497], [250, 250], [500], [7, 13, 480]]) {
      const billed = parts(amounts);
      expect(billed.reduce((a, b) => a + b, 0)).toBe(666);
      billed.forEach((b, i) =>
        expect(Math.abs(b - convertAtOfferRate(amounts[i]!, OFFER))).toBeLessThanOrEqual(1),
      );
    }
    expect(refundAtOfferRate(0, 100, OFFER)).toBe(0);
  });
});

describe('localAmountsAtOfferRate', () => {
  // The sandbox's rates with its 3.5 % margin, each pair's hold of 10.00: USD and GBP cards of EUR and USD terminals.
  const offers: DccOfferSummary[] = [
    ['EUR', 'USD', '1.120388', 1_120],
    ['EUR', 'GBP', '0.870642', 871],
    ['EUR', 'JPY', '167.01795', 1_670],
    ['USD', 'GBP', '0.804299', 804],
  ].map(([localCurrency, billingCurrency, exchangeRate, billingAmountMinor]) => ({
    ...OFFER,
    localCurrency: String(localCurrency),
    billingCurrency: String(billingCurrency),
    exchangeRate: String(exchangeRate),
    localAmountMinor: 1_000,
    billingAmountMinor: Number(billingAmountMinor),
  }));

  it('finds every local amount below and above the offered one among those converting to its card amount', () => {
    for (const offer of offers)
      for (let local = 0; local <= 1_200; local += 1) {
        const billing = convertAtOfferRate(local, offer);
        const run = localAmountsAtOfferRate(billing, offer);
        const where = `${local} ${offer.localCurrency} = ${billing} ${offer.billingCurrency}`;
        expect(run, where).toBeDefined();
        expect(convertAtOfferRate(run?.lowest ?? -1, offer), where).toBe(billing);
        expect(convertAtOfferRate(run?.highest ?? -1, offer), where).toBe(billing);
        if (local !== offer.localAmountMinor) {
          expect(run?.lowest ?? Infinity, where).toBeLessThanOrEqual(local);
          expect(run?.highest ?? -1, where).toBeGreaterThanOrEqual(local);
        }
      }
  });

  it('gives several local amounts where the card currency is worth more, and the offered one for the offered amount', () => {
    const usdToGbp = offers[3]!;
    // 0.02 and 0.03 USD are both 0.02 GBP at 0.804299 (0.0161 and 0.0241).
    expect(localAmountsAtOfferRate(2, usdToGbp)).toEqual({ lowest: 2, highest: 3 });
    expect(localAmountsAtOfferRate(804, usdToGbp)).toEqual({ lowest: 1_000, highest: 1_000 });
  });

  it('gives none for an amount no local amount converts to, a negative one or an unreadable rate', () => {
    // 0.01 EUR is 2 JPY: nothing converts to 1 JPY.
    expect(localAmountsAtOfferRate(1, offers[2]!)).toBeUndefined();
    expect(localAmountsAtOfferRate(-1, OFFER)).toBeUndefined();
    expect(localAmountsAtOfferRate(300, { ...OFFER, exchangeRate: '1,33' })).toBeUndefined();
  });
});

describe('convertAtOfferRate', () => {
  it('gives the offered billing amount for the offered local amount', () => {
    expect(convertAtOfferRate(500, OFFER)).toBe(666);
  });

  it('converts a smaller amount at the rate, rounded half up to the billing minor unit', () => {
    // 2.50 GBP × 1.331838 = 3.329595 USD → 3.33.
    expect(convertAtOfferRate(250, OFFER)).toBe(333);
  });

  it('respects the exponents of both currencies', () => {
    const yen: DccOfferSummary = {
      ...OFFER,
      localCurrency: 'EUR',
      billingCurrency: 'JPY',
      exchangeRate: '167.01795',
      localAmountMinor: 1_250,
      billingAmountMinor: 2_088,
    };
    // 6.25 EUR × 167.01795 = 1043.86 JPY → 1044 (no minor unit).
    expect(convertAtOfferRate(625, yen)).toBe(1_044);
  });

  it('divides by an inverted rate', () => {
    const inverted: DccOfferSummary = { ...OFFER, exchangeRate: '0.750844', exchangeRateInverted: true };
    // 2.50 GBP ÷ 0.750844 = 3.3296 USD → 3.33.
    expect(convertAtOfferRate(250, inverted)).toBe(333);
  });

  it('keeps an amount below the offered one strictly below the offered billing amount', () => {
    const coarse: DccOfferSummary = {
      ...OFFER,
      exchangeRate: '0.8043',
      localAmountMinor: 1_000,
      billingAmountMinor: 804,
    };
    // 9.99 × 0.8043 = 8.035 → 8.04 would equal the authorization: a capture below it stays below it.
    expect(convertAtOfferRate(999, coarse)).toBe(803);
  });

  it('refuses a negative amount and an unreadable rate', () => {
    expect(() => convertAtOfferRate(-1, OFFER)).toThrow(RangeError);
    expect(() => convertAtOfferRate(100, { ...OFFER, exchangeRate: '1,33' })).toThrow(RangeError);
  });

  it('writes no receipt line for a payment in the local currency', () => {
    expect(dccReceiptLines({ indicator: '3' })).toEqual([]);
    expect(dccReceiptLines(undefined)).toEqual([]);
  });

  it('writes the rate and the margin the way the customer writes numbers, every digit of the gateway kept', () => {
    expect(dccRateText(OFFER)).toBe('1 GBP = 1.331838 USD');
    expect(dccRateText(OFFER, 'de_DE')).toBe('1 GBP = 1,331838 USD');
    expect(dccRateText({ ...OFFER, exchangeRate: '0.7500', exchangeRateInverted: true }, 'fr_FR')).toBe(
      '1 USD = 0,7500 GBP',
    );
    expect(dccRateText(OFFER, 'ar_AE')).toBe('1 GBP = 1.331838 USD');
    expect(dccMarginText(OFFER, 'de_DE')).toBe('3,5');
    expect(dccMarginText(OFFER, 'en_GB')).toBe('3.5');
  });
});
