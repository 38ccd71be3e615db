import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sendEvent, waitForScreen } from './models-harness.js';
import { startRewritingProxy, type RewritingProxy } from './rewriting-proxy.js';

/*
 * A capture the gateway answers for less than it was asked (spec 001: the capture answer states its amount in
 * `orderInformation.amountDetails.totalAmount`; a capture below the authorization makes the gateway reverse the rest
 * itself). The sandbox always captures what it is asked, so a proxy in front of a standalone sandbox rewrites the
 * first capture's answer to 2.00 of the 3.00 the meter asked; every other answer is left as it is. The terminal must
 * take the answer's amount as what was paid — the customer's receipt and screen, the journal and the operator's
 * listing and refunds — and send nothing for the rest of the hold.
 */

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
const hosts: TerminalHost[] = [];

const CAPTURE_PATH = /^\/pts\/v2\/payments\/[^/]+\/captures$/;

/** Rewrites the first capture's answer to `capturedAmount`; every other answer is left as it is. */
async function startProxy(target: string, capturedAmount: string): Promise<void> {
  let rewritten = false;
  proxy = await startRewritingProxy(target, (req, answer) => {
    const json = answer as {
      status?: string;
      orderInformation?: { amountDetails?: { totalAmount?: string } };
    };
    if (rewritten || req.method !== 'POST' || !CAPTURE_PATH.test(req.url)) return undefined;
    if (json.status !== 'PENDING' || !json.orderInformation?.amountDetails) return undefined;
    rewritten = true;
    json.orderInformation.amountDetails.totalAmount = capturedAmount;
    return json;
  });
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
  await startProxy(sandbox.url, '2.00');
  dir = mkdtempSync(join(tmpdir(), 'pt-partial-capture-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A meter session of 60 minutes ended after 45 (3.00 at 1.50 per started 30 minutes, of the 12.00 held; the proxy
 * answers the capture 2.00): the screen at the end of the session.
 */
async function sessionEndedAfter45Minutes(
  links: ConfigInput['links'] = {},
  ends: readonly string[] = ['approved', 'declined', 'error'],
): Promise<{ host: TerminalHost; ended: TerminalSnapshot }> {
  const parking = { nowMs: Date.UTC(2030, 0, 15, 9, 0, 0) };
  const host = await createTerminalHost(
    parseConfig({
      terminal: { model: 'meter' },
      reader: { sim: { presentDelayMs: 20 } },
      journal: { path: 'journal.db', resolutionRetryMs: 100 },
      // The gateway is reached through the proxy; its pages are the sandbox's own.
      links: { hostedPageHosts: [new URL(sandbox.url).host], ...links },
    }),
    {
      logger: silentLogger(),
      cwd: dir,
      gatewayUrlOverride: proxy.url,
      parkingClock: { now: () => parking.nowMs },
    },
  );
  hosts.push(host);
  await waitForScreen(host, (v) => v.customer.screen === 'idle', 'the attract screen');
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await sendEvent(host, { type: 'CONFIRM' });
  await waitForScreen(host, (v) => v.customer.screen === 'session', 'the session');
  parking.nowMs += 45 * 60_000;
  await sendEvent(host, { type: 'END_SESSION' });
  const ended = await waitForScreen(host, (v) => ends.includes(v.customer.screen), 'the end of the session');
  return { host, ended };
}

describe('a meter capture the gateway answers for less than asked', () => {
  it('is recorded, shown, printed, listed and refunded for the amount captured, and nothing is sent for the rest', async () => {
    const { host, ended } = await sessionEndedAfter45Minutes();
    expect(ended.customer.screen).toBe('approved');
    expect(ended.customer.amount?.minor).toBe(200);
    const printed = ended.customer.receipt?.lines.map((l) => l.value).join('\n') ?? '';
    expect(printed).toContain('2.00');
    expect(printed).not.toContain('3.00');

    const capture = host.journal.list({ limit: 10 }).find((e) => e.service === 'capture');
    expect(capture).toMatchObject({ state: 'approved', amountMinor: 300, authorizedMinor: 200 });
    const pin = host.generatedOperatorPin ?? '';
    const listed = await host.operator({ pin, action: { type: 'transactions' } });
    expect(listed.ok && listed.value.type === 'transactions' && listed.value.transactions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          transactionId: capture?.transactionId,
          service: 'capture',
          amount: expect.objectContaining({ minor: 200 }) as unknown,
          allowed: expect.arrayContaining(['refund']) as unknown,
        }),
      ]),
    );
    // Above what was captured: refused; all of it: the 2.00 captured, not the 3.00 asked.
    expect(
      await host.operator({
        pin,
        action: { type: 'refund', transactionId: capture!.transactionId!, amountMinor: 250 },
      }),
    ).toMatchObject({ ok: true, value: { type: 'refund', code: 'REFUND_EXCEEDS_CAPTURED' } });
    expect(
      await host.operator({ pin, action: { type: 'refund', transactionId: capture!.transactionId! } }),
    ).toMatchObject({ ok: true, value: { type: 'refund', outcome: 'approved' } });
    const refund = host.journal.list({ limit: 10 }).find((e) => e.service === 'refund-capture');
    expect(refund).toMatchObject({ state: 'approved', amountMinor: 200 });

    // The rest of the hold is the gateway's to release (a capture below the authorization): no reversal, no follow-up.
    await host.settle(5_000);
    expect(host.journal.list({ limit: 10 }).map((e) => e.service)).not.toContain('reversal');
    expect(host.followUps.open()).toEqual([]);
    expect(
      sandbox.consistency({ requireResolved: true }).problems.filter((p) => p.rule === 'OPEN_AUTHORIZATION'),
    ).toEqual([]);
  }, 30_000);
});

describe('a meter capture answered for less than asked, with pay later', () => {
  it('asks for the shortfall by a payment link at the end of the session', async () => {
    const { host, ended } = await sessionEndedAfter45Minutes({ payLater: true }, [
      'approved',
      'declined',
      'error',
      'pay-by-phone',
    ]);
    // 3.00 asked, 2.00 captured: the 1.00 the capture did not take is owed, as a declined capture's fee would be.
    expect(ended.customer.screen).toBe('pay-by-phone');
    expect(ended.customer.amount?.minor).toBe(100);
    expect(ended.customer.payByPhone?.url).toEqual(expect.any(String));
    expect(host.journal.list({ limit: 10 }).find((e) => e.service === 'capture')).toMatchObject({
      state: 'approved',
      amountMinor: 300,
      authorizedMinor: 200,
    });
  });
});
