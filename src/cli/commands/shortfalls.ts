import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import type { FeeShortfallSummary } from '../../host/api.js';
import { acknowledgeFeeShortfalls, feeShortfalls } from '../../host/fee-shortfalls.js';
import { AuditStore, openAuditLogReadOnly, openJournal } from '../../journal/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const USAGE = `parking-terminal shortfalls list [--config FILE]
parking-terminal shortfalls acknowledge TRANSACTION_ID... [--config FILE]
  list          the fees not collected in full (the audit log's fee-shortfall: a capture that took less than
                owed, a tap-and-go fee not computable in its hold's currency, a tap-and-go stay that outlasted
                its hold and whose card entered again before its exit) that nobody has acknowledged:
                the list behind the operator status's count, with what was owed, captured and not collected;
                opens the journal read-only, safe while the terminal runs
  acknowledge   the operator has seen these (by the transactionId they are listed under): they leave the
                count; recorded in the audit log; exit 1 when one was not waiting for acknowledgement
  --config FILE configuration (JSON or YAML); embedded defaults otherwise`;

/** What the command prints of a fee shortfall: amounts in minor units of its currency, no card data. */
function shortfallView(f: FeeShortfallSummary): Record<string, unknown> {
  return {
    transactionId: f.transactionId,
    code: f.code,
    owedMinor: f.owed.minor,
    capturedMinor: f.captured.minor,
    shortfallMinor: f.shortfall.minor,
    currency: f.shortfall.currency,
    ...(f.authorizationTransactionId !== undefined
      ? { authorizationTransactionId: f.authorizationTransactionId }
      : {}),
    at: f.at,
  };
}

/**
 * `parking-terminal shortfalls list|acknowledge`: works while the terminal runs (SQLite WAL; `list` reads the journal
 * read-only, `acknowledge` makes short writes).
 */
export function createShortfallsCommand(deps: { now?: () => Date } = {}): Command {
  return {
    name: 'shortfalls',
    summary: 'fees not collected in full awaiting the operator: list them, acknowledge them (audited)',
    usage: USAGE,
    run(args, io) {
      const { values, positionals } = parseCommandArgs(args, { config: { type: 'string' } });
      const [action, ...ids] = positionals;
      if (
        (action !== 'list' && action !== 'acknowledge') ||
        (action === 'acknowledge' ? ids.length === 0 : ids.length > 0)
      )
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: shortfalls list | shortfalls acknowledge TRANSACTION_ID... (see shortfalls --help)',
        );
      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const journalPath = resolve(io.cwd, config.journal.path);
      if (!existsSync(journalPath)) {
        // Listing must not create a journal where none exists.
        if (action === 'acknowledge')
          throw new UsageError(
            'SHORTFALLS_NO_JOURNAL',
            `no journal at ${journalPath}: nothing to acknowledge`,
          );
        printJson(io, { shortfalls: [] });
        return Promise.resolve(EXIT_OK);
      }
      if (action === 'list') {
        // Read-only beside the terminal: no migration, no write.
        const log = openAuditLogReadOnly(journalPath);
        try {
          printJson(io, { shortfalls: feeShortfalls(log, config.terminal.locale).map(shortfallView) });
          return Promise.resolve(EXIT_OK);
        } finally {
          log.close();
        }
      }
      const journal = openJournal(journalPath, deps.now !== undefined ? { now: deps.now } : {});
      try {
        const audit = new AuditStore(journal);
        const results = acknowledgeFeeShortfalls(audit, ids);
        printJson(io, { acknowledged: results, feeShortfalls: audit.feeShortfallsAwaitingCount() });
        return Promise.resolve(results.every((r) => r.acknowledged) ? EXIT_OK : EXIT_FINDINGS);
      } finally {
        journal.close();
      }
    },
  };
}

export default createShortfallsCommand();
