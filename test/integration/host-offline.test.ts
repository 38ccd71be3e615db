import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { localDateTime } from '../../src/host/local-time.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ParkingClock } from './models-harness.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function until<T>(what: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function screenIs(host: TerminalHost, screens: string[]): Promise<string | undefined> {
  const r = await host.snapshot();
  const s = r.ok ? r.value.customer.screen : '?';
  return screens.includes(s) ? s : undefined;
}

async function queueStatus(cwd: string, configFile: string): Promise<Record<string, unknown>> {
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _e, cb) {
      out += chunk.toString();
      cb();
    },
  });
  const code = await main(['queue', 'status', '--config', configFile], {
    stdout,
    stderr: stdout,
    cwd,
    signal: new AbortController().signal,
  });
  expect(code).toBe(0);
  return JSON.parse(out) as Record<string, unknown>;
}

/**
 * A terminal of `model` storing offline (`prefer-online`) whose gateway — a standalone sandbox, stopped at once —
 * cannot be reached, on the idle screen. The sandbox can be started again on `port`.
 */
async function gatewayGone(
  model: 'attended' | 'kiosk',
  prefix: string,
  card = 'n2-contact',
): Promise<{ host: TerminalHost; port: number; cwd: string; configFile: string; input: ConfigInput }> {
  const first: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  const port = Number(new URL(first.url).port);
  const cwd = mkdtempSync(join(tmpdir(), prefix));
  const input: ConfigInput = {
    terminal: { model },
    reader: { sim: { card, presentDelayMs: 20 } },
    offline: { policy: 'prefer-online' },
    journal: { resolutionRetryMs: 100 },
  };
  const configFile = join(cwd, 'terminal.json');
  writeFileSync(configFile, JSON.stringify(input));
  const host = await createTerminalHost(parseConfig(input), {
    logger: silentLogger(),
    cwd,
    gatewayUrlOverride: first.url,
  });
  open.push(host);
  await first.close(); // the gateway goes away: connections are refused
  await until(() => screenIs(host, ['idle']));
  return { host, port, cwd, configFile, input };
}

/**
 * An attended terminal that sold `minor` while its gateway could not be reached ({@link gatewayGone}): the sale is
 * stored, and the screen says approved.
 */
async function storedWhileDown(
  minor: number,
  prefix: string,
): Promise<{ host: TerminalHost; port: number; cwd: string; configFile: string; input: ConfigInput }> {
  const gone = await gatewayGone('attended', prefix);
  const { host } = gone;
  await host.send({ type: 'START' });
  await host.send({ type: 'ENTER_AMOUNT', minor });
  await host.send({ type: 'CONFIRM' });
  expect(await until(() => screenIs(host, ['approved', 'declined', 'error']))).toBe('approved');
  expect(host.status().offline.depth).toBe(1);
  return gone;
}

describe('offline store-and-forward through the terminal', () => {
  it('stores a chip sale while the gateway is down, shows the same numbers as queue status, and forwards it exactly once when the gateway is back', async () => {
    const { host, port, cwd, configFile } = await gatewayGone('kiosk', 'pt-offline-');
    await host.send({ type: 'START' });
    const ticket = `${localDateTime(new Date(Date.now() - 95 * 60_000), 'Europe/London').slice(0, 12)}0001`;
    await host.send({ type: 'ENTER_TICKET', ticket });
    await until(() => screenIs(host, ['confirm']));
    await host.send({ type: 'CONFIRM' });
    expect(await until(() => screenIs(host, ['approved', 'declined', 'error']))).toBe('approved');

    const bar = host.status().offline;
    expect(bar.depth).toBe(1);
    expect(bar.totals).toEqual([{ currency: 'GBP', minor: 600, text: '£6.00' }]);
    const cli = await queueStatus(cwd, configFile);
    expect(cli.depth).toBe(bar.depth);
    expect(cli.totalsPerCurrency).toEqual(
      bar.totals.map((t) => ({ currency: t.currency, minor: t.minor, amount: '6.00' })),
    );
    expect(cli.oldestAgeSeconds).toBe(bar.oldestAgeSeconds);
    expect(cli.limits).toEqual(bar.limits);
    expect(cli.policy).toBe(bar.policy);

    // The gateway is back on the same address: forwarding starts by itself, and the payment is sent exactly once.
    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    await until(() => (host.status().offline.depth === 0 ? true : undefined));
    const sales = second.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales).toHaveLength(1);
    expect(sales[0]?.amounts.captured).toBe(600);
    expect((await queueStatus(cwd, configFile)).depth).toBe(0);
    expect(second.consistency().ok).toBe(true);
  });
});

describe('the same card again and again while the gateway cannot be reached', () => {
  it('is stored up to offline.maxCountPerCard times, then refused: the sale is not approved', async () => {
    const { host, port } = await storedWhileDown(500, 'pt-offline-per-card-');
    const sellAgain = async (): Promise<string> => {
      await host.send({ type: 'START' });
      await until(() => screenIs(host, ['idle']));
      await host.send({ type: 'START' });
      await host.send({ type: 'ENTER_AMOUNT', minor: 500 });
      await host.send({ type: 'CONFIRM' });
      return until(() => screenIs(host, ['approved', 'declined', 'error']));
    };
    // The default limit is 2: the second sale of the same card is stored, the third is not.
    expect(await sellAgain()).toBe('approved');
    expect(host.status().offline.depth).toBe(2);
    expect(host.status().offline.limits.maxCountPerCard).toBe(2);
    expect(await sellAgain()).not.toBe('approved');
    expect(host.status().offline.depth).toBe(2);

    // The gateway back: the two stored are forwarded, nothing of the third.
    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    await until(() => (host.status().offline.depth === 0 ? true : undefined));
    expect(second.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(2);
  });
});

describe('a stored payment risk-declined or held for review when forwarded', () => {
  // 12.22: the sandbox's risk-decline trigger; 12.23: its review trigger (README, Triggers).
  it.each([
    ['risk-declined', 1_222],
    ['held for review', 1_223],
  ])('%s, is reversed: the reversal repeats the stored request’s EMV tags', async (_label, amount) => {
    const { host, port } = await storedWhileDown(amount, 'pt-offline-risk-');

    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    const held = (): string[] =>
      second
        .consistency({ requireResolved: true })
        .problems.filter((p) => p.rule === 'OPEN_AUTHORIZATION')
        .map((p) => p.id ?? '');
    await until(() => (second.ledger().transactions.length > 0 && held().length === 0 ? true : undefined));
    expect(second.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
      ['sale', 'REVERSED'],
      ['reversal', 'REVERSED'],
    ]);
    // The reversal carried the EMV tags the stored sale was sent with (the sandbox refuses it without them).
    const [sale, reversal] = second.ledger().transactions;
    const tagsOf = (body: unknown): unknown =>
      (body as { pointOfSaleInformation?: { emv?: { tags?: string } } }).pointOfSaleInformation?.emv?.tags;
    expect(tagsOf(reversal?.requests[0]?.body)).toBe(tagsOf(sale?.requests[0]?.body));
    expect(second.consistency({ requireResolved: true }).problems).toEqual([]);
    expect(host.status().offline.declinedAfterForward).toBe(1);
  });
});

describe('a gateway whose processor is down (400 PROCESSOR_UNAVAILABLE)', () => {
  it('is reported as such, not as unreachable, while stored payments stay stored until it is back', async () => {
    const { host, port } = await storedWhileDown(500, 'pt-offline-processor-');
    // The gateway answers again, refusing payments: its processor is down (the sandbox's fault, one per request:
    // more than forwarding's tries and the live sale take).
    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    second.scheduleFaults(
      Array.from({ length: 100 }, () => ({
        kind: 'processor-unavailable' as const,
        path: '/pts/v2/payments',
      })),
    );

    await host.startForwarding();
    expect(host.status().gateway).toMatchObject({
      online: false,
      problem: 'processor',
      lastError: 'PROCESSOR_UNAVAILABLE',
    });
    // Nothing was taken, nothing was given up: the payment waits, stored.
    expect(host.status().offline.depth).toBe(1);
    expect(second.ledger().transactions).toEqual([]);

    // A live sale refused so tells the same, not that the gateway is fine.
    await until(() => screenIs(host, ['idle']));
    await host.send({ type: 'START' });
    await host.send({ type: 'ENTER_AMOUNT', minor: 700 });
    await host.send({ type: 'CONFIRM' });
    expect(await until(() => screenIs(host, ['approved', 'declined', 'error']))).toBe('error');
    expect(host.status().gateway).toMatchObject({ online: false, problem: 'processor' });
    expect(host.status().offline.depth).toBe(1);

    // The processor back: the stored payment goes, once.
    expect((await fetch(`${second.url}/__sandbox/faults`, { method: 'DELETE' })).ok).toBe(true);
    await host.startForwarding();
    await until(() => (host.status().offline.depth === 0 ? true : undefined));
    expect(host.status().gateway).toMatchObject({ online: true });
    expect(host.status().gateway).not.toHaveProperty('problem');
    expect(second.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
  });
});

describe('a card whose service code requires online authorization, while the gateway cannot be reached', () => {
  it('is not stored: its issuer never agreed to a payment approved without it', async () => {
    const { host, port } = await gatewayGone('attended', 'pt-offline-online-only-', 'n2-online-only');
    await host.send({ type: 'START' });
    await host.send({ type: 'ENTER_AMOUNT', minor: 500 });
    await host.send({ type: 'CONFIRM' });
    expect(await until(() => screenIs(host, ['approved', 'declined', 'error']))).not.toBe('approved');
    expect(host.status().offline.depth).toBe(0);

    // The gateway back: nothing was waiting to be sent.
    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    await host.settle(15_000);
    expect(second.ledger().transactions).toEqual([]);
  });
});

describe('a meter pre-authorization while the gateway cannot be reached', () => {
  it('is not stored: no session opens on an authorization that nothing would capture or reverse', async () => {
    const first: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    const port = Number(new URL(first.url).port);
    const cwd = mkdtempSync(join(tmpdir(), 'pt-offline-meter-'));
    const clock = new ParkingClock();
    const host = await createTerminalHost(
      parseConfig({
        terminal: { model: 'meter' },
        reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
        // Within every limit: the default tariff holds 12.00, the price of the longest stay.
        offline: { policy: 'prefer-online', maxTransactionMinor: 5_000 },
        journal: { resolutionRetryMs: 100 },
      }),
      { logger: silentLogger(), cwd, gatewayUrlOverride: first.url, parkingClock: clock },
    );
    open.push(host);
    await first.close();

    await until(() => screenIs(host, ['idle']));
    await host.send({ type: 'START' });
    await host.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    await until(() => screenIs(host, ['confirm']));
    await host.send({ type: 'CONFIRM' });
    await until(() => screenIs(host, ['session', 'declined', 'error']));
    expect(host.status().offline.depth).toBe(0);
    expect(await screenIs(host, ['session'])).toBeUndefined();

    // The gateway back: nothing was waiting to be sent, nothing is held on the card.
    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    await host.settle(15_000);
    expect(second.ledger().transactions).toEqual([]);
  });
});

describe('a stored payment risk-declined when `queue flush` forwards it', () => {
  it('has the funds the issuer holds released by the terminal at its next start, with the stored request’s EMV tags', async () => {
    // 12.22: the sandbox's risk-decline trigger (README, Triggers).
    const { host, port, cwd, configFile, input } = await storedWhileDown(1_222, 'pt-offline-flush-risk-');
    await host.close();

    // The terminal is stopped; the operator forwards the queue by hand.
    const second = await startSandbox({ port, logger: silentLogger() });
    open.push(second);
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _e, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const code = await main(['queue', 'flush', '--config', configFile, '--gateway', second.url], {
      stdout,
      stderr: new Writable({ write: (_c, _e, cb) => cb() }),
      cwd,
      signal: new AbortController().signal,
    });
    expect(code).toBe(1);
    expect(JSON.parse(out)).toMatchObject({ declined: [{ amountMinor: 1_222, state: 'declined' }] });

    // The next start carries out what the forward's answer left to do, before it takes a card.
    const again = await createTerminalHost(parseConfig(input), {
      logger: silentLogger(),
      cwd,
      gatewayUrlOverride: second.url,
    });
    open.push(again);
    await until(() => screenIs(again, ['idle']));
    await again.settle(15_000);
    expect(second.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
      ['sale', 'REVERSED'],
      ['reversal', 'REVERSED'],
    ]);
    const [sale, reversal] = second.ledger().transactions;
    const tagsOf = (body: unknown): unknown =>
      (body as { pointOfSaleInformation?: { emv?: { tags?: string } } }).pointOfSaleInformation?.emv?.tags;
    expect(tagsOf(reversal?.requests[0]?.body)).toBe(tagsOf(sale?.requests[0]?.body));
    expect(second.consistency({ requireResolved: true }).problems).toEqual([]);
    expect(again.status().offline.declinedAfterForward).toBe(1);
  });
});

describe('a stored payment approved for less than its amount when forwarded', () => {
  it('is counted for the operator as not collected in full, and the part approved stands', async () => {
    // 12.21: the sandbox's partial-approval trigger (README, Triggers): approved for half, 6.10.
    const { host, port } = await storedWhileDown(1_221, 'pt-offline-partial-');

    const second = await startSandbox({ port, logger: silentLogger() });
    open.unshift(second);
    await until(() => (host.status().offline.depth === 0 ? true : undefined));
    await host.settle(15_000);
    expect(second.ledger().transactions.map((t) => [t.kind, t.status, t.amounts.captured])).toEqual([
      ['sale', 'PARTIAL_AUTHORIZED', 610],
    ]);
    expect(host.status().offline.declinedAfterForward).toBe(1);
  });
});
