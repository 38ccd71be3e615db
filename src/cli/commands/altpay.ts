import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import type { GatewayClient } from '../../gateway/index.js';
import {
  ALT_SALE_STATES,
  AltPaymentDesk,
  AltPaymentError,
  AltSaleViews,
  type AltSaleView,
} from '../../host/alt-payment-desk.js';
import { AuditTrail } from '../../host/audit-trail.js';
import { gatewayTransmitter } from '../../host/gateway-adapters.js';
import { settleConfiguredRotation } from '../../host/pending-rotation.js';
import { openAltSalesReadOnly, type AltSaleState } from '../../journal/alt-sales.js';
import { AuditStore, JournaledSender, openJournal } from '../../journal/index.js';
import { AmountError, parseDecimal } from '../../money/index.js';
import { parseCommandArgs } from '../args.js';
import { commandGatewayUrl, commandLogger, connectConfiguredGateway } from '../gateway-access.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const USAGE = `parking-terminal altpay list [--state S] [--config FILE]
parking-terminal altpay show ID [--config FILE]
parking-terminal altpay refund ID [--amount X] [--gateway URL] [--config FILE]
  alternative-method sales of spec 001 (pending, settled, funded, failed, abandoned) and their refunds
  list          {"sales": [...]}, newest first; --state PENDING|SETTLED|FUNDED|FAILED|ABANDONED|unknown (repeatable
                as a comma list)
  show ID       {"sale": {...}} with its refunds; list and show open the journal read-only, safe while the terminal
                runs
  refund ID     AP_REFUND of --amount X (a decimal in the sale's currency, e.g. 5.00; default: all that remains),
                within the settled amount; journaled before it is sent, never resent. Refused while the terminal
                runs (its operator panel refunds then). Exit 1 when the refund failed or its outcome is unknown
                (the terminal's recovery voids it at its next start)
  --gateway URL base URL of the gateway (default gateway.baseUrl; required with the embedded sandbox)`;

function parseStates(value: string | undefined): AltSaleState[] | undefined {
  if (value === undefined) return undefined;
  const states = value.split(',').map((s) => s.trim());
  for (const s of states)
    if (!ALT_SALE_STATES.includes(s as AltSaleState))
      throw new UsageError('BAD_ARGUMENTS', `--state takes ${ALT_SALE_STATES.join(', ')}; got "${s}"`);
  return states as AltSaleState[];
}

function parseId(value: string | undefined): number {
  const n = value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError('BAD_ARGUMENTS', 'ID is the number of a sale');
  return n;
}

/** `parking-terminal altpay list|show|refund`. */
export function createAltPayCommand(deps: { now?: () => Date; gateway?: GatewayClient } = {}): Command {
  return {
    name: 'altpay',
    summary: 'alternative-method sales (spec 001): list, show, refund',
    usage: USAGE,
    async run(args, io) {
      const { values, positionals } = parseCommandArgs(args, {
        config: { type: 'string' },
        state: { type: 'string' },
        amount: { type: 'string' },
        gateway: { type: 'string' },
      });
      const [action, idText, ...extra] = positionals;
      if (extra.length > 0 || (action !== 'list' && action !== 'show' && action !== 'refund'))
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: altpay list | altpay show ID | altpay refund ID (see --help)',
        );
      if (action === 'list' && idText !== undefined)
        throw new UsageError('BAD_ARGUMENTS', 'list takes no ID');
      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const journalPath = resolve(io.cwd, config.journal.path);
      const now = deps.now ?? (() => new Date());

      if (action === 'list' || action === 'show') {
        if (values.amount !== undefined || values.gateway !== undefined)
          throw new UsageError('BAD_ARGUMENTS', '--amount and --gateway apply to refund');
        const states = parseStates(values.state);
        const id = action === 'show' ? parseId(idText) : undefined;
        // Reading must not create a journal where none exists, nor change one (read-only beside the terminal).
        if (!existsSync(journalPath)) {
          if (action === 'show')
            throw new UsageError('ALT_NOT_FOUND', `no alternative-method sale ${String(id)}`);
          printJson(io, { sales: [] });
          return EXIT_OK;
        }
        const reader = openAltSalesReadOnly(journalPath);
        try {
          const views = new AltSaleViews(reader, config.alternativeMethods);
          if (id === undefined) {
            printJson(io, { sales: views.list(states ? { states } : {}) });
            return EXIT_OK;
          }
          const sale = views.get(id);
          if (!sale) throw new UsageError('ALT_NOT_FOUND', `no alternative-method sale ${id}`);
          printJson(io, { sale });
          return EXIT_OK;
        } finally {
          reader.close();
        }
      }

      const id = parseId(idText);
      const baseUrl =
        deps.gateway === undefined ? commandGatewayUrl(config, values.gateway, 'ALT_NO_GATEWAY') : undefined;
      const logger = commandLogger(config);
      const journal = openJournal(journalPath, { now, logger });
      let gateway: GatewayClient | undefined;
      try {
        // One sender per journal: refused while the terminal runs.
        journal.acquireSenderLock('parking-terminal altpay refund');
        // A key rotation a crash interrupted is finished or undone first: the gateway's OAuth grant is sealed under it.
        settleConfiguredRotation(journal, config, io.cwd);
        gateway =
          deps.gateway ??
          connectConfiguredGateway(config, { baseUrl: baseUrl ?? '', logger, cwd: io.cwd, now });
        const desk = new AltPaymentDesk({
          journal,
          sender: new JournaledSender(journal, gatewayTransmitter(gateway), { logger }),
          gateway,
          config: config.alternativeMethods,
          now,
          logger,
          audit: new AuditTrail(new AuditStore(journal), logger),
        });
        const before = desk.get(id);
        if (!before) throw new UsageError('ALT_NOT_FOUND', `no alternative-method sale ${id}`);
        const amountMinor = values.amount !== undefined ? parseAmount(values.amount, before) : undefined;
        const refund = await desk.refund(id, amountMinor).catch((e: unknown) => {
          if (e instanceof AltPaymentError) throw new UsageError(e.code, e.message);
          throw e;
        });
        printJson(io, { refund, sale: desk.get(id) });
        return refund.state === 'accepted' || refund.state === 'refunded' ? EXIT_OK : EXIT_FINDINGS;
      } finally {
        if (gateway !== undefined && deps.gateway === undefined) await gateway.close();
        journal.close();
      }
    },
  };
}

function parseAmount(text: string, sale: AltSaleView): number {
  try {
    return parseDecimal(text, sale.currency);
  } catch (e) {
    if (e instanceof AmountError)
      throw new UsageError('BAD_ARGUMENTS', `--amount: "${text}" is not an amount of ${sale.currency}`);
    throw e;
  }
}

export default createAltPayCommand();
