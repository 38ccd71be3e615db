import { afterEach, describe, expect, it } from 'vitest';
import type { TerminalSnapshot } from '../../src/host/api.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import {
  modelConfig,
  sendEvent,
  startSandboxLane,
  waitForScreen,
  type ParkingClock,
} from './models-harness.js';

/**
 * One card, two cars (anti-passback, tariff.tapAndGoOneStayPerCard), on a real host against the sandbox with the
 * simulated reader: a card whose stay is open is refused at the entry after its zero-amount verification and before
 * any pre-authorization — no second hold, nothing sent after the refusal, the refusal in the audit log the operator
 * reads; once its car has left by the exit, the card enters again; with the option off, it enters as before.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CARD = 'n2-contact';

/** A tap-and-go terminal, started, against a sandbox of its own; `oneStayPerCard` the option (default: unset). */
async function lane(
  options: { oneStayPerCard?: boolean } = {},
): Promise<{ host: TerminalHost; clock: ParkingClock }> {
  const config = modelConfig('tap-and-go', {
    tariff: {
      tapAndGoHoldMinor: 598,
      ...(options.oneStayPerCard !== undefined ? { tapAndGoOneStayPerCard: options.oneStayPerCard } : {}),
    },
  });
  return startSandboxLane(config, cleanups);
}

/** The card taps at the entry: the screen the entry ends on. */
async function tapAtEntry(host: TerminalHost, what: string): Promise<TerminalSnapshot> {
  host.simulator!.setCard(CARD);
  await sendEvent(host, { type: 'TAP_ENTRY' });
  return waitForScreen(host, (s) => ['session', 'declined', 'error'].includes(s.customer.screen), what);
}

async function dismiss(host: TerminalHost): Promise<void> {
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
}

/** The reason the tap-and-go machine gives for what it shows. */
function reasonOf(host: TerminalHost): unknown {
  return (host.actor?.getSnapshot() as { context?: { reason?: unknown } } | undefined)?.context?.reason;
}

/** What the journal holds, oldest first: `service:state`, with the transactionId. */
function journaled(host: TerminalHost): { service: string; state: string; transactionId?: string }[] {
  return host.journal
    .list({ limit: 1_000 })
    .reverse()
    .map((e) => ({
      service: e.service,
      state: e.state,
      ...(e.transactionId !== undefined ? { transactionId: e.transactionId } : {}),
    }));
}

describe('tap-and-go: one stay per card', () => {
  it('refuses a second entry of a card inside after its verification: no second hold, nothing sent after it', async () => {
    const { host } = await lane();
    expect((await tapAtEntry(host, 'the first entry')).customer.screen).toBe('session');
    await dismiss(host);
    const [first] = host.holds.unclaimed();
    expect(first).toBeDefined();
    const before = journaled(host);
    expect(before.map((e) => `${e.service}:${e.state}`)).toEqual(['avr:approved', 'preauth:approved']);

    // A second vehicle at the entry with the same card.
    const refused = await tapAtEntry(host, 'the second entry');
    expect(refused.customer.screen).toBe('declined');
    expect(refused.customer.message).toBe(
      'This card is already in use for a vehicle in the car park: please use another card or ask the operator',
    );
    expect(reasonOf(host)).toBe('CARD_ALREADY_INSIDE');
    // Its zero-amount verification, and nothing after: no pre-authorization, no second hold, the first one untouched.
    const after = journaled(host);
    expect(after.slice(before.length).map((e) => `${e.service}:${e.state}`)).toEqual(['avr:approved']);
    const verification = after.at(-1)?.transactionId;
    expect(host.holds.size).toBe(1);
    expect(host.holds.unclaimed()).toEqual([first]);
    await dismiss(host);
    await host.settle(10_000);
    expect(journaled(host)).toEqual(after);

    // In the audit log, which operator mode shows: the verification the subject, the open stay's hold in the details.
    const records = host.audit.list({}).filter((r) => r.action === 'entry-refused');
    expect(records.map((r) => [r.actor, r.subject, r.result, r.code, r.details])).toEqual([
      ['system', verification, 'refused', 'CARD_ALREADY_INSIDE', { holdId: first?.holdId }],
    ]);
    const shown = await host.operator({ pin: host.generatedOperatorPin ?? '', action: { type: 'audit' } });
    expect(
      shown.ok && shown.value.type === 'audit'
        ? shown.value.records.filter((r) => r.action === 'entry-refused').map((r) => r.code)
        : shown,
    ).toEqual(['CARD_ALREADY_INSIDE']);
    // No card data in the record: the masked number is not even there.
    expect(JSON.stringify(records)).not.toMatch(/\d{6}\*+\d{4}/);
  }, 60_000);

  it('lets the card enter again once its car has left by the exit', async () => {
    const { host, clock } = await lane();
    await tapAtEntry(host, 'the first entry');
    await dismiss(host);
    clock.offsetMs = 45 * 60_000;
    host.simulator!.setCard(CARD);
    await sendEvent(host, { type: 'TAP_EXIT' });
    expect(
      (
        await waitForScreen(
          host,
          (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
          'exit',
        )
      ).customer.screen,
    ).toBe('approved');
    await dismiss(host);
    expect(host.holds.size).toBe(0);

    expect((await tapAtEntry(host, 'the entry after the exit')).customer.screen).toBe('session');
    expect(reasonOf(host)).toBe('APPROVED');
    await dismiss(host);
    expect(host.holds.size).toBe(1);
    expect(host.audit.list({}).filter((r) => r.action === 'entry-refused')).toEqual([]);
  }, 60_000);

  it('with tariff.tapAndGoOneStayPerCard false, lets the card in again as before: a second hold', async () => {
    const { host } = await lane({ oneStayPerCard: false });
    await tapAtEntry(host, 'the first entry');
    await dismiss(host);
    const [first] = host.holds.unclaimed();
    expect((await tapAtEntry(host, 'the second entry')).customer.screen).toBe('session');
    await dismiss(host);
    expect(
      journaled(host)
        .filter((e) => e.service !== 'reversal')
        .map((e) => `${e.service}:${e.state}`),
    ).toEqual(['avr:approved', 'preauth:approved', 'avr:approved', 'preauth:approved']);
    // The card's earlier hold is made due at the new entry and released by its watch (HoldStore.open), as before.
    const deadline = Date.now() + 20_000;
    while (host.holds.has(first?.holdId ?? '') && Date.now() < deadline)
      await new Promise((res) => setTimeout(res, 20));
    expect(host.holds.unclaimed().map((h) => h.holdId)).not.toContain(first?.holdId);
    expect(host.holds.size).toBe(1);
    expect(host.audit.list({}).filter((r) => r.action === 'entry-refused')).toEqual([]);
  }, 60_000);
});
