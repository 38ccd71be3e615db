import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { openJournal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startRewritingProxy, type RewritingProxy } from './rewriting-proxy.js';
import { sendEvent } from './host-harness.js';
import { sandboxOpenAuthorizations } from './models-harness.js';

/*
 * AUTHORIZED_RISK_DECLINED (reference/gateway.md §4, payments): the issuer approved and the gateway's risk check
 * refused. The customer is told "declined", but the issuer holds the funds until the authorization is reversed: the
 * terminal must reverse it (src/gateway/outcome.ts). The sandbox never answers that status, so a proxy in front of a
 * standalone sandbox turns the first approved pre-authorization into it; the sandbox's ledger keeps the approval
 * the issuer made.
 */

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
const hosts: TerminalHost[] = [];

/**
 * Turns the first approved pre-authorization's answer into AUTHORIZED_RISK_DECLINED; a partial approval's too (the
 * sandbox's trigger 21: the issuer approved half), its authorized amount kept as the sandbox answered it.
 */
async function startProxy(target: string): Promise<void> {
  let rewritten = false;
  proxy = await startRewritingProxy(target, (req, answer) => {
    const json = answer as { status?: string };
    if (
      rewritten ||
      req.method !== 'POST' ||
      req.url !== '/pts/v2/payments' ||
      (json.status !== 'AUTHORIZED' && json.status !== 'PARTIAL_AUTHORIZED')
    )
      return undefined;
    rewritten = true;
    json.status = 'AUTHORIZED_RISK_DECLINED';
    return json;
  });
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
  await startProxy(sandbox.url);
  dir = mkdtempSync(join(tmpdir(), 'pt-risk-declined-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

async function screen(h: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  for (;;) {
    const r = await h.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    await new Promise((res) => setTimeout(res, 20));
  }
}

/**
 * A terminal of `model` on the simulated reader against `gatewayUrl`, at its idle screen; `timeoutReversalDelayMs`
 * shortens the wait before a timeout reversal (60 s by default).
 */
async function startHost(
  model: 'attended' | 'meter',
  gatewayUrl: string,
  timeoutReversalDelayMs?: number,
  tariff?: Record<string, unknown>,
): Promise<TerminalHost> {
  const host = await createTerminalHost(
    parseConfig({
      terminal: { model },
      ...(tariff !== undefined ? { tariff } : {}),
      reader: { sim: { presentDelayMs: 20 } },
      journal: {
        path: 'journal.db',
        resolutionRetryMs: 100,
        ...(timeoutReversalDelayMs !== undefined ? { timeoutReversalDelayMs } : {}),
      },
    }),
    { logger: silentLogger(), cwd: dir, gatewayUrlOverride: gatewayUrl },
  );
  hosts.push(host);
  await screen(host, ['idle']);
  return host;
}

describe('a sale the issuer approved and the gateway risk-declined', () => {
  it('is shown declined and its authorization is reversed (the sandbox trigger 22: nothing was captured)', async () => {
    const host = await startHost('attended', sandbox.url);
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'ENTER_AMOUNT', minor: 1_222 });
    await sendEvent(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['approved', 'declined', 'error', 'choose-currency']);
    expect(shown.customer.screen).toBe('declined');
    const [sale] = sandbox.ledger().transactions;
    expect(sale).toMatchObject({ kind: 'sale', status: 'AUTHORIZED_RISK_DECLINED' });
    expect(sale?.amounts).toMatchObject({ authorized: 1_222, captured: 0 });

    for (let i = 0; i < 250 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(sandbox.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
      ['sale', 'REVERSED'],
      ['reversal', 'REVERSED'],
    ]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('a risk-declined sale, or one held for review, whose answer was lost', () => {
  it.each([
    [1_222, 'AUTHORIZED_RISK_DECLINED'],
    [1_223, 'PENDING_REVIEW'],
  ])(
    '(%i) is released by a timeout reversal once its timeout void is refused (nothing was captured to void)',
    async (amount, status) => {
      const host = await startHost('attended', sandbox.url, 50);
      // The sandbox risk-declines the sale (trigger 22) or holds it for review (23), then answers 502 SERVER_TIMEOUT:
      // its outcome is unknown.
      sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/pts/v2/payments', method: 'POST' }]);
      await sendEvent(host, { type: 'START' });
      await sendEvent(host, { type: 'ENTER_AMOUNT', minor: amount });
      await sendEvent(host, { type: 'CONFIRM' });
      for (let i = 0; i < 250 && sandbox.ledger().transactions.length === 0; i += 1)
        await new Promise((res) => setTimeout(res, 20));
      const [sale] = sandbox.ledger().transactions;
      expect(sale).toMatchObject({ kind: 'sale', status, outcomeUnknown: true });

      // The sandbox reports the hold of an unknown answer as UNKNOWN_AUTHORIZATION_NOT_REVERSED until it is released.
      const problems = (): unknown[] => sandbox.consistency({ requireResolved: true }).problems;
      for (let i = 0; i < 250 && problems().length > 0; i += 1)
        await new Promise((res) => setTimeout(res, 20));
      expect(sandbox.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
        ['sale', 'REVERSED'],
        ['timeout-reversal', 'REVERSED'],
      ]);
      expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
      // The journal says the sale was undone, not that it stands for the operator to refund.
      await host.close();
      const journal = openJournal(join(dir, 'journal.db'));
      try {
        const saleEntry = journal.findByTransactionId(sale!.transactionId!);
        expect(saleEntry).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
      } finally {
        journal.close();
      }
    },
  );
});

describe('a pre-authorization the issuer approved and the gateway risk-declined', () => {
  it('is shown declined and its hold is released', async () => {
    const host = await startHost('meter', proxy.url);
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['session', 'declined', 'error']);
    expect(shown.customer.screen).toBe('declined');
    const [held] = sandbox.ledger().transactions.filter((t) => t.kind === 'authorization');
    expect(held?.status).toBe('AUTHORIZED');

    // Released by the terminal in the background; every other answer of the gateway is left as it is.
    for (let i = 0; i < 250 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(sandbox.consistency().problems).toEqual([]);
  });
});

describe('a meter pre-authorization the issuer approved in part and the gateway risk-declined', () => {
  it('is released by a reversal of the amount the issuer authorized, not of the amount requested', async () => {
    // 30 minutes at 3.21: the sandbox approves half (trigger 21), 1.60; the proxy makes the answer a risk decline.
    const host = await startHost('meter', proxy.url, undefined, {
      periods: [{ minutes: 1440, priceMinor: 321, unitMinutes: 30 }],
      meterAuthorization: 'chosen',
    });
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 30 });
    await sendEvent(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['session', 'declined', 'error']);
    expect(shown.customer.screen).toBe('declined');
    const [held] = sandbox.ledger().transactions.filter((t) => t.kind === 'authorization');
    expect(held?.amounts).toMatchObject({ requested: 321, authorized: 160 });

    for (let i = 0; i < 250 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    const reversals = sandbox.ledger().transactions.filter((t) => t.kind === 'reversal');
    expect(reversals.map((t) => [t.status, t.amounts.reversed])).toEqual([['REVERSED', 160]]);
    expect(sandbox.consistency().problems).toEqual([]);
  });
});

/*
 * PENDING_REVIEW (reference/gateway.md §4, payments): the gateway's risk check holds the payment for the merchant's
 * review. A terminal cannot wait for it: the customer is told "declined" and may pay with another card, while a review
 * that later accepts it would charge the card. The terminal reverses it at once (the sandbox's trigger 23).
 */
describe('a sale held for review', () => {
  it('is shown declined and its authorization is reversed, leaving a review nothing to accept', async () => {
    const host = await startHost('attended', sandbox.url);
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'ENTER_AMOUNT', minor: 1_223 });
    await sendEvent(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['approved', 'declined', 'error', 'choose-currency']);
    expect(shown.customer.screen).toBe('declined');
    const [sale] = sandbox.ledger().transactions;
    expect(sale).toMatchObject({ kind: 'sale', status: 'PENDING_REVIEW' });

    for (let i = 0; i < 250 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(sandbox.ledger().transactions.map((t) => [t.kind, t.status])).toEqual([
      ['sale', 'REVERSED'],
      ['reversal', 'REVERSED'],
    ]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('a meter pre-authorization held for review', () => {
  it('is shown declined and its hold is released', async () => {
    // 30 minutes at 1.23: the sandbox's review trigger.
    const host = await startHost('meter', sandbox.url, undefined, {
      periods: [{ minutes: 1440, priceMinor: 123, unitMinutes: 30 }],
      meterAuthorization: 'chosen',
    });
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 30 });
    await sendEvent(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['session', 'declined', 'error']);
    expect(shown.customer.screen).toBe('declined');
    const [held] = sandbox.ledger().transactions.filter((t) => t.kind === 'authorization');
    expect(held).toMatchObject({ status: 'PENDING_REVIEW', amounts: { authorized: 123 } });

    for (let i = 0; i < 250 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    const reversals = sandbox.ledger().transactions.filter((t) => t.kind === 'reversal');
    expect(reversals.map((t) => [t.status, t.amounts.reversed])).toEqual([['REVERSED', 123]]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});
