import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { FakeTerminal, settle, testSettings } from '../flows/testing/fake-terminal.js';
import {
  JournaledSender,
  OfflineQueue,
  offlineQueueStatus,
  openJournal,
  staticKeyProvider,
  type AuditRecord,
  type SqliteJournal,
} from '../journal/index.js';
import { translator } from '../i18n/index.js';
import { createLogger, silentLogger } from '../log/index.js';
import type { OperatorStatus } from './api.js';
import type { HoldRecord, HoldExpiryResult } from '../flows/index.js';
import type { HoldRelease, HoldStanding } from './hold-watch.js';
import { saleEntry } from '../journal/testing/entries.js';
import { findTransaction, OPERATOR_SESSION_IDLE_MS, OperatorDesk } from './operator-desk.js';
import { amountStanding, operatorService } from '../flows/operator.js';
import { OperatorPin } from './operator-pin.js';

const T0 = Date.parse('2030-01-01T08:00:00Z');
let t = T0;
const now = (): Date => new Date(t);

type LocalAmount = { minor: number; currency: string };

/** The status bar is not what these tests are about. */
const STATUS = { terminalId: 'T-1' } as OperatorStatus;

const journals: SqliteJournal[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  t = T0;
});

/** A desk over a fresh journal, with the flows' fake effects holding one approved sale `S1` of £6.00. */
function setup(
  flushQueue = () => Promise.resolve({ forwarded: 2, declined: 0, remaining: 0 }),
  terminal: {
    currency?: string;
    locale?: string;
    toLocal?: (tx: string, minor: number, currency: string) => LocalAmount;
  } = {},
  stays?: ConstructorParameters<typeof OperatorDesk>[0]['stays'],
) {
  const journal = openJournal(':memory:', { now });
  journals.push(journal);
  const pin = new OperatorPin(undefined, () => t);
  const goodPin = pin.generated ?? '';
  const fake = new FakeTerminal(T0);
  fake.settled.set('G-S1', {
    service: 'sale',
    transactionId: 'S1',
    gatewayId: 'G-S1',
    amountMinor: 600,
    refundedMinor: 0,
    voided: false,
  });
  // A variable, not a literal: the desk takes what it needs of it.
  const deps = {
    config: parseConfig({
      terminal: {
        ...(terminal.currency ? { currency: terminal.currency } : {}),
        ...(terminal.locale ? { locale: terminal.locale } : {}),
      },
    }),
    journal,
    pin,
    effects: fake,
    settings: testSettings(terminal.currency ? { currency: terminal.currency } : {}),
    clock: fake.clock,
    now,
    logger: silentLogger(),
    authorizedTotal: () => undefined,
    toLocal: terminal.toLocal ?? ((_tx: string, minor: number, currency: string) => ({ minor, currency })),
    flushQueue,
    changed: () => undefined,
    status: () => STATUS,
    service: (task: string) =>
      Promise.resolve(
        task === 'reprint'
          ? { outcome: 'failed' as const, message: 'no receipt to print again' }
          : { outcome: 'ok' as const, message: `${task} done` },
      ),
    // Payment links and alternative-method sales: src/host/operator-payments.test.ts.
    links: {
      operatorPage: () => Promise.reject(new Error('not in these tests')),
      setStatusByOperator: () => Promise.reject(new Error('not in these tests')),
    },
    altPayments: { list: () => [], get: () => undefined, refund: () => Promise.reject(new Error('no sale')) },
    ...(stays ? { stays } : {}),
  };
  const desk = new OperatorDesk(deps);
  const wrongPin = goodPin === '000000' ? '111111' : '000000';
  return { desk, journal, fake, goodPin, wrongPin, deps };
}

/** The log as the operator reads it, without ids and times. */
function log(desk: OperatorDesk): Omit<AuditRecord, 'id' | 'time'>[] {
  return desk.auditLog().map(({ id: _id, time: _time, ...r }) => r);
}

describe('OperatorDesk: a standalone credit behind the operator PIN', () => {
  it('admits a credit with the PIN only, recording each attempt, never the PIN', () => {
    const { desk, journal, goodPin, wrongPin } = setup();
    expect(desk.admitCredit(wrongPin)).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN' } });
    expect(desk.admitCredit(goodPin)).toEqual({ ok: true, value: undefined });
    expect(log(desk)).toEqual([
      {
        actor: 'operator',
        action: 'sign-in-failed',
        result: 'refused',
        code: 'OPERATOR_PIN',
        details: { requested: 'credit' },
      },
      { actor: 'operator', action: 'sign-in', result: 'ok', details: { requested: 'credit' } },
      { actor: 'operator', action: 'credit', result: 'ok', code: 'CREDIT_STARTED', details: {} },
    ]);
    const stored = JSON.stringify(journal.db.prepare('SELECT * FROM audit_log').all());
    expect(stored).not.toContain(goodPin);
    expect(stored).not.toContain(wrongPin);
  });

  it('counts wrong PINs for a credit and for operator mode towards one lockout, which refuses both', async () => {
    const { desk, goodPin, wrongPin } = setup();
    for (let i = 0; i < 3; i++) desk.admitCredit(wrongPin);
    await desk.handle({ pin: wrongPin, action: { type: 'transactions' } });
    const fifth = desk.admitCredit(wrongPin);
    const until = new Date(t + 5 * 60_000).toISOString();
    expect(fifth).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN', lockedUntil: until } });
    expect(desk.admitCredit(goodPin)).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED', lockedUntil: until },
    });
    expect(await desk.handle({ pin: goodPin, action: { type: 'transactions' } })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED' },
    });
    expect(desk.auditLog().some((r) => r.action === 'credit')).toBe(false);
  });
});

describe('OperatorDesk audit log', () => {
  it('records a failed PIN check and a sign-in, never the PIN', async () => {
    const { desk, journal, goodPin, wrongPin } = setup();
    const refused = await desk.handle({ pin: wrongPin, action: { type: 'transactions' } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN' } });
    expect(await desk.handle({ pin: goodPin, action: { type: 'transactions' } })).toMatchObject({ ok: true });
    expect(log(desk)).toEqual([
      {
        actor: 'operator',
        action: 'sign-in-failed',
        result: 'refused',
        code: 'OPERATOR_PIN',
        details: { requested: 'transactions' },
      },
      { actor: 'operator', action: 'sign-in', result: 'ok', details: { requested: 'transactions' } },
    ]);
    const stored = JSON.stringify(journal.db.prepare('SELECT * FROM audit_log').all());
    expect(stored).not.toContain(goodPin);
    expect(stored).not.toContain(wrongPin);
  });

  it('records every PIN check refused while operator mode is locked', async () => {
    const { desk, goodPin, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: { type: 'transactions' } });
    expect(await desk.handle({ pin: goodPin, action: { type: 'transactions' } })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED' },
    });
    const codes = desk.auditLog().map((r) => `${r.action}:${r.code ?? ''}`);
    expect(codes).toEqual([
      ...Array<string>(5).fill('sign-in-failed:OPERATOR_PIN'),
      'sign-in-failed:OPERATOR_LOCKED',
    ]);
  });

  it('records one sign-in per operator session, and a new one after a failure or a long pause', async () => {
    const { desk, goodPin, wrongPin } = setup();
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    t += 60_000;
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    t += 60_000;
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    expect(desk.auditLog().map((r) => r.action)).toEqual(['sign-in']);
    t += OPERATOR_SESSION_IDLE_MS;
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    await desk.handle({ pin: wrongPin, action: { type: 'transactions' } });
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    expect(desk.auditLog().map((r) => r.action)).toEqual(['sign-in', 'sign-in', 'sign-in-failed', 'sign-in']);
  });

  it('records an approved refund with its amount and the refund sent', async () => {
    const { desk, goodPin, fake } = setup();
    const r = await desk.handle({
      pin: goodPin,
      action: { type: 'refund', transactionId: 'S1', amountMinor: 250 },
    });
    expect(r).toMatchObject({ ok: true, value: { type: 'refund', outcome: 'approved' } });
    const refundTx = fake.sent.find((s) => s.service === 'refund-payment')?.transactionId;
    expect(log(desk).at(-1)).toEqual({
      actor: 'operator',
      action: 'refund',
      subject: 'S1',
      result: 'ok',
      code: 'APPROVED',
      details: {
        outcome: 'approved',
        amountMinor: 250,
        currency: 'GBP',
        service: 'refund-payment',
        sentTransactionId: refundTx,
      },
    });
  });

  it('records what a full refund and a void sent: their amount and currency, not only the ones asked for', async () => {
    const { desk, goodPin, fake } = setup();
    fake.settled.set('G-S2', {
      service: 'sale',
      transactionId: 'S2',
      gatewayId: 'G-S2',
      amountMinor: 450,
      refundedMinor: 0,
      voided: false,
    });
    await desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1', amountMinor: 250 } });
    // No amount asked for: all that is left of S1 (3.50) is refunded.
    await desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1' } });
    await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'S2' } });
    expect(fake.sent.map((r) => `${r.service}:${r.amountMinor}`)).toEqual([
      'refund-payment:250',
      'refund-payment:350',
      'void-payment:450',
    ]);
    expect(
      log(desk)
        .filter((r) => r.action === 'refund' || r.action === 'void')
        .map((r) => [r.action, r.details.amountMinor, r.details.currency]),
    ).toEqual([
      ['refund', 250, 'GBP'],
      ['refund', 350, 'GBP'],
      ['void', 450, 'GBP'],
    ]);
  });

  it('records a declined refund as refused, with the outcome', async () => {
    const { desk, goodPin, fake } = setup();
    fake.script('refund-payment', 'declined');
    const r = await desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1' } });
    expect(r).toMatchObject({ ok: true, value: { outcome: 'declined' } });
    expect(log(desk).at(-1)).toMatchObject({
      action: 'refund',
      subject: 'S1',
      result: 'refused',
      details: { outcome: 'declined', service: 'refund-payment' },
    });
  });

  it('records an approved void and a void refused after the settlement cut-off', async () => {
    const { desk, goodPin, fake } = setup();
    fake.voidable = false;
    await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'S1' } });
    fake.voidable = true;
    await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'S1' } });
    await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'NOPE' } });
    expect(
      desk
        .auditLog()
        .filter((r) => r.action === 'void')
        .map((r) => [r.subject, r.result, r.code]),
    ).toEqual([
      ['S1', 'refused', 'NOT_VOIDABLE'],
      ['S1', 'ok', 'APPROVED'],
      ['NOPE', 'refused', 'NOT_FOUND'],
    ]);
  });

  it('records a void of a capture as done when the release of its hold is refused: the money was given back', async () => {
    const { desk, goodPin, fake } = setup();
    fake.auths.set('G-A1', {
      transactionId: 'A1',
      authorizedMinor: 300,
      capturedMinor: 150,
      reversed: false,
    });
    fake.settled.set('G-C1', {
      service: 'capture',
      transactionId: 'C1',
      gatewayId: 'G-C1',
      amountMinor: 150,
      refundedMinor: 0,
      voided: false,
      authGatewayId: 'G-A1',
    });
    fake.script('reversal', 'rejected');
    const r = await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'C1' } });
    expect(r).toMatchObject({
      ok: true,
      value: { type: 'void', outcome: 'approved', code: 'HOLD_NOT_RELEASED' },
    });
    expect(fake.sent.map((s) => `${s.service}:${s.kind}`)).toEqual([
      'void-capture:approved',
      'reversal:rejected',
    ]);
    expect(log(desk).at(-1)).toMatchObject({
      action: 'void',
      subject: 'C1',
      result: 'ok',
      code: 'HOLD_NOT_RELEASED',
      details: {
        outcome: 'approved',
        service: 'void-capture',
        sentTransactionId: fake.sent[0]?.transactionId,
      },
    });
  });

  it('refuses to void a sale with a refund standing, and records why', async () => {
    const { desk, goodPin, fake } = setup();
    await desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1', amountMinor: 200 } });
    const r = await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'S1' } });
    expect(r).toMatchObject({ ok: true, value: { outcome: 'not-allowed', code: 'REFUNDS_STANDING' } });
    expect(fake.sent.map((s) => s.service)).toEqual(['refund-payment']);
    expect(log(desk).at(-1)).toMatchObject({
      action: 'void',
      subject: 'S1',
      result: 'refused',
      code: 'REFUNDS_STANDING',
    });
  });

  it("refunds a payment in its own currency, not the terminal's configured since", async () => {
    // The sale S1 was paid in GBP (the fake's journal); the terminal is now configured for EUR.
    const { desk, goodPin, fake } = setup(undefined, { currency: 'EUR' });
    const r = await desk.handle({
      pin: goodPin,
      action: { type: 'refund', transactionId: 'S1', amountMinor: 250 },
    });
    expect(r).toMatchObject({ ok: true, value: { type: 'refund', outcome: 'approved' } });
    expect(fake.sent.find((s) => s.service === 'refund-payment')).toMatchObject({
      amountMinor: 250,
      currency: 'GBP',
    });
    expect(fake.receipts.at(-1)).toMatchObject({ amountMinor: 250, currency: 'GBP' });
  });

  it('records a queue flush and its figures, or its failure', async () => {
    let fails = false;
    const { desk, goodPin } = setup(() =>
      fails
        ? Promise.reject(Object.assign(new Error('gateway down'), { code: 'GW_CONNECTION' }))
        : Promise.resolve({ forwarded: 2, declined: 1, remaining: 0 }),
    );
    await desk.handle({ pin: goodPin, action: { type: 'flush-queue' } });
    fails = true;
    await expect(desk.handle({ pin: goodPin, action: { type: 'flush-queue' } })).rejects.toThrow(
      'gateway down',
    );
    expect(log(desk).slice(1)).toEqual([
      {
        actor: 'operator',
        action: 'queue-flush',
        result: 'ok',
        details: { forwarded: 2, declined: 1, remaining: 0 },
      },
      { actor: 'operator', action: 'queue-flush', result: 'failed', code: 'GW_CONNECTION', details: {} },
    ]);
  });

  it('lists the log for operator mode and exports it as CSV, recording the export', async () => {
    const { desk, goodPin } = setup();
    await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    const view = desk.auditView({ since: '2030-01-01T08:00:00Z', limit: 10 });
    expect(view).toMatchObject({ ok: true, value: { type: 'audit', records: [{ action: 'sign-in' }] } });
    expect(view.ok && view.value).not.toHaveProperty('csv');
    const exported = desk.auditView({ format: 'csv' });
    if (!exported.ok) throw new Error(exported.error.message);
    const rows = (exported.value.csv ?? '').split('\r\n');
    expect(rows[0]).toBe('id,time,actor,action,subject,result,code,details');
    expect(rows[1]).toContain(',operator,sign-in,,ok,,');
    expect(desk.auditLog().at(-1)).toMatchObject({
      action: 'export',
      subject: 'audit-log',
      details: { format: 'csv', records: 1 },
    });
    expect(desk.auditView({ since: 'yesterday' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    expect(desk.auditView({ limit: 0 })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
  });

  it('records a refund or void whose payment the journal could not read as failed, not as refused', async () => {
    const { desk, goodPin, fake } = setup();
    fake.findTransaction = () =>
      Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'JOURNAL_IO' }));
    const r = await desk.handle({ pin: goodPin, action: { type: 'void', transactionId: 'S1' } });
    expect(r).toMatchObject({ ok: true, value: { outcome: 'failed', code: 'JOURNAL_UNREADABLE' } });
    expect(log(desk).at(-1)).toEqual({
      actor: 'operator',
      action: 'void',
      subject: 'S1',
      result: 'failed',
      code: 'JOURNAL_UNREADABLE',
      details: { outcome: 'failed' },
    });
  });

  it('goes on when the audit log cannot be written: the refund stands', async () => {
    const { desk, goodPin, journal } = setup();
    journal.db.exec('DROP TABLE audit_log');
    const r = await desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1' } });
    expect(r).toMatchObject({ ok: true, value: { outcome: 'approved' } });
  });
});

describe('OperatorDesk: the PIN lockout across a restart', () => {
  /**
   * The desk as the next start builds it: a new PIN checker, reading the same PIN from its file, over the same journal.
   */
  function restart(deps: ReturnType<typeof setup>['deps'], goodPin: string): OperatorDesk {
    const dir = mkdtempSync(join(tmpdir(), 'pt-desk-pin-'));
    dirs.push(dir);
    const file = join(dir, 'operator.pin');
    writeFileSync(file, `${goodPin}\n`);
    chmodSync(file, 0o600);
    return new OperatorDesk({ ...deps, pin: new OperatorPin(file, () => t) });
  }
  const transactions = { type: 'transactions' } as const;

  it('keeps operator mode locked when the terminal restarts during the lockout', async () => {
    const { desk, deps, goodPin, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    t += 60_000;
    const restarted = restart(deps, goodPin);
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED' },
    });
    // Five minutes after the fifth wrong PIN, as without the restart.
    t += 4 * 60_000;
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({ ok: true });
  });

  it('counts the wrong PINs before a restart towards the lockout after it', async () => {
    const { desk, deps, goodPin, wrongPin } = setup();
    for (let i = 0; i < 4; i++) await desk.handle({ pin: wrongPin, action: transactions });
    const restarted = restart(deps, goodPin);
    expect(await restarted.handle({ pin: wrongPin, action: transactions })).toMatchObject({
      error: { code: 'OPERATOR_PIN' },
    });
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({
      error: { code: 'OPERATOR_LOCKED' },
    });
  });

  it('starts afresh after a good PIN, or a lockout that ran out, before the restart', async () => {
    const { desk, deps, goodPin, wrongPin } = setup();
    for (let i = 0; i < 4; i++) await desk.handle({ pin: wrongPin, action: transactions });
    await desk.handle({ pin: goodPin, action: transactions });
    for (let i = 0; i < 4; i++) await desk.handle({ pin: wrongPin, action: transactions });
    expect(await restart(deps, goodPin).handle({ pin: goodPin, action: transactions })).toMatchObject({
      ok: true,
    });
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    t += 5 * 60_000;
    expect(await restart(deps, goodPin).handle({ pin: goodPin, action: transactions })).toMatchObject({
      ok: true,
    });
  });

  it('counts neither the refusals during a lockout nor their summing up as wrong PINs at a restart', async () => {
    const { desk, deps, goodPin, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    for (let i = 0; i < 3; i++) await desk.handle({ pin: wrongPin, action: transactions });
    t += 5 * 60_000;
    await desk.handle({ pin: wrongPin, action: transactions });
    const restarted = restart(deps, goodPin);
    for (let i = 0; i < 3; i++)
      expect(await restarted.handle({ pin: wrongPin, action: transactions })).toMatchObject({
        error: { code: 'OPERATOR_PIN' },
      });
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({ ok: true });
  });

  it('doubles the next lockout, also across a restart, until a good PIN', async () => {
    const { desk, deps, goodPin, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    t += 5 * 60_000;
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    const lockedAt = t;
    t += 60_000;
    const restarted = restart(deps, goodPin);
    // Ten minutes after the fifth wrong PIN of the second lockout in a row.
    t = lockedAt + 10 * 60_000 - 1;
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({
      error: { code: 'OPERATOR_LOCKED', lockedUntil: new Date(lockedAt + 10 * 60_000).toISOString() },
    });
    t += 1;
    expect(await restarted.handle({ pin: goodPin, action: transactions })).toMatchObject({ ok: true });
    // The good PIN starts the schedule again: five minutes.
    for (let i = 0; i < 5; i++) await restarted.handle({ pin: wrongPin, action: transactions });
    expect(await restart(deps, goodPin).handle({ pin: goodPin, action: transactions })).toMatchObject({
      error: { code: 'OPERATOR_LOCKED', lockedUntil: new Date(t + 5 * 60_000).toISOString() },
    });
  });

  /** A refund waiting behind another (operator mode runs one at a time) while wrong PINs come in. */
  function queuedBehindARefund() {
    const s = setup();
    let open: () => void = () => undefined;
    s.fake.submitGate = new Promise<void>((resolve) => (open = resolve));
    const refund = (amountMinor: number) =>
      s.desk.handle({ pin: s.goodPin, action: { type: 'refund', transactionId: 'S1', amountMinor } });
    const first = refund(100);
    const second = refund(200);
    const answers = async () => {
      await settle();
      s.fake.submitGate = undefined;
      open();
      return Promise.all([first, second]);
    };
    return { ...s, answers };
  }

  it('sends no refund or void asked for with a wrong PIN', async () => {
    const { desk, wrongPin, fake } = setup();
    for (const action of [
      { type: 'refund', transactionId: 'S1' },
      { type: 'void', transactionId: 'S1' },
    ] as const)
      expect(await desk.handle({ pin: wrongPin, action })).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN' },
      });
    expect(fake.sent).toEqual([]);
  });

  it('carries out a refund admitted by a good PIN when operator mode locks while it waits its turn', async () => {
    const { desk, wrongPin, answers, fake } = queuedBehindARefund();
    await settle();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    const [first, second] = await answers();
    expect(first).toMatchObject({ ok: true, value: { outcome: 'approved' } });
    expect(second).toMatchObject({ ok: true, value: { outcome: 'approved' } });
    expect(fake.sent.filter((s) => s.service === 'refund-payment').map((s) => s.amountMinor)).toEqual([
      100, 200,
    ]);
  });

  it('checks the PIN of a queued refund once: its turn resets no count of wrong PINs, as a restart reads it', async () => {
    const { desk, deps, goodPin, wrongPin, answers } = queuedBehindARefund();
    await settle();
    for (let i = 0; i < 4; i++) await desk.handle({ pin: wrongPin, action: transactions });
    await answers();
    const restarted = restart(deps, goodPin);
    // The fifth wrong PIN in a row since the last good one the audit log holds: locked, here as after a restart.
    for (const d of [desk, restarted])
      expect(await d.handle({ pin: wrongPin, action: transactions })).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN', lockedUntil: new Date(t + 5 * 60_000).toISOString() },
      });
  });
});

describe('OperatorDesk: an operator void whose answer was lost, resolved by recovery', () => {
  /** A void of S1 journaled with its answer lost, recorded by operator mode (or not), then resolved `how`. */
  function lostVoid(how: string, byOperator = true) {
    const s = setup();
    const entry = s.journal.begin(
      saleEntry('V1', { service: 'void-payment', referencedTransactionId: 'S1', transactionId: undefined }),
    );
    s.journal.recordOutcome(entry.id, { state: 'unknown' });
    if (byOperator)
      s.desk.audit.record({
        actor: 'operator',
        action: 'void',
        subject: 'S1',
        result: 'failed',
        code: 'UNKNOWN',
        details: { outcome: 'unknown', service: 'void-payment' },
      });
    s.journal.resolve(entry.id, how);
    const item = { entryId: entry.id, transactionId: 'S1', service: 'void-payment', resolution: how };
    return {
      ...s,
      item: { ...item, attempts: 1, needsOperator: how === 'not-voidable', at: now().toISOString() },
    };
  }

  it('records a void the gateway refused (not-voidable) as refused, once', () => {
    const { desk, item } = lostVoid('not-voidable');
    desk.followOnResolved(item);
    desk.followOnResolved(item);
    expect(log(desk).filter((r) => r.actor === 'system')).toEqual([
      {
        actor: 'system',
        action: 'void',
        subject: 'S1',
        result: 'refused',
        code: 'not-voidable',
        details: { outcome: 'rejected', entryId: item.entryId, service: 'void-payment' },
      },
    ]);
  });

  it('records nothing for a void operator mode did not send (a flow compensating its own payment)', () => {
    const { desk, item } = lostVoid('timeout-void', false);
    desk.followOnResolved(item);
    expect(log(desk)).toEqual([]);
  });
});

describe('OperatorDesk: a PIN file that cannot be used any more', () => {
  it('refuses every PIN with a typed error while the file is unusable, and counts none towards the lockout', async () => {
    const { deps, goodPin, wrongPin } = setup();
    const dir = mkdtempSync(join(tmpdir(), 'pt-desk-pin-'));
    dirs.push(dir);
    const file = join(dir, 'operator.pin');
    writeFileSync(file, `${goodPin}\n`, { mode: 0o600 });
    const lines: { msg: string }[] = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) },
    });
    const desk = new OperatorDesk({ ...deps, logger, pin: new OperatorPin(file, () => t) });
    chmodSync(file, 0o644);
    for (let i = 0; i < 5; i++)
      for (const pin of [goodPin, wrongPin])
        expect(await desk.handle({ pin, action: { type: 'transactions' } })).toMatchObject({
          ok: false,
          error: { code: 'SECRET_FILE_EXPOSED' },
        });
    expect(desk.admitCredit(goodPin)).toMatchObject({ ok: false, error: { code: 'SECRET_FILE_EXPOSED' } });
    chmodSync(file, 0o600);
    expect(await desk.handle({ pin: goodPin, action: { type: 'transactions' } })).toMatchObject({ ok: true });
    expect(desk.auditLog().map((r) => r.action)).toEqual(['sign-in']);
    // Said once in the log, not at each of the eleven refusals; and once that it is over.
    expect(lines.map((l) => l.msg)).toEqual([
      'the operator PIN file cannot be used: operator mode is closed',
      'the operator PIN file can be used again',
    ]);
  });
});

describe('OperatorDesk: PIN checks refused during a lockout', () => {
  const transactions = { type: 'transactions' } as const;

  it('says until when operator mode is locked', async () => {
    const { desk, goodPin, wrongPin } = setup();
    for (let i = 0; i < 4; i++) await desk.handle({ pin: wrongPin, action: transactions });
    const until = new Date(t + 5 * 60_000).toISOString();
    const fifth = await desk.handle({ pin: wrongPin, action: transactions });
    expect(fifth).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN', lockedUntil: until } });
    t += 60_000;
    const refused = await desk.handle({ pin: goodPin, action: transactions });
    expect(refused).toMatchObject({ ok: false, error: { code: 'OPERATOR_LOCKED', lockedUntil: until } });
    expect(!refused.ok && refused.error.message).toContain(until);
  });

  it('records the first refusal of a lockout and sums up the others in one record when it ends', async () => {
    const { desk, journal, goodPin, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    const until = new Date(t + 5 * 60_000).toISOString();
    for (let i = 0; i < 1000; i++) {
      t += 100;
      await desk.handle({ pin: i % 2 ? goodPin : wrongPin, action: transactions });
    }
    const rows = () => (journal.db.prepare('SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
    expect(rows()).toBe(6);
    t += 5 * 60_000;
    expect(await desk.handle({ pin: goodPin, action: transactions })).toMatchObject({ ok: true });
    expect(log(desk)).toEqual([
      ...Array<unknown>(5).fill(expect.objectContaining({ action: 'sign-in-failed', code: 'OPERATOR_PIN' })),
      {
        actor: 'operator',
        action: 'sign-in-failed',
        result: 'refused',
        code: 'OPERATOR_LOCKED',
        details: { requested: 'transactions', lockedUntil: until },
      },
      {
        actor: 'operator',
        action: 'sign-in-failed',
        result: 'refused',
        code: 'OPERATOR_LOCKED',
        details: { lockedUntil: until, refusedUnrecorded: 999 },
      },
      { actor: 'operator', action: 'sign-in', result: 'ok', details: { requested: 'transactions' } },
    ]);
    const stored = JSON.stringify(journal.db.prepare('SELECT * FROM audit_log').all());
    expect(stored).not.toContain(goodPin);
    expect(stored).not.toContain(wrongPin);
  });

  it('sums up the refusals of one lockout before the wrong PIN after it', async () => {
    const { desk, wrongPin } = setup();
    for (let i = 0; i < 5; i++) await desk.handle({ pin: wrongPin, action: transactions });
    for (let i = 0; i < 3; i++) await desk.handle({ pin: wrongPin, action: transactions });
    t += 5 * 60_000;
    await desk.handle({ pin: wrongPin, action: transactions });
    expect(desk.auditLog().map((r) => [r.code, r.details.refusedUnrecorded])).toEqual([
      ...Array<unknown>(5).fill(['OPERATOR_PIN', undefined]),
      ['OPERATOR_LOCKED', undefined],
      ['OPERATOR_LOCKED', 2],
      ['OPERATOR_PIN', undefined],
    ]);
  });
});

describe('OperatorDesk: a refund asked for twice', () => {
  it('moves money once for a refund submitted twice under one requestId, at once or after its answer', async () => {
    const { desk, goodPin, fake } = setup();
    const action = { type: 'refund', transactionId: 'S1', amountMinor: 250, requestId: 'R-1' } as const;
    const [first, second] = await Promise.all([
      desk.handle({ pin: goodPin, action }),
      desk.handle({ pin: goodPin, action }),
    ]);
    const third = await desk.handle({ pin: goodPin, action });
    expect(fake.sent.filter((s) => s.service === 'refund-payment').map((s) => s.amountMinor)).toEqual([250]);
    expect(first).toMatchObject({ ok: true, value: { type: 'refund', outcome: 'approved' } });
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(log(desk).filter((r) => r.action === 'refund')).toHaveLength(1);
  });

  it('refuses a requestId used again for another refund, and sends nothing for it', async () => {
    const { desk, goodPin, fake } = setup();
    await desk.handle({
      pin: goodPin,
      action: { type: 'refund', transactionId: 'S1', amountMinor: 250, requestId: 'R-1' },
    });
    const other = await desk.handle({
      pin: goodPin,
      action: { type: 'refund', transactionId: 'S1', amountMinor: 100, requestId: 'R-1' },
    });
    expect(other).toMatchObject({ ok: false, error: { code: 'REQUEST_ID_REUSED' } });
    expect(fake.sent.filter((s) => s.service === 'refund-payment')).toHaveLength(1);
  });

  it('carries out two different partial refunds up to what is left to refund, and no more', async () => {
    const { desk, goodPin, fake } = setup();
    const refund = (requestId: string, amountMinor: number) =>
      desk.handle({ pin: goodPin, action: { type: 'refund', transactionId: 'S1', amountMinor, requestId } });
    const [a, b] = await Promise.all([refund('R-1', 250), refund('R-2', 350)]);
    const c = await refund('R-3', 1);
    expect([a, b, c].map((r) => (r.ok && r.value.type === 'refund' ? r.value.code : r))).toEqual([
      'APPROVED',
      'APPROVED',
      'REFUND_EXCEEDS_CAPTURED',
    ]);
    expect(fake.sent.filter((s) => s.service === 'refund-payment').map((s) => s.amountMinor)).toEqual([
      250, 350,
    ]);
  });
});

describe('findTransaction', () => {
  it('counts every refund and void of a transaction, however many entries came after them', () => {
    const journal = openJournal(':memory:', { now });
    journals.push(journal);
    const approved = (transactionId: string, overrides: Parameters<typeof saleEntry>[1] = {}): void => {
      const entry = journal.begin(saleEntry(transactionId, overrides));
      journal.recordOutcome(entry.id, { state: 'approved', gatewayId: `G-${transactionId}` });
    };
    approved('OLD');
    approved('OLD-R1', { service: 'refund-payment', referencedTransactionId: 'OLD', amountMinor: 200 });
    // A busy terminal: more than a thousand entries since.
    for (let i = 0; i < 1_200; i++) approved(`LATER-${i}`);
    approved('OLD-R2', { service: 'refund-payment', referencedTransactionId: 'OLD', amountMinor: 100 });
    const options = {
      now: now(),
      timeZone: 'Europe/London',
      currency: 'GBP',
      authorizedTotal: () => undefined,
    };
    expect(findTransaction(journal, 'OLD', options)).toMatchObject({ amountMinor: 600, refundedMinor: 300 });
    expect(journal.referencing('OLD').map((e) => e.transactionId)).toEqual(['OLD-R1', 'OLD-R2']);
  });
});

/** The options the desk passes to findTransaction, for a terminal in GBP counting in the journal's amounts. */
const FIND = { timeZone: 'Europe/London', currency: 'GBP', authorizedTotal: () => undefined };

/** A journal holding the approved £6.00 sale S1, and a way to add entries in a given state. */
function journalWithSale() {
  const journal = openJournal(':memory:', { now });
  journals.push(journal);
  const add = (
    transactionId: string,
    overrides: Parameters<typeof saleEntry>[1],
    state: 'approved' | 'declined' | 'rejected' | 'unknown' | 'sent' | 'pending',
  ) => {
    const entry = journal.begin(saleEntry(transactionId, overrides));
    if (state === 'sent') journal.markSent(entry.id);
    else if (state !== 'pending')
      journal.recordOutcome(entry.id, {
        state,
        ...(state === 'approved' ? { gatewayId: `G-${transactionId}` } : {}),
      });
    return entry;
  };
  add('S1', {}, 'approved');
  const find = (transactionId = 'S1') => {
    const found = findTransaction(journal, transactionId, { ...FIND, now: now() });
    if (!found) throw new Error(`${transactionId} not found`);
    return found;
  };
  /** The operator machine's plan for a refund (of `amountMinor`, default what is left) or a void of `transactionId`. */
  const plan = (type: 'refund' | 'void', transactionId = 'S1', amountMinor?: number) =>
    operatorService(
      type === 'void'
        ? { type, transactionId }
        : { type, transactionId, ...(amountMinor !== undefined ? { amountMinor } : {}) },
      find(transactionId),
    );
  return { journal, add, find, plan };
}

describe('findTransaction and the operator plan: voided payments', () => {
  it('neither refunds nor voids again a sale the operator voided', () => {
    const { add, find, plan } = journalWithSale();
    add('V1', { service: 'void-payment', referencedTransactionId: 'S1' }, 'approved');
    expect(find()).toMatchObject({ voided: true, voidable: false });
    expect(plan('refund')).toMatchObject({ code: 'ALREADY_VOIDED' });
    expect(plan('refund', 'S1', 100)).toMatchObject({ code: 'ALREADY_VOIDED' });
    expect(plan('void')).toMatchObject({ code: 'ALREADY_VOIDED' });
  });

  it('counts a void of a capture finished by recovery (resolved by a timeout void)', () => {
    const { journal, add, find, plan } = journalWithSale();
    add('C1', { service: 'capture' }, 'approved');
    const v = add('V1', { service: 'void-capture', referencedTransactionId: 'C1' }, 'unknown');
    const attempt = add(
      'TV1',
      { service: 'timeout-void', referencedTransactionId: 'C1', resolvesEntryId: v.id },
      'approved',
    );
    journal.resolve(v.id, 'timeout-void', attempt.id);
    expect(find('C1')).toMatchObject({ voided: true, voidable: false });
    expect(plan('refund', 'C1')).toMatchObject({ code: 'ALREADY_VOIDED' });
    expect(plan('void', 'C1')).toMatchObject({ code: 'ALREADY_VOIDED' });
  });

  it('does not count a void that moved nothing: declined, rejected, or refused by its timeout void', () => {
    const { journal, add, find, plan } = journalWithSale();
    add('V1', { service: 'void-payment', referencedTransactionId: 'S1' }, 'declined');
    add('V2', { service: 'void-payment', referencedTransactionId: 'S1' }, 'rejected');
    const v3 = add('V3', { service: 'void-payment', referencedTransactionId: 'S1' }, 'unknown');
    journal.resolve(v3.id, 'not-voidable');
    expect(find()).toMatchObject({ voided: false, voidable: true });
    expect(plan('void')).toMatchObject({ service: 'void-payment', amountMinor: 600 });
  });
});

describe('findTransaction and the operator plan: a void awaiting its outcome', () => {
  it.each(['pending', 'sent', 'unknown'] as const)(
    'blocks a refund and a second void while a void is %s, without counting the sale as given back',
    (state) => {
      const { add, find, plan } = journalWithSale();
      add('V1', { service: 'void-payment', referencedTransactionId: 'S1' }, state);
      // The void may yet be refused (FAILED, NOT_VOIDABLE): nothing is given back until it is approved.
      expect(amountStanding(find())).toBe(600);
      // Neither a refund nor a second void goes out before its outcome is known.
      expect(plan('refund')).toMatchObject({ code: 'VOID_PENDING' });
      expect(plan('refund', 'S1', 100)).toMatchObject({ code: 'VOID_PENDING' });
      expect(plan('void')).toMatchObject({ code: 'VOID_PENDING' });
      expect(find()).toMatchObject({ voided: false, voidPending: true, voidable: false });
    },
  );

  it('gives the sale back once the void is approved, and lets it be refunded once the void is refused', () => {
    const { journal, add, find, plan } = journalWithSale();
    const v1 = add('V1', { service: 'void-payment', referencedTransactionId: 'S1' }, 'sent');
    journal.recordOutcome(v1.id, { state: 'declined', reason: 'FAILED' });
    expect(find()).toMatchObject({ voided: false, voidPending: false, voidable: true });
    expect(plan('refund')).toEqual({ service: 'refund-payment', amountMinor: 600 });
    add('V2', { service: 'void-payment', referencedTransactionId: 'S1' }, 'approved');
    expect(find()).toMatchObject({ voided: true, voidPending: false, voidable: false });
    expect(amountStanding(find())).toBe(0);
    expect(plan('refund')).toMatchObject({ code: 'ALREADY_VOIDED' });
  });

  it('lists a sale whose void awaits its outcome as such, not as voided, with no action', async () => {
    const { desk, journal, goodPin } = setup();
    const approved = (transactionId: string): void => {
      const entry = journal.begin(saleEntry(transactionId));
      journal.recordOutcome(entry.id, { state: 'approved', gatewayId: `G-${transactionId}` });
    };
    approved('S1');
    const v = journal.begin(saleEntry('V1', { service: 'void-payment', referencedTransactionId: 'S1' }));
    journal.recordOutcome(v.id, { state: 'unknown' });
    const r = await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    const listed = r.ok && r.value.type === 'transactions' ? r.value.transactions : [];
    expect(listed.find((t) => t.transactionId === 'S1')).toMatchObject({
      state: 'void pending',
      allowed: [],
    });
  });
});

describe('findTransaction and the operator plan: what is left to refund', () => {
  it.each(['pending', 'sent', 'unknown'] as const)(
    'counts a refund whose outcome is not known yet (%s): it may have gone through',
    (state) => {
      const { add, find, plan } = journalWithSale();
      add('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 600 }, state);
      expect(find()).toMatchObject({ refundedMinor: 600 });
      expect(plan('refund')).toMatchObject({ code: 'REFUND_EXCEEDS_CAPTURED' });
    },
  );

  it('counts an approved refund until a void of it has gone through, and not a refused one', () => {
    const { journal, add, find, plan } = journalWithSale();
    add('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 100 }, 'approved');
    add('R2', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 }, 'approved');
    add('R3', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 300 }, 'declined');
    const v1 = add('V1', { service: 'void-refund', referencedTransactionId: 'R1' }, 'unknown');
    expect(find()).toMatchObject({ refundedMinor: 300 });
    expect(plan('refund', 'S1', 301)).toMatchObject({ code: 'REFUND_EXCEEDS_CAPTURED' });
    // Recovery finishes the void of R1 with a timeout void: its 1.00 can be refunded again.
    journal.resolve(v1.id, 'timeout-void');
    expect(find()).toMatchObject({ refundedMinor: 200 });
    expect(plan('refund')).toEqual({ service: 'refund-payment', amountMinor: 400 });
  });
});

describe('findTransaction and the operator plan: voids of refunded payments', () => {
  it.each(['approved', 'pending', 'sent', 'unknown'] as const)(
    'does not plan a void of a sale with a refund that stands or may stand (%s)',
    (state) => {
      const { add, plan } = journalWithSale();
      add('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 }, state);
      // Voiding it would give back the 6.00 on top of the 2.00 refunded (the gateway refuses: NOT_VOIDABLE).
      expect(plan('void')).toMatchObject({ code: 'REFUNDS_STANDING' });
    },
  );

  it('plans the void once the refunds are voided, and the void of a refund itself', () => {
    const { add, plan } = journalWithSale();
    add('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 }, 'approved');
    add('R2', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 300 }, 'declined');
    expect(plan('void', 'R1')).toEqual({ service: 'void-refund', amountMinor: 200 });
    add('V1', { service: 'void-refund', referencedTransactionId: 'R1' }, 'approved');
    expect(plan('void')).toEqual({ service: 'void-payment', amountMinor: 600 });
  });

  it('lists a partly refunded sale with a refund and no void, and its refund with a void', async () => {
    const { desk, journal, goodPin } = setup();
    const approved = (transactionId: string, overrides: Parameters<typeof saleEntry>[1] = {}): void => {
      const entry = journal.begin(saleEntry(transactionId, overrides));
      journal.recordOutcome(entry.id, { state: 'approved', gatewayId: `G-${transactionId}` });
    };
    approved('S1');
    approved('R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 });
    const r = await desk.handle({ pin: goodPin, action: { type: 'transactions' } });
    const listed = r.ok && r.value.type === 'transactions' ? r.value.transactions : [];
    expect(listed.map((t) => [t.transactionId, t.allowed])).toEqual([
      ['R1', ['void']],
      ['S1', ['refund']],
    ]);
  });
});

describe('the amounts operator mode lists are the ones a refund or void sends', () => {
  /** The transactions as the panel receives them. */
  async function listed(desk: OperatorDesk, pin: string) {
    const r = await desk.handle({ pin, action: { type: 'transactions', limit: 10 } });
    return r.ok && r.value.type === 'transactions' ? r.value.transactions : [];
  }
  const approved = (journal: SqliteJournal, tx: string, overrides: Parameters<typeof saleEntry>[1] = {}) => {
    const entry = journal.begin(saleEntry(tx, overrides));
    journal.recordOutcome(entry.id, { state: 'approved', gatewayId: `G-${tx}` });
  };

  it('lists what a full refund sends once part of the payment was refunded', async () => {
    const { desk, journal, goodPin } = setup();
    approved(journal, 'S1');
    approved(journal, 'R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 200 });
    const sale = (await listed(desk, goodPin)).find((t) => t.transactionId === 'S1');
    const plan = operatorService(
      { type: 'refund', transactionId: 'S1' },
      findTransaction(journal, 'S1', { ...FIND, now: now() })!,
    );
    // The panel confirms "refund of <listed amount>" for a full refund: it must be what is sent, not the 6.00 paid.
    expect(sale?.amount).toEqual({ minor: 400, currency: 'GBP', text: '£4.00' });
    expect(plan).toEqual({ service: 'refund-payment', amountMinor: 400 });
  });

  it('lists a converted sale (family A: journaled in the card currency) in the local unit its refunds count in', async () => {
    // 10.00 EUR paid as 1612 JPY (DCC, processor family A: the journal holds the gateway's amount).
    const toLocal = (_tx: string, minor: number, currency: string): LocalAmount =>
      currency === 'JPY'
        ? { minor: Math.round((minor * 1000) / 1612), currency: 'EUR' }
        : { minor, currency };
    const { desk, journal, goodPin } = setup(undefined, { currency: 'EUR', toLocal });
    approved(journal, 'S1', { amountMinor: 1612, currency: 'JPY' });
    const [row] = await listed(desk, goodPin);
    const planned = findTransaction(journal, 'S1', { ...FIND, currency: 'EUR', now: now(), toLocal })!;
    // The panel reads a typed refund amount in the listed currency and sends it as `amountMinor`, which the operator
    // machine counts in `planned.currency`: the same unit.
    expect(row?.amount).toMatchObject({ minor: 1000, currency: 'EUR' });
    expect(planned).toMatchObject({ amountMinor: 1000, currency: 'EUR' });
  });

  it('lists a refund and a credit at their amount, and other entries at the amount they requested', async () => {
    const { desk, journal, goodPin } = setup();
    approved(journal, 'S1');
    approved(journal, 'R1', { service: 'refund-payment', referencedTransactionId: 'S1', amountMinor: 250 });
    approved(journal, 'A1', { service: 'preauth', comments: 'Parking Authorization', amountMinor: 900 });
    const amounts = Object.fromEntries(
      (await listed(desk, goodPin)).map((t) => [t.transactionId, t.amount?.minor]),
    );
    expect(amounts).toEqual({ S1: 350, R1: 250, A1: 900 });
  });
});

describe('operator mode: a tap-and-go fee the tariff could not price in its hold’s currency', () => {
  /**
   * A hold authorized in GBP, released at an exit after terminal.currency became EUR: the host records the whole fee
   * as a `fee-shortfall` with code FEE_NOT_COMPUTABLE, the authorization its subject (src/host/terminal-host.ts).
   */
  function releasedHold(desk: OperatorDesk, journal: SqliteJournal): void {
    const hold = journal.begin(
      saleEntry('A1', { service: 'preauth', comments: 'Parking Auth', amountMinor: 598, currency: 'GBP' }),
    );
    journal.recordOutcome(hold.id, { state: 'approved', gatewayId: 'G-A1' });
    desk.audit.feeNotComputable({
      authorizationTransactionId: 'A1',
      authorizedMinor: 598,
      holdCurrency: 'GBP',
      feeMinor: 300,
      currency: 'EUR',
    });
  }

  async function listedHold(desk: OperatorDesk, pin: string) {
    const r = await desk.handle({ pin, action: { type: 'transactions', limit: 10 } });
    return (r.ok && r.value.type === 'transactions' ? r.value.transactions : []).find(
      (t) => t.transactionId === 'A1',
    );
  }

  it('states on the hold that its fee was not collected and why, in the terminal’s language', async () => {
    const { desk, journal, goodPin } = setup(undefined, { currency: 'EUR' });
    releasedHold(desk, journal);
    const hold = await listedHold(desk, goodPin);
    expect(hold?.shortfall).toEqual({ minor: 300, currency: 'EUR', text: '€3.00' });
    expect(hold?.note).toEqual({
      code: 'FEE_NOT_COMPUTABLE',
      text: 'Fee of €3.00 not collected: the hold was in GBP, which the tariff cannot price. The hold was released and nothing was charged.',
      lang: 'en-GB',
    });
  });

  it.each([
    ['de-DE', translator('de_DE')],
    ['ar-AE', translator('ar_AE')],
  ])('says it in %s from its catalogue', async (locale, t) => {
    const { desk, journal, goodPin } = setup(undefined, { currency: 'EUR', locale });
    releasedHold(desk, journal);
    expect((await listedHold(desk, goodPin))?.note).toEqual({
      code: 'FEE_NOT_COMPUTABLE',
      text: t.t('operator.feeNotComputable', { fee: { minor: 300, currency: 'EUR' }, holdCurrency: 'GBP' }),
      lang: locale,
    });
  });
});

describe('operator mode: voided payments, payments recovery found standing, converted refunds', () => {
  async function listed(desk: OperatorDesk, pin: string) {
    const r = await desk.handle({ pin, action: { type: 'transactions', limit: 10 } });
    return r.ok && r.value.type === 'transactions' ? r.value.transactions : [];
  }
  const approved = (journal: SqliteJournal, tx: string, overrides: Parameters<typeof saleEntry>[1] = {}) => {
    const entry = journal.begin(saleEntry(tx, overrides));
    journal.recordOutcome(entry.id, { state: 'approved', gatewayId: `G-${tx}` });
  };
  /** A sale whose answer was lost, resolved by recovery: its timeout void was refused NOT_VOIDABLE. */
  const notVoidable = (journal: SqliteJournal, tx: string, gatewayId?: string) => {
    const sale = journal.begin(saleEntry(tx));
    journal.recordOutcome(sale.id, { state: 'unknown', ...(gatewayId !== undefined ? { gatewayId } : {}) });
    const attempt = journal.begin(
      saleEntry(`TV-${tx}`, {
        service: 'timeout-void',
        comments: 'VOID Timeout',
        referencedTransactionId: tx,
        resolvesEntryId: sale.id,
        amountMinor: undefined,
        currency: undefined,
      }),
    );
    journal.recordOutcome(attempt.id, { state: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 });
    journal.resolve(sale.id, 'not-voidable', attempt.id);
  };

  it('lists a voided sale as voided, with no action', async () => {
    const { desk, journal, goodPin } = setup();
    approved(journal, 'S1');
    approved(journal, 'V1', { service: 'void-payment', referencedTransactionId: 'S1' });
    const sale = (await listed(desk, goodPin)).find((t) => t.transactionId === 'S1');
    expect(sale).toMatchObject({ state: 'voided', allowed: [] });
  });

  it('offers no void again once the gateway refused one as NOT_VOIDABLE (settled already): a refund instead', async () => {
    const { desk, journal, goodPin } = setup();
    approved(journal, 'S4');
    const refused = journal.begin(
      saleEntry('V4', {
        service: 'void-payment',
        comments: 'VOID Payment',
        referencedTransactionId: 'S4',
        amountMinor: undefined,
        currency: undefined,
      }),
    );
    journal.recordOutcome(refused.id, { state: 'rejected', reason: 'NOT_VOIDABLE', httpStatus: 400 });
    expect(findTransaction(journal, 'S4', { ...FIND, now: now() })).toMatchObject({
      voided: false,
      voidable: false,
    });
    const row = (await listed(desk, goodPin)).find((t) => t.transactionId === 'S4');
    expect(row).toMatchObject({ allowed: ['refund'] });
  });

  it('finds a sale recovery resolved as not-voidable: it stands, so it is refunded, not voided', async () => {
    const { desk, journal, goodPin } = setup();
    notVoidable(journal, 'S2', 'G-S2');
    expect(findTransaction(journal, 'S2', { ...FIND, now: now() })).toMatchObject({
      transactionId: 'S2',
      gatewayId: 'G-S2',
      service: 'sale',
      amountMinor: 600,
      voided: false,
      voidable: false,
    });
    const row = (await listed(desk, goodPin)).find((t) => t.transactionId === 'S2');
    expect(row).toMatchObject({ state: 'resolved (not-voidable)', allowed: ['refund'] });
    const plan = (type: 'refund' | 'void') =>
      operatorService(
        { type, transactionId: 'S2' },
        findTransaction(journal, 'S2', { ...FIND, now: now() })!,
      );
    expect(plan('refund')).toEqual({ service: 'refund-payment', amountMinor: 600 });
    // Recovery's timeout void was refused: past the settlement cut-off.
    expect(plan('void')).toMatchObject({ code: 'NOT_VOIDABLE' });
  });

  it('finds a not-voidable sale whose gateway id was never learnt, and says why it cannot be refunded here', async () => {
    const { desk, journal, goodPin } = setup();
    notVoidable(journal, 'S3');
    expect(findTransaction(journal, 'S3', { ...FIND, now: now() })).toMatchObject({
      transactionId: 'S3',
      voided: false,
      voidable: false,
    });
    const row = (await listed(desk, goodPin)).find((t) => t.transactionId === 'S3');
    expect(row).toMatchObject({ state: 'resolved (not-voidable)', allowed: [] });
    // A refund goes to the payment's gateway id (gateway.md §7): the terminal cannot send one.
    expect(
      operatorService(
        { type: 'refund', transactionId: 'S3' },
        findTransaction(journal, 'S3', { ...FIND, now: now() })!,
      ),
    ).toMatchObject({ code: 'GATEWAY_ID_UNKNOWN' });
  });

  it('lists a refund of a converted payment (family A: journaled in the card currency) in the local currency', async () => {
    // 10.00 EUR paid as 1612 JPY; the conversion terms are kept for the authorization: the sale, or the pre-authorization
    // a capture captured.
    const toLocal = (tx: string, minor: number, currency: string): LocalAmount =>
      (tx === 'S1' || tx === 'A1') && currency === 'JPY'
        ? { minor: Math.round((minor * 1000) / 1612), currency: 'EUR' }
        : { minor, currency };
    const { desk, journal, goodPin } = setup(undefined, { currency: 'EUR', toLocal });
    approved(journal, 'S1', { amountMinor: 1612, currency: 'JPY' });
    approved(journal, 'R1', {
      service: 'refund-payment',
      referencedTransactionId: 'S1',
      amountMinor: 806,
      currency: 'JPY',
    });
    approved(journal, 'A1', {
      service: 'preauth',
      comments: 'Parking Authorization',
      amountMinor: 1612,
      currency: 'JPY',
    });
    approved(journal, 'C1', {
      service: 'capture',
      referencedTransactionId: 'A1',
      amountMinor: 1612,
      currency: 'JPY',
    });
    approved(journal, 'RC1', {
      service: 'refund-capture',
      referencedTransactionId: 'C1',
      amountMinor: 403,
      currency: 'JPY',
    });
    const amounts = Object.fromEntries(
      (await listed(desk, goodPin)).map((t) => [t.transactionId, [t.amount?.minor, t.amount?.currency]]),
    );
    expect(amounts).toMatchObject({
      R1: [500, 'EUR'],
      RC1: [250, 'EUR'],
      S1: [500, 'EUR'],
      C1: [750, 'EUR'],
    });
    expect(findTransaction(journal, 'R1', { ...FIND, currency: 'EUR', now: now(), toLocal })).toMatchObject({
      amountMinor: 500,
      currency: 'EUR',
    });
  });
});

describe('OperatorDesk: stored payments not collected in full after forwarding', () => {
  /** Two payments stored offline, forwarded and declined by the gateway (EXPIRED_CARD). */
  async function declinedTwo(journal: SqliteJournal): Promise<void> {
    const queue = new OfflineQueue(journal, {
      policy: 'prefer-online',
      limits: parseConfig({}).offline,
      keyProvider: staticKeyProvider(Buffer.alloc(32, 7)),
      now,
    });
    for (const [transactionId, amountMinor] of [
      ['OFF1', 1250],
      ['OFF2', 300],
    ] as const)
      queue.store({
        transactionId,
        service: 'sale',
        comments: 'Parking Sale',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from('{"pointOfSaleInformation":{"trackData":";4111111111111111=2912101?"}}'),
        amountMinor,
        currency: 'GBP',
        entryMode: 'contactless',
        fingerprint: `card-${transactionId}`,
        maskedPan: '411111******1111',
      });
    const declining = {
      transmit: () =>
        Promise.resolve({ kind: 'declined', status: 'DECLINED', reason: 'EXPIRED_CARD' } as const),
    };
    await queue.forwardPending(new JournaledSender(journal, declining));
  }

  it('lists them and the transactions in terminal.locale written either way the configuration takes it', async () => {
    // `de_DE` (the catalogues' form) and `de-DE` (BCP 47) are both valid terminal.locale values (src/config/schema.ts).
    for (const locale of ['de_DE', 'de-DE']) {
      const { desk, journal, goodPin } = setup(undefined, { locale });
      await declinedTwo(journal);
      const sale = journal.begin(saleEntry('S1'));
      journal.recordOutcome(sale.id, { state: 'approved', gatewayId: 'G-S1' });
      const declines = await desk.handle({ pin: goodPin, action: { type: 'offline-declines' } });
      expect(
        declines.ok && declines.value.type === 'offline-declines'
          ? declines.value.declines.map((d) => d.amount.text)
          : declines,
        locale,
      ).toEqual(['12,50\u00a0£', '3,00\u00a0£']);
      const listed = await desk.handle({ pin: goodPin, action: { type: 'transactions', limit: 10 } });
      expect(
        listed.ok && listed.value.type === 'transactions'
          ? listed.value.transactions.find((t) => t.transactionId === 'S1')?.amount?.text
          : listed,
        locale,
      ).toBe('6,00\u00a0£');
    }
  });

  it('lists them with no card data but the masked number, and takes one off once acknowledged (audited)', async () => {
    const { desk, journal, goodPin } = setup();
    await declinedTwo(journal);
    const listed = await desk.handle({ pin: goodPin, action: { type: 'offline-declines' } });
    expect(listed).toEqual({
      ok: true,
      value: {
        type: 'offline-declines',
        declines: [
          {
            transactionId: 'OFF1',
            amount: { minor: 1250, currency: 'GBP', text: '£12.50' },
            maskedPan: '411111******1111',
            state: 'declined',
            reason: 'EXPIRED_CARD',
            storedAt: '2030-01-01T08:00:00.000Z',
            forwardedAt: '2030-01-01T08:00:00.000Z',
          },
          expect.objectContaining({
            transactionId: 'OFF2',
            amount: { minor: 300, currency: 'GBP', text: '£3.00' },
          }),
        ],
      },
    });
    expect(JSON.stringify(listed)).not.toContain('4111111111111111');

    const done = await desk.handle({
      pin: goodPin,
      action: { type: 'offline-acknowledge', transactionId: 'OFF1' },
    });
    expect(done).toMatchObject({
      ok: true,
      value: {
        type: 'offline-acknowledge',
        transactionId: 'OFF1',
        acknowledged: true,
        declines: [{ transactionId: 'OFF2' }],
      },
    });
    expect(
      offlineQueueStatus(journal, { policy: 'prefer-online', limits: parseConfig({}).offline })
        .declinedAfterForward,
    ).toBe(1);
    // Seen already: nothing changes, and the refusal is recorded too.
    const again = await desk.handle({
      pin: goodPin,
      action: { type: 'offline-acknowledge', transactionId: 'OFF1' },
    });
    expect(again).toMatchObject({
      ok: true,
      value: { acknowledged: false, declines: [{ transactionId: 'OFF2' }] },
    });
    expect(log(desk).filter((r) => r.action === 'queue-acknowledge')).toEqual([
      {
        actor: 'operator',
        action: 'queue-acknowledge',
        subject: 'OFF1',
        result: 'ok',
        code: 'ACKNOWLEDGED',
        details: {},
      },
      {
        actor: 'operator',
        action: 'queue-acknowledge',
        subject: 'OFF1',
        result: 'refused',
        code: 'NOT_AWAITING_ACKNOWLEDGEMENT',
        details: {},
      },
    ]);
  });

  it('refuses both without the PIN, and acknowledges nothing', async () => {
    const { desk, journal, wrongPin } = setup();
    await declinedTwo(journal);
    for (const action of [
      { type: 'offline-declines' as const },
      { type: 'offline-acknowledge' as const, transactionId: 'OFF1' },
    ])
      expect(await desk.handle({ pin: wrongPin, action })).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN' },
      });
    expect(
      offlineQueueStatus(journal, { policy: 'prefer-online', limits: parseConfig({}).offline })
        .declinedAfterForward,
    ).toBe(2);
  });
});

describe('OperatorDesk open stays (passback reset)', () => {
  const HOLD: HoldRecord = {
    holdId: 'H1',
    fingerprint: 'fp-1',
    maskedPan: '411111******1111',
    gatewayId: 'G-H1',
    transactionId: 'H1',
    authorizedMinor: 598,
    currency: 'GBP',
    cardRef: 'card-1',
    includeEmvTags: true,
    enteredAtMs: T0 - 3_600_000,
    expiresAtMs: T0 + 20 * 3_600_000,
  };

  /** A desk whose hold watch answers each release with the next of `releases`. */
  function withStays(standing: HoldStanding, releases: HoldRelease[]) {
    const asked: string[] = [];
    const s = setup(
      undefined,
      {},
      {
        list: () => [
          { hold: HOLD, standing },
          {
            hold: { ...HOLD, holdId: 'H2', transactionId: 'H2' },
            standing: 'settling',
            doubtLinkId: 'PT1_GATE-L1',
          },
        ],
        release: (holdId) => {
          asked.push(holdId);
          return releases.shift() ?? { kind: 'not-found' };
        },
      },
    );
    return { ...s, asked };
  }
  const started = (result: HoldExpiryResult | undefined): HoldRelease => ({
    kind: 'started',
    hold: HOLD,
    result: Promise.resolve(result),
  });

  it('lists the open stays with the masked card only, which may be released, and a payment by phone in doubt', async () => {
    const { desk, goodPin } = withStays('open', []);
    const listed = await desk.handle({ pin: goodPin, action: { type: 'stays' } });
    expect(listed).toEqual({
      ok: true,
      value: {
        type: 'stays',
        stays: [
          {
            holdId: 'H1',
            maskedPan: '411111******1111',
            enteredAt: new Date(T0 - 3_600_000).toISOString(),
            held: { minor: 598, currency: 'GBP', text: '£5.98' },
            state: 'open',
            allowed: ['release'],
          },
          expect.objectContaining({
            holdId: 'H2',
            state: 'settling',
            phonePaymentInDoubt: 'PT1_GATE-L1',
            allowed: [],
          }),
        ],
      },
    });
    expect(JSON.stringify(listed)).not.toMatch(/fp-1|card-1|G-H1/);
  });

  it('releases a hold by the hold watch and records it; a second release is refused and recorded', async () => {
    const { desk, goodPin, asked } = withStays('open', [
      started({ holdId: 'H1', outcome: 'reversed', transactionId: 'R1' }),
      { kind: 'not-found' },
    ]);
    expect(await desk.handle({ pin: goodPin, action: { type: 'hold-release', holdId: 'H1' } })).toEqual({
      ok: true,
      value: {
        type: 'hold-release',
        holdId: 'H1',
        outcome: 'released',
        code: 'APPROVED',
        message: 'the hold was reversed: nothing charged, the card may enter again',
        transactionId: 'R1',
        reversed: { minor: 598, currency: 'GBP', text: '£5.98' },
      },
    });
    expect(await desk.handle({ pin: goodPin, action: { type: 'hold-release', holdId: 'H1' } })).toMatchObject(
      {
        ok: false,
        error: { code: 'HOLD_NOT_FOUND' },
      },
    );
    expect(asked).toEqual(['H1', 'H1']);
    expect(log(desk).filter((r) => r.action === 'hold-release')).toEqual([
      {
        actor: 'operator',
        action: 'hold-release',
        subject: 'H1',
        result: 'ok',
        code: 'APPROVED',
        details: { outcome: 'released', sentTransactionId: 'R1' },
      },
      {
        actor: 'operator',
        action: 'hold-release',
        subject: 'H1',
        result: 'refused',
        code: 'HOLD_NOT_FOUND',
        details: {},
      },
    ]);
  });

  it("releases a stay for the fleet by the same path, recorded with the fleet command's id as who asked", async () => {
    const { desk, asked } = withStays('open', [
      started({ holdId: 'H1', outcome: 'reversed', transactionId: 'R1' }),
      { kind: 'not-found' },
    ]);
    expect(desk.openStays(100).map((s) => [s.holdId, s.state])).toEqual([
      ['H1', 'open'],
      ['H2', 'settling'],
    ]);
    expect(await desk.releaseStay('H1', { actor: 'fleet', commandId: 'cmd-1' })).toMatchObject({
      ok: true,
      value: { outcome: 'released', code: 'APPROVED', reversed: { minor: 598, currency: 'GBP' } },
    });
    expect(await desk.releaseStay('H1', { actor: 'fleet', commandId: 'cmd-2' })).toMatchObject({
      ok: false,
      error: { code: 'HOLD_NOT_FOUND' },
    });
    expect(asked).toEqual(['H1', 'H1']);
    expect(log(desk).filter((r) => r.action === 'hold-release')).toEqual([
      {
        actor: 'fleet',
        action: 'hold-release',
        subject: 'H1',
        result: 'ok',
        code: 'APPROVED',
        details: { outcome: 'released', sentTransactionId: 'R1', commandId: 'cmd-1' },
      },
      {
        actor: 'fleet',
        action: 'hold-release',
        subject: 'H1',
        result: 'refused',
        code: 'HOLD_NOT_FOUND',
        details: { commandId: 'cmd-2' },
      },
    ]);
  });

  it('refuses a hold being settled or whose release is decided, with typed codes', async () => {
    const { desk, goodPin } = withStays('open', [{ kind: 'settling' }, { kind: 'releasing' }]);
    for (const code of ['HOLD_BUSY', 'HOLD_RELEASING'])
      expect(
        await desk.handle({ pin: goodPin, action: { type: 'hold-release', holdId: 'H1' } }),
      ).toMatchObject({ ok: false, error: { code } });
  });

  it('tells each end of the reversal: refused for now, refused, unknown, the host stopped', async () => {
    const { desk, goodPin } = withStays('open', [
      started({ holdId: 'H1', outcome: 'later', reason: 'PROCESSOR_UNAVAILABLE', transactionId: 'R1' }),
      started({ holdId: 'H1', outcome: 'failed', lastKind: 'rejected', reason: 'INVALID_DATA' }),
      started({ holdId: 'H1', outcome: 'failed', lastKind: 'unknown' }),
      started(undefined),
    ]);
    const outcomes = [];
    for (let i = 0; i < 4; i++) {
      const r = await desk.handle({ pin: goodPin, action: { type: 'hold-release', holdId: 'H1' } });
      outcomes.push(r.ok && r.value.type === 'hold-release' ? `${r.value.outcome}:${r.value.code}` : r);
    }
    expect(outcomes).toEqual([
      'later:PROCESSOR_UNAVAILABLE',
      'refused:INVALID_DATA',
      'unknown:OUTCOME_UNKNOWN',
      'unknown:OUTCOME_UNKNOWN',
    ]);
    expect(
      log(desk)
        .filter((r) => r.action === 'hold-release')
        .map((r) => `${r.result}:${r.code ?? ''}`),
    ).toEqual([
      'failed:PROCESSOR_UNAVAILABLE',
      'refused:INVALID_DATA',
      'failed:OUTCOME_UNKNOWN',
      'failed:OUTCOME_UNKNOWN',
    ]);
  });

  it('lists and releases nothing without the right PIN', async () => {
    const { desk, wrongPin, asked } = withStays('open', [started({ holdId: 'H1', outcome: 'reversed' })]);
    for (const action of [{ type: 'stays' }, { type: 'hold-release', holdId: 'H1' }] as const)
      expect(await desk.handle({ pin: wrongPin, action })).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN' },
      });
    expect(asked).toEqual([]);
    expect(log(desk).map((r) => `${r.action}:${r.code ?? ''}`)).toEqual([
      'sign-in-failed:OPERATOR_PIN',
      'sign-in-failed:OPERATOR_PIN',
    ]);
  });
});
