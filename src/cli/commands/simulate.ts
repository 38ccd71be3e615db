import { resolve } from 'node:path';
import { parseDecimal } from '../../money/index.js';
import { loadConfig } from '../../config/index.js';
import { runAltMethodSimulation } from '../../host/alt-simulation.js';
import { runPayByLinkSimulation } from '../../host/link-simulation.js';
import { runSimulation, type Scenario, type SimulatedModel } from '../../host/simulation.js';
import { parseCommandArgs, parseWholeNumber } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const MODELS: readonly SimulatedModel[] = ['meter', 'kiosk', 'tap-and-go', 'attended'];

/** Durations of the parking clock, in whole minutes (up to about ten weeks). */
function minutes(value: string | undefined, option: string, fallback: number): number {
  return parseWholeNumber(value, option, { unit: 'minutes', min: 0, max: 100_000, fallback });
}

/**
 * `--reversal-delay` is milliseconds, like `journal.timeoutReversalDelayMs` that it sets (same bounds, 0 to one hour;
 * reference/gateway.md §2: 60 000 by the gateway's rule).
 */
function reversalDelayMs(value: string | undefined): number {
  return parseWholeNumber(value, '--reversal-delay', {
    unit: 'milliseconds',
    min: 0,
    max: 3_600_000,
    fallback: 60_000,
  });
}

const command: Command = {
  name: 'simulate',
  summary: 'run a parking model end to end with the simulated reader against the in-process sandbox',
  usage: `parking-terminal simulate meter|kiosk|tap-and-go|attended [options]
  --card NAME          virtual card (default n2-contact; see README "Card readers")
  --minutes N          meter: duration chosen (default 60)
  --extend N           meter: extension during the stay (default none)
  --actual N           meter / tap-and-go: actual stay in minutes before ending (default: as paid / 45)
  --ticket-minutes N   kiosk: minutes since the ticket was taken (default 95)
  --lost-ticket        kiosk: pay the lost-ticket fee
  --amount D           attended: amount as a decimal (default 5.00)
  --credit             attended: a standalone credit instead of a sale
  --refund             kiosk / attended: refund the payment from operator mode afterwards
  --void               kiosk / attended: void the payment (or the refund) from operator mode afterwards
  --timeout            the first payment gets no usable answer: watch the timeout reversal / void
  --reversal-delay MS  wait before a timeout reversal (default 60000, gateway rule)
  --dcc card|local     kiosk / attended / meter: answer a currency conversion offer with the card's or the local
                       currency; without --config the terminal prices in EUR, which the sandbox converts for the
                       simulated N2 card's BIN (billed in JPY)
  --alt-method N       kiosk: an alternative-method sale of spec 001 profile N (1–8) instead of a card: AP_SALE,
                       the sandbox's payment page completed, AP_STATUS SETTLED after the 60-minute interval (the
                       clock is moved), a partial AP_REFUND; profile N from --config, else spec 001's values
  --pay-by-link        kiosk: pay by phone instead of a card: the payment link created, paid on the sandbox's
                       hosted page with a test card, the signed notification received, the ticket paid and the link
                       deactivated (one use); the output adds "link" (the terminal's record and gatewayStatus)
  --config FILE        start from this configuration (tariff, terminal …)
Prints {"model","messages":[{service,method,path,comments,amount,httpStatus,status}],"outcome","ledger"}; exit 1
when the sandbox ledger is inconsistent or an authorization is left open (neither captured nor reversed): the
problems are in ledger.consistency.problems.`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      card: { type: 'string' },
      minutes: { type: 'string' },
      extend: { type: 'string' },
      actual: { type: 'string' },
      'ticket-minutes': { type: 'string' },
      'lost-ticket': { type: 'boolean' },
      amount: { type: 'string' },
      credit: { type: 'boolean' },
      refund: { type: 'boolean' },
      void: { type: 'boolean' },
      timeout: { type: 'boolean' },
      'reversal-delay': { type: 'string' },
      dcc: { type: 'string' },
      'alt-method': { type: 'string' },
      'pay-by-link': { type: 'boolean' },
      config: { type: 'string' },
    });
    const model = positionals[0] as SimulatedModel | undefined;
    if (!model || !MODELS.includes(model) || positionals.length > 1)
      throw new UsageError('BAD_ARGUMENTS', `simulate takes one model: ${MODELS.join(', ')}`);
    if (values['alt-method'] !== undefined) {
      const profile = /^[1-8]$/.test(values['alt-method']) ? Number(values['alt-method']) : NaN;
      if (model !== 'kiosk' || Number.isNaN(profile))
        throw new UsageError(
          'BAD_ARGUMENTS',
          '--alt-method takes a profile 1–8 of spec 001, with the kiosk model',
        );
      const altResult = await runAltMethodSimulation(
        profile,
        values.config ? { config: loadConfig(resolve(io.cwd, values.config)) } : {},
      );
      printJson(io, altResult);
      return altResult.ledger.consistency.ok && altResult.altSale?.state === 'SETTLED'
        ? EXIT_OK
        : EXIT_FINDINGS;
    }
    if (values['pay-by-link'] === true) {
      if (model !== 'kiosk') throw new UsageError('BAD_ARGUMENTS', '--pay-by-link goes with the kiosk model');
      const linkResult = await runPayByLinkSimulation({
        ticketMinutes: minutes(values['ticket-minutes'], '--ticket-minutes', 95),
        ...(values.config ? { config: loadConfig(resolve(io.cwd, values.config)) } : {}),
      });
      printJson(io, linkResult);
      return linkResult.ledger.consistency.ok &&
        linkResult.outcome.screen === 'approved' &&
        linkResult.link?.state === 'paid' &&
        linkResult.link.gatewayStatus === 'INACTIVE'
        ? EXIT_OK
        : EXIT_FINDINGS;
    }
    const dcc = values.dcc;
    if (dcc !== undefined && dcc !== 'card' && dcc !== 'local')
      throw new UsageError('BAD_ARGUMENTS', '--dcc takes card or local');
    // The default GBP price has no conversion for any simulated card in the sandbox's DCC table; EUR has.
    const config = values.config
      ? loadConfig(resolve(io.cwd, values.config))
      : dcc !== undefined
        ? { terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276' } }
        : undefined;
    const currency = config?.terminal?.currency ?? 'GBP';
    let amountMinor = 500;
    if (values.amount !== undefined) {
      try {
        amountMinor = parseDecimal(values.amount, currency);
      } catch {
        throw new UsageError('BAD_ARGUMENTS', `--amount must be a decimal amount of ${currency}`);
      }
    }
    const scenario: Scenario = {
      model,
      card: values.card ?? 'n2-contact',
      minutes: minutes(values.minutes, '--minutes', 60),
      extend: minutes(values.extend, '--extend', 0),
      ...(values.actual !== undefined ? { actual: minutes(values.actual, '--actual', 0) } : {}),
      ticketMinutes: minutes(values['ticket-minutes'], '--ticket-minutes', 95),
      lostTicket: values['lost-ticket'] === true,
      amountMinor,
      credit: values.credit === true,
      refund: values.refund === true,
      void: values.void === true,
      timeout: values.timeout === true,
      reversalDelayMs: reversalDelayMs(values['reversal-delay']),
      ...(dcc !== undefined ? { dcc } : {}),
    };
    const result = await runSimulation(scenario, config ? { config } : {});
    printJson(io, result);
    return result.ledger.consistency.ok ? EXIT_OK : EXIT_FINDINGS;
  },
};
export default command;
