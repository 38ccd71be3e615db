import { afterEach, describe, expect, it } from 'vitest';
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
 * The meter's capture window (tariff.captureWindowMinutes) on a real host: a pre-authorization left uncaptured that
 * long is reversed. A window longer than a Node timer can wait (about 24.8 days; card networks allow pre-authorizations
 * of up to 30 days) must not end the session at once.
 */

const hosts: ModelHost[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
});

describe('meter capture window', () => {
  it('keeps a session open under a 30-day capture window and captures its fee at the end', async () => {
    const h = await startModelHost(modelConfig('meter', { tariff: { captureWindowMinutes: 30 * 24 * 60 } }));
    hosts.push(h);
    await sendEvent(h.host, { type: 'START' });
    await sendEvent(h.host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(h.host, { type: 'CONFIRM' });
    await waitForScreen(h.host, (s) => s.customer.screen === 'session', 'the session');
    // Whatever timers are due go first: a window of 30 days is not due, the session stays and its hold with it.
    await new Promise((res) => setTimeout(res, 50));
    const open = await h.host.snapshot();
    expect(open.ok && open.value.customer.screen).toBe('session');
    expect(h.host.sandbox!.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
      ['authorization', 'AUTHORIZED'],
    ]);
    h.clock.offsetMs = 45 * 60_000;
    await sendEvent(h.host, { type: 'END_SESSION' });
    const ended = await waitForScreen(
      h.host,
      (s) => ['approved', 'declined', 'error', 'idle'].includes(s.customer.screen),
      'the end of the session',
    );
    expect(ended.customer.screen).toBe('approved');
    // 45 minutes at 1.50 per started 30 minutes: 3.00 captured of the 12.00 held, the rest released by the gateway.
    expect(chargedInLedger(h.host)).toBe(300);
    expect(openAuthorizations(h.host)).toEqual([]);
  });
});
