import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alternativeMethodsSchema } from '../config/alt-methods.js';
import {
  AltPaymentAnswerError,
  parseAltSaleAnswer,
  type AltSaleStatus,
  type GatewayClient,
  type PreparedAltCall,
} from '../gateway/index.js';
import {
  JournaledSender,
  openJournal,
  type OutgoingRequest,
  type SqliteJournal,
  type TransmitOutcome,
} from '../journal/index.js';
import {
  AltPaymentDesk,
  AltPaymentError,
  STATUS_CHECK_GUARD_MS,
  type AltPaymentDeskOptions,
  type DeskTimers,
} from './alt-payment-desk.js';

const HOUR = 3_600_000;
/** The spacing the desk keeps: spec 001's hour and the guard for network latency. */
const SPACING = HOUR + STATUS_CHECK_GUARD_MS;
const config = alternativeMethodsSchema.parse({ profiles: [{ profile: 1, methodName: 'METHOD_1' }] });
const customer = { email: 'a@example.com', firstName: 'Ana', lastName: 'Ruiz' };

const dirs: string[] = [];
const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fake clock whose timers never fire by themselves (the test moves time and runs what is due). */
function fakeClock(start = Date.UTC(2026, 10, 24, 8)) {
  const clock = { t: start, now: () => new Date(clock.t) };
  const timers: DeskTimers = { setTimeout: () => 0, clearTimeout: () => undefined };
  return { clock, timers };
}

/** A gateway that records when each status check arrived and answers what the test sets. */
function fakeGateway(clock: { t: number }) {
  const checks: number[] = [];
  const sales: PreparedAltCall[] = [];
  const state = { status: 'PENDING' as AltSaleStatus, tooEarly: false };
  const gateway: Pick<GatewayClient, 'alternativeMethods'> = {
    alternativeMethods: {
      sale: (prepared) => {
        sales.push(prepared);
        return Promise.resolve({ status: 'PENDING', id: 'G1', paymentUrl: 'https://g.example/ap/G1' });
      },
      status: (of, request) => {
        checks.push(clock.t);
        if (state.tooEarly) return Promise.reject(new AltPaymentAnswerError('too-early', 'too early'));
        return Promise.resolve({
          id: request.id,
          status: of === 'sale' ? state.status : 'REFUNDED',
        }) as never;
      },
    },
  };
  return { gateway, checks, sales, state };
}

function transmitterOf(journal: () => SqliteJournal, answer: (r: OutgoingRequest) => TransmitOutcome) {
  const seen: { request: OutgoingRequest; journaledBefore: boolean }[] = [];
  return {
    seen,
    transmitter: {
      transmit(request: OutgoingRequest) {
        const entry = request.transactionId
          ? journal().findByTransactionId(request.transactionId)
          : undefined;
        seen.push({ request, journaledBefore: entry !== undefined });
        return Promise.resolve(answer(request));
      },
    },
  };
}

function setup(path = ':memory:', options: Pick<AltPaymentDeskOptions, 'salePending'> = {}) {
  const { clock, timers } = fakeClock();
  const fake = fakeGateway(clock);
  let journal: SqliteJournal;
  const tx = transmitterOf(
    () => journal,
    (r) => ({
      kind: 'approved',
      gatewayId: `R-${r.transactionId ?? ''}`,
      status: 'REFUNDED',
      httpStatus: 201,
    }),
  );
  const open = (): AltPaymentDesk => {
    journal = openJournal(path, { now: clock.now });
    journals.push(journal);
    const desk = new AltPaymentDesk({
      journal,
      sender: new JournaledSender(journal, tx.transmitter),
      gateway: fake.gateway,
      config,
      now: clock.now,
      timers,
      ...options,
    });
    desk.resume();
    return desk;
  };
  return { clock, fake, tx, open, journal: () => journal };
}

describe('AltPaymentDesk', () => {
  it('starts a sale: journaled, PENDING with its paymentUrl, without personal data in the journal', async () => {
    const s = setup();
    const desk = s.open();
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1250, customer });
    expect(sale).toMatchObject({ state: 'PENDING', paymentUrl: 'https://g.example/ap/G1', currency: 'EUR' });
    const sent = JSON.parse(s.fake.sales[0]?.body.toString('utf8') ?? '{}') as { orderInformation: unknown };
    expect(JSON.stringify(sent.orderInformation)).toContain('a@example.com');
    const rows = JSON.stringify(s.journal().db.prepare('SELECT * FROM alt_sales').all());
    expect(rows).not.toContain('a@example.com');
    expect(rows).not.toContain('Ruiz');
  });

  it('hands a sale answered PENDING to salePending in the transaction that records the answer', async () => {
    const seen: { id: number; code: string; state: string; inTransaction: boolean }[] = [];
    const s = setup(':memory:', {
      salePending: (sale) =>
        seen.push({
          id: sale.id,
          code: sale.code,
          state: sale.state,
          inTransaction: s.journal().db.inTransaction,
        }),
    });
    const desk = s.open();
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1250, customer });
    expect(seen).toEqual([{ id: sale.id, code: 'T-1', state: 'PENDING', inTransaction: true }]);
  });

  it('refuses customer fields the profile needs and does not journal anything', async () => {
    const desk = setup().open();
    await expect(
      desk.start(1, { code: 'T-1', amountMinor: 1250, customer: { email: 'x' } }),
    ).rejects.toMatchObject({
      code: 'ALT_CUSTOMER_FIELDS',
      fields: { email: 'not-an-email', firstName: 'required', lastName: 'required' },
    });
    expect(desk.list()).toEqual([]);
    expect(desk.checkField('firstName', '4111 1111 1111 1111')).toBe('not-a-name');
  });

  it('never checks a sale sooner than the interval, including across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alt-desk-'));
    dirs.push(dir);
    const s = setup(join(dir, 'journal.db'));
    let desk = s.open();
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1250, customer });
    expect(desk.nextCheckAt()).toBe(s.clock.t + SPACING);
    // Try every ten minutes for five hours, restarting the desk after the second hour.
    for (let minute = 10; minute <= 300; minute += 10) {
      s.clock.t += 10 * 60_000;
      if (minute === 130) {
        await desk.close();
        s.journal().close();
        desk = s.open();
      }
      await desk.runDue();
    }
    expect(s.fake.checks.length).toBe(4);
    for (let i = 1; i < s.fake.checks.length; i++)
      expect((s.fake.checks[i] ?? 0) - (s.fake.checks[i - 1] ?? 0)).toBeGreaterThanOrEqual(HOUR);
    expect((s.fake.checks[0] ?? 0) - Date.parse(desk.get(sale.id)?.createdAt ?? '')).toBeGreaterThanOrEqual(
      HOUR,
    );
  });

  it('records a check before it is sent, so a crash during the check still spaces the next one', async () => {
    const s = setup();
    const desk = s.open();
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1250, customer });
    s.clock.t += SPACING;
    s.fake.state.tooEarly = true;
    await desk.runDue();
    expect(desk.get(sale.id)?.checks).toBe(1);
    s.fake.state.tooEarly = false;
    s.clock.t += SPACING - 1;
    expect(await desk.runDue()).toBe(0);
    s.clock.t += 1;
    expect(await desk.runDue()).toBe(1);
  });

  it('refunds partially within the settled amount, journaled before send; above it is refused', async () => {
    const s = setup();
    const desk = s.open();
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1250, customer });
    await expect(desk.refund(sale.id, 100)).rejects.toMatchObject({ code: 'ALT_NOT_REFUNDABLE' });
    s.fake.state.status = 'SETTLED';
    s.clock.t += SPACING;
    await desk.runDue();
    expect(desk.get(sale.id)?.state).toBe('SETTLED');
    const first = await desk.refund(sale.id, 500);
    expect(first).toMatchObject({ state: 'accepted', amountMinor: 500 });
    expect(s.tx.seen[0]?.journaledBefore).toBe(true);
    expect(s.tx.seen[0]?.request).toMatchObject({ service: 'refund-payment', moneyMoving: true });
    await expect(desk.refund(sale.id, 751)).rejects.toBeInstanceOf(AltPaymentError);
    await expect(desk.refund(sale.id, 751)).rejects.toMatchObject({ code: 'ALT_REFUND_ABOVE_SETTLED' });
    expect(s.tx.seen).toHaveLength(1);
    const rest = await desk.refund(sale.id);
    expect(rest.amountMinor).toBe(750);
    expect(desk.get(sale.id)).toMatchObject({ refundedMinor: 1250, refundableMinor: 0 });
    // Each accepted refund is confirmed by one status check an interval later.
    s.clock.t += SPACING;
    expect(await desk.runDue()).toBe(2);
    expect(desk.get(sale.id)?.refunds.map((r) => r.state)).toEqual(['refunded', 'refunded']);
  });

  it('shows nothing of a sale whose paymentUrl cannot be shown, sends it once and keeps its gateway id', async () => {
    const s = setup();
    const desk = s.open();
    // The real reading of the gateway's answer: PENDING, but with a javascript: URL for the QR code.
    s.fake.gateway.alternativeMethods.sale = (prepared) => {
      s.fake.sales.push(prepared);
      const body = {
        id: 'G9',
        status: 'PENDING',
        processorInformation: { paymentUrl: 'javascript:alert(1)' },
      };
      return Promise.resolve().then(() => parseAltSaleAnswer(201, Buffer.from(JSON.stringify(body))));
    };
    const sale = await desk.start(1, { code: 'T-9', amountMinor: 1250, customer });
    expect(sale).toMatchObject({ state: 'unknown', reason: 'GW_PARSE', gatewayId: 'G9' });
    expect(sale.paymentUrl).toBeUndefined();
    expect(s.fake.sales).toHaveLength(1);
    const rows = JSON.stringify(s.journal().db.prepare('SELECT * FROM alt_sales').all());
    expect(rows).not.toContain('javascript');
    // Nobody can pay it: no status check is owed, and the operator finds it by its gateway id.
    expect(desk.nextCheckAt()).toBeUndefined();
    expect(desk.list({ states: ['unknown'] }).map((x) => x.gatewayId)).toEqual(['G9']);
  });

  it('hands a refund whose outcome is unknown to recovery and counts it as standing', async () => {
    const { clock, timers } = fakeClock();
    const fake = fakeGateway(clock);
    fake.state.status = 'SETTLED';
    const journal = openJournal(':memory:', { now: clock.now });
    journals.push(journal);
    const unknown: number[] = [];
    const desk = new AltPaymentDesk({
      journal,
      sender: new JournaledSender(journal, {
        transmit: () => Promise.resolve({ kind: 'unknown', error: { code: 'GW_TIMEOUT' } }),
      }),
      gateway: fake.gateway,
      config,
      now: clock.now,
      timers,
      resolveUnknown: (id) => unknown.push(id),
    });
    const sale = await desk.start(1, { code: 'T-1', amountMinor: 1000, customer });
    clock.t += SPACING;
    await desk.runDue();
    const refund = await desk.refund(sale.id, 400);
    expect(refund.state).toBe('in-flight');
    expect(unknown).toEqual([refund.entryId]);
    expect(desk.get(sale.id)?.refundableMinor).toBe(600);
  });
});
