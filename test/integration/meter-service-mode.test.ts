import { afterEach, describe, expect, it } from 'vitest';
import { HostFleetTerminal } from '../../src/host/fleet-terminal.js';
import { silentLogger } from '../../src/log/index.js';
import {
  chargedInLedger,
  modelConfig,
  openAuthorizations,
  sendEvent,
  startModelHost,
  waitForScreen,
  type ModelHost,
} from './models-harness.js';

/**
 * Service mode while a customer's meter session holds their card: the operator (operator mode, or the fleet's
 * `out-of-service`, which `parking-terminal fleet send` issues) is refused with BUSY and the reason, and the session
 * ends as usual, its fee captured and the rest released. Once the customer is done, service mode goes on — with cars
 * still inside a tap-and-go car park too, which the restarts' stricter idle rule would wait for.
 */

const hosts: ModelHost[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
});

describe('service mode during a meter session', () => {
  it('is refused BUSY with the reason while the session is open, and the session still ends and captures', async () => {
    const h = await startModelHost(modelConfig('meter'));
    hosts.push(h);
    const pin = h.host.generatedOperatorPin ?? '';
    const fleet = new HostFleetTerminal(h.host, {
      configFile: undefined,
      cwd: process.cwd(),
      logger: silentLogger(),
      restart: () => undefined,
    });
    await sendEvent(h.host, { type: 'START' });
    await sendEvent(h.host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(h.host, { type: 'CONFIRM' });
    await waitForScreen(h.host, (s) => s.customer.screen === 'session', 'the session');

    const desk = await h.host.operator({
      pin,
      action: { type: 'service', task: 'on', reason: 'Works on the street' },
    });
    expect(desk).toMatchObject({
      ok: true,
      value: {
        type: 'service',
        task: 'on',
        outcome: 'refused',
        code: 'BUSY',
        message: expect.stringContaining('a customer session is in progress') as string,
      },
    });
    expect(await fleet.execute('out-of-service', { notice: 'Works' }, { id: 'C1' })).toMatchObject({
      ok: false,
      code: 'BUSY',
      message: expect.stringContaining('a customer session is in progress') as string,
    });
    const still = await h.host.snapshot();
    expect(still.ok && still.value.customer.screen).toBe('session');
    expect(h.host.status().outOfService).toBeUndefined();

    h.clock.offsetMs = 45 * 60_000;
    await sendEvent(h.host, { type: 'END_SESSION' });
    const ended = await waitForScreen(
      h.host,
      (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
      'the end of the session',
    );
    expect(ended.customer.screen).toBe('approved');
    // 45 minutes at 1.50 per started 30 minutes, of the 12.00 held; the gateway released the rest.
    expect(chargedInLedger(h.host)).toBe(300);
    expect(openAuthorizations(h.host)).toEqual([]);

    await sendEvent(h.host, { type: 'DONE' });
    await waitForScreen(h.host, (s) => s.customer.screen === 'idle', 'the attract screen');
    expect(
      await h.host.operator({ pin, action: { type: 'service', task: 'on', reason: 'Works on the street' } }),
    ).toMatchObject({ ok: true, value: { outcome: 'ok' } });
    const closed = await h.host.snapshot();
    expect(closed.ok && closed.value.customer).toMatchObject({
      screen: 'out-of-service',
      message: 'Works on the street',
    });

    const serviceRecords = h.host.audit
      .list()
      .filter((r) => r.action === 'service-mode-on' || r.action === 'fleet-command')
      .map((r) => [r.action, r.actor, r.result, r.code ?? null]);
    expect(serviceRecords).toEqual([
      ['service-mode-on', 'operator', 'refused', 'BUSY'],
      ['service-mode-on', 'fleet', 'refused', 'BUSY'],
      ['service-mode-on', 'operator', 'ok', null],
    ]);
    fleet.close();
  }, 30_000);
});

describe('service mode and an unexpected error', () => {
  it('is not ended by "back in service" once an unexpected error has put the terminal out of service', async () => {
    const h = await startModelHost(modelConfig('meter'));
    hosts.push(h);
    const pin = h.host.generatedOperatorPin ?? '';
    expect(
      await h.host.operator({ pin, action: { type: 'service', task: 'on', reason: 'Cleaning' } }),
    ).toMatchObject({ ok: true, value: { outcome: 'ok' } });
    // E.g. the journal could not sync its log: only a restart may bring the terminal back.
    h.host.outOfService('the journal could not sync its log to disk');
    expect(await h.host.operator({ pin, action: { type: 'service', task: 'off' } })).toMatchObject({
      ok: true,
      value: { outcome: 'failed', message: expect.stringContaining('not in service mode') as string },
    });
    expect(h.host.status().outOfService).toBe('the journal could not sync its log to disk');
    expect((await h.host.send({ type: 'START' })).ok).toBe(false);
  }, 30_000);
});

describe('the work between customers in service mode', () => {
  it('goes on: a follow-up that falls due while the terminal is in service mode is carried out', async () => {
    const h = await startModelHost(modelConfig('meter'));
    hosts.push(h);
    const pin = h.host.generatedOperatorPin ?? '';
    expect(
      await h.host.operator({ pin, action: { type: 'service', task: 'on', reason: 'Cleaning' } }),
    ).toMatchObject({ ok: true, value: { outcome: 'ok' } });
    // An obligation written meanwhile (e.g. by a void the operator makes in service mode), due at once.
    h.host.followUps.add({
      kind: 'reverse-authorization',
      authorizationTransactionId: 'AUTH-IN-SERVICE-MODE',
      gatewayId: '7000000000000000000001',
      amountMinor: 1_200,
      currency: 'GBP',
      includeEmvTags: false,
      reason: 'capture voided by the operator',
    });
    // The sweep runs every second: its reversal is sent (the sandbox knows no such authorization and refuses it,
    // so the follow-up stays open and is tried again later).
    await expect
      .poll(() => h.host.journal.list({ limit: 10 }).filter((e) => e.service === 'reversal').length, {
        timeout: 5_000,
      })
      .toBeGreaterThan(0);
    expect(h.host.status().outOfService).toBe('service mode: Cleaning');
  }, 30_000);
});

describe('service mode with cars inside a tap-and-go car park', () => {
  it('goes on, naming the holds open (the restarts would wait for them; service mode need not)', async () => {
    const h = await startModelHost(modelConfig('tap-and-go'));
    hosts.push(h);
    const pin = h.host.generatedOperatorPin ?? '';
    await sendEvent(h.host, { type: 'TAP_ENTRY' });
    await waitForScreen(h.host, (s) => s.customer.screen === 'session', 'the entry');
    // The customer is still at the gate: refused.
    expect(
      await h.host.operator({ pin, action: { type: 'service', task: 'on', reason: 'Barrier repair' } }),
    ).toMatchObject({ ok: true, value: { outcome: 'refused', code: 'BUSY' } });
    await sendEvent(h.host, { type: 'DONE' });
    await waitForScreen(h.host, (s) => s.customer.screen === 'idle', 'idle with the car inside');
    expect(h.host.holds.size).toBe(1);
    expect(h.host.idle().idle).toBe(false);
    // The car is inside, nobody is at the gate: service mode goes on, and the operator learns what it means for the car.
    expect(
      await h.host.operator({ pin, action: { type: 'service', task: 'on', reason: 'Barrier repair' } }),
    ).toMatchObject({
      ok: true,
      value: { outcome: 'ok', message: expect.stringContaining('1 tap-and-go hold(s) open') as string },
    });
    expect(h.host.status().outOfService).toBe('service mode: Barrier repair');
    expect(h.host.holds.size).toBe(1);
  }, 30_000);
});
