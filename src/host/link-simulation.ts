import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config, type ConfigInput } from '../config/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import type { LedgerRequest } from '../sandbox/index.js';
import type { LinkView } from './link-desk.js';
import { localDateTime } from './local-time.js';
import { send, waitFor } from './drive.js';
import {
  recordedMessage,
  reportedLedger,
  type SimulatedMessage,
  type SimulationResult,
} from './simulation.js';
import { createTerminalHost } from './terminal-host.js';

/**
 * `parking-terminal simulate kiosk --pay-by-link`: pay by phone through the real host against the embedded sandbox —
 * the kiosk customer enters a ticket and chooses pay by phone, the terminal creates the payment link (journaled
 * first) and shows it, the customer pays on the sandbox's hosted page with a test card (its own form post, as a
 * phone's browser sends it), the signed notification reaches the terminal's listener, the ticket is paid and the link
 * deactivated. The messages are the link API's requests, in order (an update named with the status it sets).
 */

/**
 * The customer's payment on the sandbox's hosted page, posted the way its form posts it (a phone's browser): a test
 * card that the sandbox approves unless another is given.
 */
export function payOnHostedPage(url: string, cardNumber = '4111 1111 1111 1111'): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ cardNumber, expiry: '12/30', securityCode: '123' }).toString(),
  });
}

/** The link API call a request is, in words. */
function serviceOf(r: LedgerRequest): string {
  if (r.path.startsWith('/pay/')) return 'hosted-page payment';
  if (r.method === 'POST') return 'payment-link create';
  if (r.method === 'GET') return 'payment-link get';
  // An update names its status at the top of the body (buildPaymentLinkBody), as the sandbox reads it.
  const status = (r.body as { status?: unknown } | undefined)?.status;
  return typeof status === 'string' ? `payment-link update ${status}` : 'payment-link update';
}

export async function runPayByLinkSimulation(
  options: { logger?: Logger; config?: ConfigInput; ticketMinutes?: number } = {},
): Promise<SimulationResult & { link?: LinkView & { gatewayStatus?: string } }> {
  const dir = mkdtempSync(join(tmpdir(), 'pt-simulate-link-'));
  const base = options.config ?? {};
  const config: Config = parseConfig({
    ...base,
    terminal: { ...base.terminal, model: 'kiosk' },
    reader: { ...base.reader, kind: 'sim' },
    gateway: { ...base.gateway, kind: 'sandbox' },
    journal: { ...base.journal, path: join(dir, 'journal.db') },
    offline: { ...base.offline, keyFile: join(dir, 'offline.key') },
    links: {
      ...base.links,
      payByPhone: { ...base.links?.payByPhone, enabled: true, models: ['kiosk'] },
    },
  });
  const host = await createTerminalHost(config, { logger: options.logger ?? silentLogger(), cwd: dir });
  try {
    const sandbox = host.sandbox;
    if (!sandbox) throw new Error('the simulation needs the embedded sandbox');
    await waitFor(host, ['idle'], 10_000);
    const minutes = options.ticketMinutes ?? 95;
    const ticket = `${localDateTime(new Date(Date.now() - minutes * 60_000), config.terminal.timezone).slice(0, 12)}0001`;
    await send(host, { type: 'START' });
    await send(host, { type: 'ENTER_TICKET', ticket });
    await waitFor(host, ['confirm'], 5_000);
    await send(host, { type: 'PAY_BY_LINK' });
    let last = await waitFor(host, ['pay-by-phone', 'confirm', 'error'], 15_000);
    const url = last.customer.payByPhone?.url;
    let link: (LinkView & { gatewayStatus?: string }) | undefined;
    if (last.customer.screen === 'pay-by-phone' && url !== undefined) {
      const linkId = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
      const page = await payOnHostedPage(url);
      if (page.status !== 200) throw new Error(`the hosted page answered ${page.status}`);
      last = await waitFor(host, ['approved', 'confirm', 'error'], 15_000);
      // One use: the link is INACTIVE at the gateway once the terminal has deactivated it.
      const deadline = Date.now() + 10_000;
      let gatewayStatus: string = (await host.gateway.paymentLinks.get(linkId)).status;
      while (Date.now() < deadline && gatewayStatus !== 'INACTIVE') {
        await new Promise((r) => setTimeout(r, 50));
        gatewayStatus = (await host.gateway.paymentLinks.get(linkId)).status;
      }
      const view = host.links.get(linkId);
      if (view !== undefined) link = { ...view, gatewayStatus };
    }
    await host.settle(30_000);
    const ledger = sandbox.ledger();
    const requests = [...ledger.transactions.flatMap((t) => t.requests), ...ledger.unmatchedRequests];
    const messages: SimulatedMessage[] = requests
      .filter((r) => r.path.startsWith('/ipl/') || r.path.startsWith('/pay/'))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      .map((r) => {
        const response = r.response as { status?: unknown; purchaseInformation?: { status?: unknown } };
        return recordedMessage(r, serviceOf(r), response?.status ?? response?.purchaseInformation?.status);
      });
    return {
      model: 'kiosk',
      messages,
      outcome: {
        screen: last.customer.screen,
        title: last.customer.title,
        message: last.customer.message,
      },
      ...(link !== undefined ? { link } : {}),
      ledger: reportedLedger(sandbox),
    };
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
