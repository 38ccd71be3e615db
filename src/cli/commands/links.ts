import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, type Config } from '../../config/index.js';
import { GatewayError, isLinkId, MAX_LIST_LIMIT, type GatewayClient } from '../../gateway/index.js';
import { ownLink } from '../../host/link-ids.js';
import { settleRotationBeforeReading } from '../../host/pending-rotation.js';
import { LinkDeskError, paymentLinkPage, paymentLinkSummary, setLinkStatus } from '../../host/link-status.js';
import {
  AuditStore,
  openJournal,
  openPaymentLinksReadOnly,
  PaymentLinkStore,
  type SqliteJournal,
} from '../../journal/index.js';
import type { Logger } from '../../log/index.js';
import { parseCommandArgs } from '../args.js';
import { commandGatewayUrl, commandLogger, connectConfiguredGateway } from '../gateway-access.js';
import { EXIT_FINDINGS, EXIT_OK, printError, printJson, UsageError, type Command } from '../output.js';

const DEFAULT_LIMIT = 100;

const USAGE = `parking-terminal links list [--offset N] [--limit N] [--status ACTIVE|INACTIVE] [--json] [--config FILE] [--gateway URL]
parking-terminal links show ID [--json] [--config FILE] [--gateway URL]
parking-terminal links deactivate ID [--json] [--config FILE] [--gateway URL]
parking-terminal links reactivate ID [--json] [--config FILE] [--gateway URL]
  payment links of the merchant at the gateway (spec 000), with the terminal's own record of the links it created
  list          one page of the gateway's list (offset/limit paging, limit 1…${MAX_LIST_LIMIT}, default ${DEFAULT_LIMIT}):
                {"offset", "limit", "totalLinks", "next": {offset, limit}?, "links": [{id, status, linkType,
                purchaseNumber, amountMinor, currency, createdDate, url?, terminal?}]}
  show ID       one link: {"link": {…, lineItems, terminal?}}; terminal = the journal's record (state, reference,
                purpose, closeReason, paymentId, watchUntil) when this terminal created it; list and show open the
                journal read-only, safe while the terminal runs
  deactivate ID set the link INACTIVE (every field repeated, spec 000); recorded in the audit log
  reactivate ID set it ACTIVE again; a link of this terminal is watched again by the running terminal (its
                sweep) for links.waitSeconds; a paid one is refused (LINK_NOT_ALLOWED: a link is paid once), and
                so is one of this terminal's id that its journal (journal.path) has no record of;
                recorded in the audit log
  --json        JSON output (the default: every diagnostic command prints one JSON document)
  --config FILE configuration (JSON or YAML); embedded defaults otherwise
  --gateway URL base URL of the gateway (default gateway.baseUrl; required with the embedded sandbox, which lives
                inside the running terminal — give the standalone sandbox's URL)
  exit 0 ok, 1 the gateway refused or failed (error document), 2 bad input`;

/** What `links` needs of the gateway; `close` releases it (injected by tests). */
export type ConnectLinks = (
  config: Config,
  options: { baseUrl: string; logger: Logger; cwd: string },
) => Pick<GatewayClient, 'paymentLinks' | 'close'>;

const connectGateway: ConnectLinks = connectConfiguredGateway;

function wholeNumber(
  value: string | undefined,
  option: string,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `${option} takes a whole number from ${min} to ${max}, got "${value}"`,
    );
  return n;
}

/**
 * The error document of a gateway failure or of a change refused for the terminal's link (exit 1); other errors go up
 * (exit 2 by main).
 */
function gatewayFailure(io: Parameters<Command['run']>[1], e: unknown): number {
  if (e instanceof LinkDeskError) {
    printError(io, e.code, e.message);
    return EXIT_FINDINGS;
  }
  if (!(e instanceof GatewayError)) throw e;
  const code = e.code === 'GW_NOT_FOUND' ? 'LINK_NOT_FOUND' : e.code;
  printError(io, code, e.message, {
    ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
    ...('field' in e && typeof e.field === 'string' ? { field: e.field } : {}),
  });
  return EXIT_FINDINGS;
}

/** `parking-terminal links list|show|deactivate|reactivate`, with the gateway connection injectable. */
export function createLinksCommand(deps: { connect?: ConnectLinks; now?: () => Date } = {}): Command {
  const connect = deps.connect ?? connectGateway;
  return {
    name: 'links',
    summary: 'payment links: list (offset/limit paging), show, deactivate, reactivate',
    usage: USAGE,
    async run(args, io) {
      const { values, positionals } = parseCommandArgs(args, {
        config: { type: 'string' },
        gateway: { type: 'string' },
        offset: { type: 'string' },
        limit: { type: 'string' },
        status: { type: 'string' },
        json: { type: 'boolean' },
      });
      const [action, id, ...extra] = positionals;
      const needsId = action === 'show' || action === 'deactivate' || action === 'reactivate';
      if (
        extra.length > 0 ||
        !(action === 'list' || needsId) ||
        (needsId ? id === undefined : id !== undefined)
      )
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: links list | links show|deactivate|reactivate ID (see links --help)',
        );
      if (id !== undefined && !isLinkId(id))
        throw new UsageError(
          'BAD_ARGUMENTS',
          'a payment link id is 1–64 letters, digits, . _ or -, not dots alone',
        );
      if (action !== 'list' && (values.offset ?? values.limit ?? values.status) !== undefined)
        throw new UsageError('BAD_ARGUMENTS', '--offset, --limit and --status apply to links list');
      const offset = wholeNumber(values.offset, '--offset', 0, Number.MAX_SAFE_INTEGER, 0);
      const limit = wholeNumber(values.limit, '--limit', 1, MAX_LIST_LIMIT, DEFAULT_LIMIT);
      const status = values.status;
      if (status !== undefined && status !== 'ACTIVE' && status !== 'INACTIVE')
        throw new UsageError('BAD_ARGUMENTS', `--status takes ACTIVE or INACTIVE, got "${status}"`);

      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const baseUrl = commandGatewayUrl(config, values.gateway, 'LINKS_NO_GATEWAY');
      const logger = commandLogger(config);
      const now = deps.now ?? (() => new Date());
      const journalPath = resolve(io.cwd, config.journal.path);
      // The gateway's OAuth grant is sealed under the at-rest key: a rotation a crash interrupted is finished first.
      settleRotationBeforeReading(config, io.cwd, `parking-terminal links ${action}`, { now });
      // The terminal's own record; never created here when the terminal has not run yet. Read-only for list and show
      // (no migration, no write beside the running terminal, as `audit`); read-write, as the terminal's own
      // link desk writes it, for deactivate and reactivate, which record what they changed.
      const readOnly = action === 'list' || action === 'show';
      const exists = existsSync(journalPath);
      const reader = exists && readOnly ? openPaymentLinksReadOnly(journalPath) : undefined;
      const journal: SqliteJournal | undefined =
        exists && !readOnly ? openJournal(journalPath, { now }) : undefined;
      const store = journal ? new PaymentLinkStore(journal) : undefined;
      let gateway: Pick<GatewayClient, 'paymentLinks' | 'close'>;
      try {
        gateway = connect(config, { baseUrl, logger, cwd: io.cwd });
      } catch (e) {
        reader?.close();
        journal?.close();
        throw e;
      }
      try {
        if (action === 'list') {
          try {
            const { page, links } = await paymentLinkPage(
              { gateway, store: reader, terminalId: config.terminal.id },
              { offset, limit, ...(status !== undefined ? { status } : {}) },
            );
            printJson(io, {
              offset,
              limit,
              ...(page.totalLinks !== undefined ? { totalLinks: page.totalLinks } : {}),
              ...(page.next !== undefined ? { next: page.next } : {}),
              links: links.map(({ link, mine }) => paymentLinkSummary(link, mine)),
            });
            return EXIT_OK;
          } catch (e) {
            return gatewayFailure(io, e);
          }
        }
        const linkId = id ?? '';
        if (action === 'show') {
          try {
            printJson(io, {
              link: paymentLinkSummary(
                await gateway.paymentLinks.get(linkId),
                ownLink(reader, config.terminal.id, linkId),
                {
                  lineItems: true,
                },
              ),
            });
            return EXIT_OK;
          } catch (e) {
            return gatewayFailure(io, e);
          }
        }
        const audit = journal ? new AuditStore(journal) : undefined;
        try {
          const { link, mine } = await setLinkStatus(
            {
              gateway,
              store,
              terminalId: config.terminal.id,
              audit: audit && { record: (entry) => audit.append(entry) },
              now,
              waitMs: config.links.waitSeconds * 1000,
            },
            linkId,
            action === 'deactivate' ? 'INACTIVE' : 'ACTIVE',
          );
          printJson(io, { link: paymentLinkSummary(link, mine, { lineItems: true }) });
          return EXIT_OK;
        } catch (e) {
          return gatewayFailure(io, e);
        }
      } finally {
        await gateway.close();
        reader?.close();
        journal?.close();
      }
    },
  };
}

export default createLinksCommand();
