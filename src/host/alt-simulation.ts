import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseConfig,
  SPEC_PROFILES,
  type AltProfileConfig,
  type Config,
  type ConfigInput,
} from '../config/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { toDecimalString } from '../money/index.js';
import type { LedgerRequest } from '../sandbox/index.js';
import type { AltSaleView } from './alt-payment-desk.js';
import { waitFor } from './drive.js';
import {
  recordedMessage,
  reportedLedger,
  type SimulatedMessage,
  type SimulationResult,
} from './simulation.js';
import { createTerminalHost } from './terminal-host.js';

/**
 * `parking-terminal simulate kiosk --alt-method N`: an alternative-method sale of spec 001 profile N through the real
 * host against the embedded sandbox — AP_SALE, the customer completes the sandbox's payment page, the clock moves on
 * by the status-check interval, AP_STATUS sees SETTLED, then a partial AP_REFUND. The terminal and the sandbox share
 * one moved clock (signed requests carry dates), so the run takes a second, not an hour.
 */

/** What profile N is configured as when the configuration does not name it: spec 001's values, neutral names. */
export function defaultAltProfile(profile: number): AltProfileConfig {
  const spec = SPEC_PROFILES[profile];
  return {
    profile,
    methodName: `METHOD_${profile}`,
    // Spec 001 does not show the payment type names of profiles 2 and 4 nor the countries of 6 to 8.
    ...(spec?.paymentTypeName === undefined
      ? { paymentTypeName: profile === 4 ? 'eWallet' : 'instantCode' }
      : {}),
    ...(spec?.country === undefined ? { country: profile === 8 ? 'ID' : 'NL' } : {}),
    // Profile 8 takes IDR, MYR or PHP: one must be chosen.
    ...(profile === 8 ? { currency: 'IDR' } : {}),
  };
}

/** The demonstration customer (spec 001 fields; profile 3 also needs an address and a phone number). */
const CUSTOMER = {
  email: 'driver@example.com',
  firstName: 'Alex',
  lastName: 'Driver',
  address1: 'Stationsplein 1',
  phoneNumber: '+31 20 555 0100',
};

/** A settled sale of 12.50 in the profile's currency, refunded by 5.00. */
const SALE_MINOR = 1250;
const REFUND_MINOR = 500;

function serviceOf(r: LedgerRequest): string {
  const actions = (r.body as { processingInformation?: { actionList?: unknown } } | undefined)
    ?.processingInformation?.actionList;
  const action: unknown = Array.isArray(actions) ? (actions as unknown[])[0] : actions;
  return typeof action === 'string' ? action : '';
}

export async function runAltMethodSimulation(
  profile: number,
  options: { logger?: Logger; config?: ConfigInput } = {},
): Promise<SimulationResult & { altSale?: AltSaleView }> {
  const dir = mkdtempSync(join(tmpdir(), 'pt-simulate-alt-'));
  const base = options.config ?? {};
  const configured = base.alternativeMethods?.profiles?.find((p) => p.profile === profile);
  const config: Config = parseConfig({
    ...base,
    terminal: { ...base.terminal, model: 'kiosk' },
    reader: { ...base.reader, kind: 'sim' },
    gateway: { ...base.gateway, kind: 'sandbox' },
    journal: { ...base.journal, path: join(dir, 'journal.db') },
    offline: { ...base.offline, keyFile: join(dir, 'offline.key') },
    alternativeMethods: {
      ...base.alternativeMethods,
      profiles: [configured ?? defaultAltProfile(profile)],
    },
  });
  let offsetMs = 0;
  const host = await createTerminalHost(config, {
    logger: options.logger ?? silentLogger(),
    cwd: dir,
    now: () => new Date(Date.now() + offsetMs),
  });
  try {
    const sandbox = host.sandbox;
    if (!sandbox) throw new Error('the simulation needs the embedded sandbox');
    await waitFor(host, ['idle'], 10_000);
    const desk = host.altPayments;
    const sale = await desk.start(profile, {
      code: `ALT-${profile}-${Date.now().toString(36).toUpperCase()}`,
      amountMinor: SALE_MINOR,
      customer: CUSTOMER,
    });
    let view = sale;
    if (sale.state === 'PENDING' && sale.paymentUrl !== undefined) {
      // The customer pays on the sandbox's page (its own form, as a phone's browser would post it).
      const page = await fetch(sale.paymentUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=pay',
      });
      if (page.status !== 200) throw new Error(`the sandbox page answered ${page.status}`);
      // The status check comes no sooner than spec 001 allows: move both clocks to the time it is due.
      const due = desk.nextCheckAt() ?? Date.now() + offsetMs;
      const step = Math.max(0, due - (Date.now() + offsetMs));
      offsetMs += step;
      sandbox.advanceClock(step);
      await desk.runDue();
      view = desk.get(sale.id) ?? sale;
      if (view.state === 'SETTLED') {
        await desk.refund(sale.id, REFUND_MINOR);
        view = desk.get(sale.id) ?? view;
      }
    }
    await host.settle(30_000);
    const messages: SimulatedMessage[] = sandbox
      .ledger()
      .transactions.flatMap((t) => t.requests)
      .filter((r) => r.path.startsWith('/pts/'))
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      .map((r) => recordedMessage(r, serviceOf(r), (r.response as { status?: unknown } | undefined)?.status));
    const money = (minor: number): string => `${toDecimalString(minor, view.currency)} ${view.currency}`;
    return {
      model: 'kiosk',
      messages,
      outcome: {
        screen: 'alt-method',
        title: `${view.label} (profile ${profile})`,
        message: `${view.state}; ${money(view.settledMinor)} settled, ${money(view.refundedMinor)} refunded`,
      },
      altSale: view,
      ledger: reportedLedger(sandbox),
    };
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
