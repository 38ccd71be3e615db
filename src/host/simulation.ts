import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config, type ConfigInput } from '../config/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { toDecimalString } from '../money/index.js';
import type { Fault, LedgerRequest, Sandbox } from '../sandbox/index.js';
import type { OperatorResponse, TerminalSnapshot } from './api.js';
import { localDateTime } from './local-time.js';
import { createTerminalHost } from './terminal-host.js';
import { END, send, waitFor, waitPastChoice, withGeneratedOperatorPin } from './drive.js';

export { SimulationError } from './drive.js';

export type SimulatedModel = 'meter' | 'kiosk' | 'tap-and-go' | 'attended';

/** One scenario of `parking-terminal simulate`. Times are minutes of the parking clock. */
export interface Scenario {
  model: SimulatedModel;
  /** Virtual card presented (devices/sim/cards.ts). */
  card: string;
  /** Meter: duration chosen. */
  minutes: number;
  /** Meter: extension chosen in the session (0: none). */
  extend: number;
  /** Meter and tap-and-go: the actual stay before END_SESSION / TAP_EXIT. */
  actual?: number;
  /** Kiosk: minutes since the ticket was taken; `lostTicket` uses the lost-ticket fee instead. */
  ticketMinutes: number;
  lostTicket: boolean;
  /** Attended: amount, minor units. */
  amountMinor: number;
  /** Operator follow-ons after the payment (kiosk, attended). */
  refund: boolean;
  void: boolean;
  /** Attended: a standalone credit of `amountMinor` instead of a sale. */
  credit: boolean;
  /** The first payment request gets no usable answer (sandbox fault after commit): recovery must resolve it. */
  timeout: boolean;
  /** Milliseconds before the timeout reversal of an unanswered authorization (gateway.md §2: 60 000). */
  reversalDelayMs: number;
  /**
   * The customer's answer when a currency conversion is offered: pay in the card's currency or the local one. Absent:
   * the local currency (the choice screen has no default, so the simulated customer must answer something).
   */
  dcc?: 'card' | 'local';
}

export interface SimulatedMessage {
  service: string;
  method: string;
  path: string;
  comments: string;
  amount?: string;
  httpStatus: number | null;
  status: string;
}

export interface SimulationResult {
  model: SimulatedModel;
  messages: SimulatedMessage[];
  outcome: { screen: string; title: string; message: string; operator?: OperatorResponse[] };
  ledger: {
    transactions: Array<{
      id: string;
      kind: string;
      comments?: string;
      status: string;
      currency: string;
      amounts: Record<string, number>;
      parentId?: string;
    }>;
    /** The sandbox's invariants with `requireResolved`: an authorization neither captured nor reversed is a problem. */
    consistency: { ok: boolean; problems: unknown[] };
  };
}

/**
 * The sandbox's ledger as a simulation reports it. At the end of a simulation every authorization must be captured or
 * reversed (issue 11, bug 8): a hold left on the customer's card is a finding, not a success.
 */
export function reportedLedger(sandbox: Sandbox): SimulationResult['ledger'] {
  return {
    transactions: sandbox.ledger().transactions.map((t) => ({
      id: t.id,
      kind: t.kind,
      ...(t.comments ? { comments: t.comments } : {}),
      status: t.status,
      currency: t.currency,
      amounts: { ...t.amounts },
      ...(t.parentId ? { parentId: t.parentId } : {}),
    })),
    consistency: sandbox.consistency({ requireResolved: true }),
  };
}

/**
 * A request the sandbox recorded, as a simulation lists it: `service` and `status` in the words of its API, the path
 * without its query, the amount of its `orderInformation` if it has one.
 */
export function recordedMessage(r: LedgerRequest, service: string, status: unknown): SimulatedMessage {
  const amount = (
    r.body as
      { orderInformation?: { amountDetails?: { totalAmount?: unknown; currency?: unknown } } } | undefined
  )?.orderInformation?.amountDetails;
  return {
    service,
    method: r.method,
    path: r.path.replace(/\?.*$/, ''),
    comments: '',
    ...(typeof amount?.totalAmount === 'string' && typeof amount.currency === 'string'
      ? { amount: `${amount.totalAmount} ${amount.currency}` }
      : {}),
    httpStatus: r.httpStatus,
    status: typeof status === 'string' ? status : '',
  };
}

/**
 * Runs one scenario with the real machine, the simulated reader and the in-process sandbox, on a parking clock that
 * jumps over the stay. The journal lives in a temporary directory that is removed afterwards.
 */
export async function runSimulation(
  scenario: Scenario,
  options: { logger?: Logger; config?: ConfigInput } = {},
): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pt-simulate-'));
  let offsetMs = 0;
  // The parking clock stands still but for the jumps the scenario makes: a stay of `--actual 120` lasts exactly 120
  // minutes, however many real milliseconds the run takes (a real second would start another tariff unit).
  const startedAtMs = Date.now();
  const parkingClock = { now: () => startedAtMs + offsetMs };
  const base = options.config ?? {};
  const config: Config = parseConfig({
    ...base,
    terminal: { ...withGeneratedOperatorPin(base.terminal ?? {}), model: scenario.model },
    reader: {
      ...base.reader,
      kind: 'sim',
      sim: { ...base.reader?.sim, card: scenario.card, presentDelayMs: 20 },
    },
    gateway: { ...base.gateway, kind: 'sandbox' },
    journal: {
      ...base.journal,
      path: join(dir, 'journal.db'),
      timeoutReversalDelayMs: scenario.reversalDelayMs,
      resolutionRetryMs: 500,
    },
    offline: { ...base.offline, keyFile: join(dir, 'offline.key') },
  });
  const host = await createTerminalHost(config, {
    logger: options.logger ?? silentLogger(),
    cwd: dir,
    parkingClock,
  });
  const waitMs = scenario.reversalDelayMs + 30_000;
  const operator: OperatorResponse[] = [];
  try {
    const pin = host.generatedOperatorPin ?? '';
    if (scenario.timeout) {
      const fault: Fault = {
        kind: 'timeout-502',
        path: scenario.credit ? '/pts/v2/credits' : '/pts/v2/payments',
        method: 'POST',
      };
      host.sandbox?.scheduleFaults([fault]);
    }
    await waitFor(host, ['idle'], 10_000);
    let last: TerminalSnapshot;
    switch (scenario.model) {
      case 'meter': {
        await send(host, { type: 'START' });
        await send(host, { type: 'CHOOSE_DURATION', minutes: scenario.minutes });
        await waitFor(host, ['confirm'], 5_000);
        await send(host, { type: 'CONFIRM' });
        last = await waitPastChoice(host, ['session', ...END], waitMs, scenario.dcc);
        if (last.customer.screen !== 'session') break;
        if (scenario.extend > 0) {
          await send(host, { type: 'EXTEND', minutes: scenario.extend });
          last = await waitPastChoice(host, ['session', ...END], waitMs, scenario.dcc);
          if (last.customer.screen !== 'session') break;
        }
        offsetMs = (scenario.actual ?? scenario.minutes + scenario.extend) * 60_000;
        await send(host, { type: 'END_SESSION' });
        last = await waitFor(host, END, waitMs);
        break;
      }
      case 'kiosk': {
        await send(host, { type: 'START' });
        if (scenario.lostTicket) await send(host, { type: 'LOST_TICKET' });
        else {
          const entered = new Date(Date.now() - scenario.ticketMinutes * 60_000);
          await send(host, {
            type: 'ENTER_TICKET',
            ticket: `${localDateTime(entered, config.terminal.timezone).slice(0, 12)}0001`,
          });
        }
        // A ticket within the grace period owes nothing: the machine shows its result (approved, "Nothing to pay")
        // without asking for a confirmation or a card (src/flows/kiosk.ts, state `quoted`).
        last = await waitFor(host, ['confirm', ...END], 5_000);
        if (last.customer.screen !== 'confirm') break;
        await send(host, { type: 'CONFIRM' });
        last = await waitPastChoice(host, END, waitMs, scenario.dcc);
        break;
      }
      case 'tap-and-go': {
        await send(host, { type: 'TAP_ENTRY' });
        last = await waitFor(host, ['session', ...END], waitMs);
        if (last.customer.screen !== 'session') break;
        await send(host, { type: 'DONE' });
        await waitFor(host, ['idle'], 5_000);
        offsetMs = (scenario.actual ?? 45) * 60_000;
        await send(host, { type: 'TAP_EXIT' });
        last = await waitFor(host, END, waitMs);
        break;
      }
      case 'attended': {
        // A standalone credit is started with the operator PIN (the one this start generated), as the attendant does.
        await send(host, scenario.credit ? { type: 'CREDIT', pin } : { type: 'START' });
        await waitFor(host, ['enter-amount'], 5_000);
        await send(host, { type: 'ENTER_AMOUNT', minor: scenario.amountMinor });
        await waitFor(host, ['confirm'], 5_000);
        await send(host, { type: 'CONFIRM' });
        last = await waitPastChoice(host, END, waitMs, scenario.dcc);
        break;
      }
    }
    const paid = host.journal
      .list({ limit: 100 })
      .find(
        (e) =>
          (e.service === 'sale' || e.service === 'capture' || e.service === 'credit') &&
          e.state === 'approved',
      );
    if (paid?.transactionId && (scenario.refund || scenario.void)) {
      let target = paid.transactionId;
      if (scenario.refund) {
        const r = await host.operator({ pin, action: { type: 'refund', transactionId: target } });
        if (r.ok) {
          operator.push(r.value);
          if (r.value.type === 'refund') target = r.value.transactionId;
        }
      }
      if (scenario.void) {
        const r = await host.operator({ pin, action: { type: 'void', transactionId: target } });
        if (r.ok) operator.push(r.value);
      }
    }
    await host.settle(waitMs);
    const journaled = host.journal
      .list({ limit: 1000 })
      .reverse()
      .map((e) => ({
        at: Date.parse(e.createdAt),
        message: {
          service: e.service,
          method: e.method,
          path: e.path,
          comments: e.comments,
          ...(e.amountMinor !== undefined && e.currency
            ? { amount: `${toDecimalString(e.amountMinor, e.currency)} ${e.currency}` }
            : {}),
          httpStatus: e.httpStatus ?? null,
          status: e.status ?? e.resolution ?? e.state,
        },
      }));
    // DCC offers move no money and are not journaled: the host keeps them apart; merged in time order (an offer
    // goes before the payment it is for).
    const offers = host.dcc.exchanges().map((x) => ({
      at: Date.parse(x.at),
      message: {
        service: x.service,
        method: x.method,
        path: x.path,
        comments: '',
        amount: `${toDecimalString(x.amountMinor, x.currency)} ${x.currency}`,
        httpStatus: x.httpStatus,
        status: x.status,
      },
    }));
    const messages: SimulatedMessage[] = [...offers, ...journaled]
      .sort((a, b) => a.at - b.at)
      .map((m) => m.message);
    return {
      model: scenario.model,
      messages,
      outcome: {
        screen: last.customer.screen,
        title: last.customer.title,
        message: last.customer.message,
        ...(operator.length ? { operator } : {}),
      },
      ledger: reportedLedger(host.sandbox!),
    };
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
