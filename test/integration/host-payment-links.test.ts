import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { personalDataIn } from '../../src/gateway/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { openJournal, PaymentLinkStore } from '../../src/journal/index.js';
import { findPersonalData } from '../../src/sandbox/personal-data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { freePort, hostedPageAnswer } from './link-harness.js';
import { startRewritingProxy } from './rewriting-proxy.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function until<T>(what: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Pays on the sandbox's hosted page the way its form does. */
async function payOnHostedPage(url: string): Promise<string> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  return hostedPageAnswer(url);
}

/** Counts every request the terminal's gateway client sends. */
class CountingAgent extends Agent {
  requests = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests += 1;
    return super.dispatch(options, handler);
  }
}

async function host(
  config: ConfigInput,
  extra: { gatewayUrlOverride?: string; dispatcher?: Dispatcher; cwd?: string } = {},
) {
  const cwd = extra.cwd ?? mkdtempSync(join(tmpdir(), 'pt-links-'));
  const h: TerminalHost = await createTerminalHost(parseConfig(config), {
    logger: silentLogger(),
    cwd,
    ...(extra.gatewayUrlOverride ? { gatewayUrlOverride: extra.gatewayUrlOverride } : {}),
    ...(extra.dispatcher ? { gatewayDispatcher: extra.dispatcher } : {}),
  });
  open.push(h);
  return { h, cwd };
}

describe('pay by phone with a payment link, through the embedded sandbox', () => {
  it('creates the link, is paid on the hosted page, learns it from the signed notification and deactivates the link', async () => {
    // No links configuration: with the embedded sandbox the terminal listens on a free local port by itself.
    const { h } = await host({});
    expect(h.links.available).toBe(true);
    const view = await h.links.createForFee({
      reference: 'T-202611241305',
      amountMinor: 450,
      currency: 'GBP',
    });
    // The purchase number carries the terminal id (terminal.id, default PT000001): unique in the merchant's fleet.
    expect(view).toMatchObject({ state: 'active', linkId: 'PT000001_T-202611241305' });
    expect(view.url).toBe(`${h.sandboxUrl!}/pay/PT000001_T-202611241305`);
    expect(view.domain).toBe(new URL(h.sandboxUrl!).host);
    const link = await h.gateway.paymentLinks.get(view.linkId);
    expect(link).toMatchObject({ linkType: 'PURCHASE', totalAmountMinor: 450, currency: 'GBP' });
    expect(link.lineItems).toEqual([
      expect.objectContaining({ productName: 'Parking', unitPriceMinor: 450 }),
    ]);

    const waiting = h.links.watch(view.linkId);
    expect(await payOnHostedPage(view.url!)).toContain('Payment approved');
    expect(await waiting).toMatchObject({ state: 'paid' });
    // One use: INACTIVE at the gateway, and the hosted page no longer takes a payment.
    await until(async () =>
      (await h.gateway.paymentLinks.get(view.linkId)).status === 'INACTIVE' ? true : undefined,
    );
    expect((await fetch(view.url!)).status).toBe(404);
    await until(() => (h.links.get(view.linkId)?.closeReason === 'paid' ? true : undefined));
    const audit = h.audit.list().filter((r) => r.subject === view.linkId);
    expect(audit.map((r) => `${r.action}:${r.code ?? ''}`)).toEqual([
      'link-paid:PAID',
      'link-deactivate:paid',
    ]);
    expect(JSON.stringify(h.audit.list())).not.toContain('4111111111111111');
  });

  it('deactivates the link when the customer cancels', async () => {
    const { h } = await host({ links: { notifications: { listen: { port: 0 } } } });
    const view = await h.links.createForFee({ reference: 'T-2', amountMinor: 300, currency: 'GBP' });
    expect(await h.links.cancel(view.linkId)).toMatchObject({
      state: 'deactivated',
      closeReason: 'cancelled',
    });
    expect((await h.gateway.paymentLinks.get(view.linkId)).status).toBe('INACTIVE');
  });

  it('refuses to start with a notification key file that holds no key, naming the file', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-links-'));
    for (const [name, text] of [
      ['empty.key', '\n'],
      ['not-base64.key', 'not a base64 key!'],
    ] as const) {
      writeFileSync(join(cwd, name), text, { mode: 0o600 });
      await expect(
        host({ links: { notifications: { listen: { port: 0 }, secretFile: name } } }, { cwd }),
      ).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        key: 'links.notifications.secretFile',
        file: join(cwd, name),
      });
    }
  });

  it('refuses hostile link values before a single request leaves, and lets ordinary ones through', async () => {
    const counter = new CountingAgent();
    open.push(counter);
    const { h } = await host({}, { dispatcher: counter });
    const hostile = [
      'card 4111 1111 1111 1111',
      '5555-5555-5555-4444',
      '4111.1111.1111.1111',
      'ref 2222 4200 0000 1113',
      'SSN 123-45-6789',
      'AB 12 34 56 C',
      '221B Baker Street',
      'Hauptstraße 5',
      'CVV 123',
      'security code 1234',
    ];
    const before = counter.requests;
    for (const reference of hostile)
      await expect(
        h.links.createForFee({ reference, amountMinor: 450, currency: 'GBP' }),
      ).rejects.toMatchObject({
        code: 'LINK_PERSONAL_DATA',
      });
    expect(counter.requests).toBe(before);
    const ok = await h.links.createForFee({
      reference: 'Level 3 car park',
      amountMinor: 450,
      currency: 'GBP',
    });
    expect(ok.state).toBe('active');
    expect(counter.requests).toBe(before + 1);
    // The merchant was never suspended by the gateway.
    expect(h.sandbox!.ledger().merchants).not.toContainEqual(expect.objectContaining({ suspended: true }));
  });

  it('refuses at least everything the gateway sandbox would suspend the merchant for', () => {
    const pieces = fc.constantFrom(
      '4111 1111 1111 1111',
      '4111-1111-1111-1111',
      '123-45-6789',
      'QQ123456C',
      'DE89 3704 0044 0532 0130 00',
      '12 High Street',
      '5 rue de Rivoli',
      'Parking',
      'Zone B',
      '2026',
      '450',
      ' ',
      '-',
    );
    fc.assert(
      fc.property(fc.array(pieces, { minLength: 1, maxLength: 5 }), (parts) => {
        const text = parts.join(' ');
        if (findPersonalData(text) !== undefined) expect(personalDataIn(text), text).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });
});

describe('payment links of two terminals of one merchant', () => {
  it('two terminals link the same reference in the same second: each gets its own link, and each customer pays', async () => {
    const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    open.push(sandbox);
    // A fleet shares one merchant id at the gateway; meter and gate references are unique only to the second.
    const a = await host({ terminal: { id: 'PT000001' } }, { gatewayUrlOverride: sandbox.url });
    const b = await host({ terminal: { id: 'PT000002' } }, { gatewayUrlOverride: sandbox.url });
    const reference = 'M20261124T130500';
    const first = await a.h.links.createForFee({ reference, amountMinor: 450, currency: 'GBP' });
    const second = await b.h.links.createForFee({ reference, amountMinor: 450, currency: 'GBP' });
    expect(first).toMatchObject({ state: 'active', reference });
    expect(second).toMatchObject({ state: 'active', reference });
    expect([first.linkId, second.linkId]).toEqual([`PT000001_${reference}`, `PT000002_${reference}`]);
    expect((await a.h.gateway.paymentLinks.get(first.linkId)).status).toBe('ACTIVE');
    expect((await b.h.gateway.paymentLinks.get(second.linkId)).status).toBe('ACTIVE');
    expect(await payOnHostedPage(first.url!)).toContain('Payment approved');
    expect(await payOnHostedPage(second.url!)).toContain('Payment approved');
  });
});

describe('the hosted page a payment link sends the customer to', () => {
  /** A sandbox behind a proxy that sets the `paymentLink` of each create answer with `page(id, answered)`. */
  async function behindProxy(page: (id: string, answered: string) => string) {
    const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    open.push(sandbox);
    const proxy = await startRewritingProxy(sandbox.url, (request, answer) => {
      if (request.method !== 'POST' || request.url !== '/ipl/v2/payment-links') return undefined;
      const a = answer as { id?: string; purchaseInformation?: { paymentLink?: string } };
      if (a.id === undefined || a.purchaseInformation?.paymentLink === undefined) return undefined;
      return {
        ...a,
        purchaseInformation: {
          ...a.purchaseInformation,
          paymentLink: page(a.id, a.purchaseInformation.paymentLink),
        },
      };
    });
    open.push(proxy);
    return { sandbox, proxy };
  }

  it('refuses a create answered with a page on a host other than the gateway’s: the customer is told no, the link deactivated', async () => {
    const { proxy } = await behindProxy((id) => `https://pay.attacker.example/pay/${id}`);
    const { h } = await host(
      { links: { notifications: { listen: { port: 0 } } } },
      { gatewayUrlOverride: proxy.url },
    );
    await expect(
      h.links.createForFee({ reference: 'T-PHISH', amountMinor: 450, currency: 'GBP' }),
    ).rejects.toMatchObject({ code: 'LINK_UNAVAILABLE' });
    const linkId = 'PT000001_T-PHISH';
    expect(h.links.get(linkId)?.url).toBeUndefined();
    // The link exists at the gateway: the sweep deactivates it, as for any create of unknown outcome.
    await h.links.sweep();
    expect((await h.gateway.paymentLinks.get(linkId)).status).toBe('INACTIVE');
  });

  it('shows a page on a configured host, and still refuses one elsewhere or on another port', async () => {
    let target = (_id: string, answered: string) => answered;
    const { sandbox, proxy } = await behindProxy((id, answered) => target(id, answered));
    const { h } = await host(
      { links: { hostedPageHosts: [new URL(sandbox.url).host], notifications: { listen: { port: 0 } } } },
      { gatewayUrlOverride: proxy.url },
    );
    const shown = await h.links.createForFee({ reference: 'T-OK', amountMinor: 450, currency: 'GBP' });
    expect(shown.url).toBe(`${sandbox.url}/pay/PT000001_T-OK`);
    for (const [reference, page] of [
      ['T-PORT', (id: string) => `http://127.0.0.1:1/pay/${id}`],
      ['T-USER', (id: string) => `http://user@${new URL(sandbox.url).host}/pay/${id}`],
      ['T-ELSE', (id: string) => `https://pay.attacker.example/pay/${id}`],
    ] as const) {
      target = page;
      await expect(
        h.links.createForFee({ reference, amountMinor: 450, currency: 'GBP' }),
      ).rejects.toMatchObject({ code: 'LINK_UNAVAILABLE' });
    }
  });
});

describe('payment links across a restart', () => {
  it('after a restart a pay-later link within its wait is watched again and its payment settles it; a fee link and an expired one are deactivated, one never sent is failed', async () => {
    const port = await freePort();
    const sandbox: Sandbox = await startSandbox({
      port: 0,
      logger: silentLogger(),
      webhookUrl: `http://127.0.0.1:${port}/payment-links/notifications`,
    });
    open.push(sandbox);
    const config: ConfigInput = { links: { notifications: { listen: { port } } } };
    // Against a gateway of its own, the terminal receives notifications only where configured.
    expect((await host({}, { gatewayUrlOverride: sandbox.url })).h.links.available).toBe(false);
    const first = await host(config, { gatewayUrlOverride: sandbox.url });
    const view = await first.h.links.createForFee({
      reference: 'S-77',
      amountMinor: 600,
      currency: 'GBP',
      purpose: 'pay-later',
    });
    const fee = await first.h.links.createForFee({ reference: 'S-79', amountMinor: 600, currency: 'GBP' });
    const expired = await first.h.links.createForFee({
      reference: 'S-80',
      amountMinor: 600,
      currency: 'GBP',
    });
    await first.h.close();
    open.splice(open.indexOf(first.h), 1);
    // While the terminal was down: S-80's wait ran out, and S-78 was journaled by a process that died before sending.
    const journal = openJournal(join(first.cwd, 'var/journal.db'));
    journal.db.prepare('UPDATE payment_links SET watch_until = 1 WHERE link_id = ?').run(expired.linkId);
    new PaymentLinkStore(journal).begin({
      linkId: 'PT000001_S-78',
      reference: 'S-78',
      purpose: 'fee',
      amountMinor: 600,
      currency: 'GBP',
      watchUntilMs: Date.now() + 600_000,
    });
    journal.close();

    const second = await host(config, { gatewayUrlOverride: sandbox.url, cwd: first.cwd });
    expect(second.h.links.get(view.linkId)).toMatchObject({ state: 'active', closing: false });
    // A fee link's session did not survive the restart: deactivated at once.
    expect(second.h.links.get(fee.linkId)).toMatchObject({ state: 'deactivated', closeReason: 'recovery' });
    expect((await second.h.gateway.paymentLinks.get(fee.linkId)).status).toBe('INACTIVE');
    expect(second.h.audit.list().map((r) => `${r.action}:${r.subject ?? ''}:${r.code ?? ''}`)).toContain(
      `recovery:${view.linkId}:link-watched`,
    );
    expect(second.h.links.get(expired.linkId)).toMatchObject({
      state: 'deactivated',
      closeReason: 'recovery',
    });
    expect((await second.h.gateway.paymentLinks.get(expired.linkId)).status).toBe('INACTIVE');
    expect(second.h.links.get('PT000001_S-78')).toMatchObject({ state: 'failed' });
    const waiting = second.h.links.watch(view.linkId);
    expect(await payOnHostedPage(view.url!)).toContain('Payment approved');
    expect(await waiting).toMatchObject({ state: 'paid' });
    await until(async () =>
      (await second.h.gateway.paymentLinks.get(view.linkId)).status === 'INACTIVE' ? true : undefined,
    );
  });
});
