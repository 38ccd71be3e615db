/**
 * A follow-on repeats what its original requires (DESIGN.md rule 7; gateway.md §7: "When the original carried EMV
 * data, the reversal must carry the EMV tags too"). Each case is one the outside review found leaving a hold on the
 * customer's card: the sandbox refuses a reversal of an EMV authorization without its tags (400 MISSING_FIELD).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { createTerminalHost, openTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type LedgerRequest, type Sandbox } from '../../src/sandbox/index.js';
import { sendEvent, waitForScreens } from './host-harness.js';
import { refusedUnprocessed } from './models-harness.js';

const MIN = 60_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function setup(input: ConfigInput, card: string) {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-tags-'));
  let offsetMs = 0;
  const clock = {
    now: () => Date.now() + offsetMs,
    advance: (ms: number) => {
      offsetMs += ms;
    },
  };
  const config = parseConfig({
    ...input,
    reader: { sim: { card, presentDelayMs: 20 } },
    journal: { timeoutReversalDelayMs: 0, resolutionRetryMs: 50 },
  });
  const options = { logger: silentLogger(), cwd, gatewayUrlOverride: sandbox.url, parkingClock: clock };
  const start = async (): Promise<TerminalHost> => {
    const host = await createTerminalHost(config, options);
    open.push(host);
    return host;
  };
  /** A host not begun yet: its start (recovery, the sweep of orphaned authorizations) runs at `begin()`. */
  const build = async (now?: () => Date): Promise<TerminalHost> => {
    const host = await openTerminalHost(config, now ? { ...options, now } : options);
    open.push(host);
    return host;
  };
  return { sandbox, clock, start, build };
}

/** Answers the first reversal `host` sends 400 PROCESSOR_UNAVAILABLE before it reaches the gateway; returns the log. */
function processorDownForFirstReversal(host: TerminalHost): string[] {
  const refused: string[] = [];
  const sendToGateway = host.gateway.send.bind(host.gateway);
  host.gateway.send = async (...args: Parameters<typeof sendToGateway>) => {
    const [prepared] = args;
    if (prepared.service !== 'reversal' || refused.length > 0) return sendToGateway(...args);
    refused.push(prepared.service);
    return refusedUnprocessed('PROCESSOR_UNAVAILABLE');
  };
  return refused;
}

/** Waits until the sandbox has seen a reversal, then for the host's background work. */
async function firstReversal(sandbox: Sandbox, host: TerminalHost): Promise<LedgerRequest[]> {
  const deadline = Date.now() + 10_000;
  while (reversals(sandbox).length === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await host.settle();
  return reversals(sandbox);
}

/** A meter session of 60 minutes bought with the card: its hold approved, the session screen shown. */
async function meterSession(host: TerminalHost): Promise<void> {
  await waitForScreens(host, ['idle']);
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await waitForScreens(host, ['confirm']);
  await sendEvent(host, { type: 'CONFIRM' });
  expect(await waitForScreens(host, ['session', 'declined', 'error'])).toBe('session');
}

function reversals(sandbox: Sandbox): LedgerRequest[] {
  return sandbox
    .ledger()
    .transactions.flatMap((t) => t.requests)
    .filter((r) => r.method === 'POST' && r.path.endsWith('/reversals'));
}

function expectNothingOpen(sandbox: Sandbox): void {
  expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
}

describe('a reversal repeats the EMV tags of its original', () => {
  it('tap-and-go: a contactless card leaving with nothing owed has its hold reversed, tags included', async () => {
    const { sandbox, clock, start } = await setup({ terminal: { model: 'tap-and-go' } }, 'n1-contactless');
    const host = await start();
    await waitForScreens(host, ['idle']);
    await sendEvent(host, { type: 'TAP_ENTRY' });
    expect(await waitForScreens(host, ['session', 'declined', 'error'])).toBe('session');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreens(host, ['idle']);
    clock.advance(5 * MIN); // within the grace period: nothing owed
    await sendEvent(host, { type: 'TAP_EXIT' });
    expect(await waitForScreens(host, ['approved', 'declined', 'error'])).toBe('approved');
    await host.settle();
    const [reversal, ...more] = reversals(sandbox);
    expect(more).toEqual([]);
    expect(reversal?.httpStatus).toBe(201);
    expect(reversal?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
    expectNothingOpen(sandbox);
  });

  it('tap-and-go: a contactless hold reaching the maximum stay is reversed once, tags included, also after a restart', async () => {
    const { sandbox, clock, start } = await setup({ terminal: { model: 'tap-and-go' } }, 'n2-contactless');
    const first = await start();
    await waitForScreens(first, ['idle']);
    await sendEvent(first, { type: 'TAP_ENTRY' });
    expect(await waitForScreens(first, ['session', 'declined', 'error'])).toBe('session');
    await first.close(); // the hold lives in the journal database, not in the process
    clock.advance(25 * 60 * MIN); // past tariff.tapAndGoMaxStayMinutes (1440)
    const second = await start();
    await second.settle();
    const deadline = Date.now() + 10_000;
    while (reversals(sandbox).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // a refused reversal would be retried within this time
    const sent = reversals(sandbox);
    expect(sent.map((r) => r.httpStatus)).toEqual([201]);
    expect(sent[0]?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
    expect(second.holds.size).toBe(0);
    expectNothingOpen(sandbox);
  });

  it.each(['n2-contact', 'n1-contactless'])(
    'meter (%s): the operator voids the capture and the hold is released with its tags; a refusal is never reported as approved',
    async (card) => {
      const { sandbox, clock, start } = await setup({ terminal: { model: 'meter' } }, card);
      const host = await start();
      await meterSession(host);
      clock.advance(45 * MIN);
      await sendEvent(host, { type: 'END_SESSION' });
      expect(await waitForScreens(host, ['approved', 'declined', 'error'])).toBe('approved');
      const capture = host.journal
        .list({ limit: 20 })
        .find((e) => e.service === 'capture' && e.state === 'approved');
      const pin = host.generatedOperatorPin!;
      const r = await host.operator({
        pin,
        action: { type: 'void', transactionId: capture!.transactionId! },
      });
      expect(r.ok && r.value).toMatchObject({ type: 'void', outcome: 'approved', code: 'APPROVED' });
      await host.settle();
      const [reversal] = reversals(sandbox);
      expect(reversal?.httpStatus).toBe(201);
      expect(reversal?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
      expect(host.followUps.open()).toEqual([]);
      expectNothingOpen(sandbox);
    },
  );
});

describe('a meter session whose reversal is refused for now (PROCESSOR_UNAVAILABLE)', () => {
  it('has its hold released later by the host, tags included, not left until the next start', async () => {
    const { sandbox, clock, start } = await setup({ terminal: { model: 'meter' } }, 'n2-contact');
    const host = await start();
    // The processor is down for the first reversal: the gateway refuses it (it never reaches the sandbox).
    const refused = processorDownForFirstReversal(host);
    await meterSession(host);
    clock.advance(5 * MIN); // within the grace period: nothing owed, the hold is reversed
    await sendEvent(host, { type: 'END_SESSION' });
    expect(await waitForScreens(host, ['approved', 'declined', 'error'])).toBe('approved');
    expect(refused).toEqual(['reversal']);
    // Nothing for the customer to do: the terminal releases the hold itself.
    const shown = await host.snapshot();
    expect(shown.ok && shown.value.customer.message).toBe(
      'Nothing to pay. The amount held on your card will be released shortly',
    );

    // Written with the refusal, carried out by the host's follow-ups while it runs.
    const [reversal, ...more] = await firstReversal(sandbox, host);
    expect(more).toEqual([]);
    expect(reversal?.httpStatus).toBe(201);
    expect(reversal?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
    expect(host.followUps.open()).toEqual([]);
    expectNothingOpen(sandbox);
  });
});

describe('a meter authorization whose session died, its reversal at the next start refused for now', () => {
  it('is reversed later by the follow-up written with the refusal, tags included', async () => {
    const { sandbox, start, build } = await setup({ terminal: { model: 'meter' } }, 'n2-contact');
    const first = await start();
    await meterSession(first);
    await first.close(); // the session dies with the process; its authorization stays held

    // Started again once the capture window is over: the terminal's clock (its journal's and its requests' dates) and
    // the gateway's a day on.
    sandbox.advanceClock(25 * 60 * MIN);
    const second = await build(() => new Date(Date.now() + 25 * 60 * MIN));
    const refused = processorDownForFirstReversal(second);
    await second.begin();
    const [reversal, ...more] = await firstReversal(sandbox, second);
    expect(refused).toEqual(['reversal']);
    expect(more).toEqual([]);
    expect(reversal?.httpStatus).toBe(201);
    expect(reversal?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
    expect(second.followUps.open()).toEqual([]);
    expectNothingOpen(sandbox);
  });
});
