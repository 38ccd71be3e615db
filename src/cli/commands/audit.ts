import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { auditCsv } from '../../host/audit-csv.js';
import { AUDIT_LIST_MAX, openAuditLogReadOnly, type AuditRecord } from '../../journal/index.js';
import { isoDateTimeMs } from '../../vocabulary/gateway-time.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const DEFAULT_LIMIT = 1_000;

const USAGE = `parking-terminal audit [--journal PATH] [--config FILE] [--since ISO] [--limit N] [--csv]
  the operator audit log (sign-ins, refunds, voids, service mode, configuration changes, recoveries), oldest first;
  read-only: safe while the terminal runs
  --journal PATH  the journal database (default journal.path of the configuration)
  --config FILE   configuration (JSON or YAML); embedded defaults otherwise
  --since ISO     only records at or after this time (ISO 8601, e.g. 2030-01-31 or 2030-01-31T08:00:00Z)
  --limit N       at most the newest N records (1…${AUDIT_LIST_MAX}, default ${DEFAULT_LIMIT})
  --csv           CSV (RFC 4180, header row) instead of JSON: {"records": [{id, time, actor, action, subject?,
                  result, code?, details}]}`;

/**
 * An ISO 8601 date or date-time, as epoch milliseconds. The operator may leave out the time (midnight), the seconds
 * and the zone (UTC); the rest is read by the one rule for ISO 8601 date-times (src/vocabulary/gateway-time.ts).
 */
function parseSince(value: string): number {
  const parts = /^([^T]+)(?:T(\d{2}:\d{2})(:[^Z+-]+)?(Z|[+-].+)?)?$/.exec(value);
  const ms =
    parts === null
      ? undefined
      : isoDateTimeMs(`${parts[1]}T${parts[2] ?? '00:00'}${parts[3] ?? ':00'}${parts[4] ?? 'Z'}`);
  if (ms === undefined)
    throw new UsageError('BAD_ARGUMENTS', `--since takes an ISO 8601 date or date-time, got "${value}"`);
  return ms;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > AUDIT_LIST_MAX)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `--limit takes a whole number from 1 to ${AUDIT_LIST_MAX}, got "${value}"`,
    );
  return n;
}

/**
 * `parking-terminal audit`: the audit log of the journal, as JSON or CSV. Opens the database read-only and takes no
 * sender lock, so it works beside the running terminal; a journal that does not exist yet has an empty log (and is
 * not created).
 */
const audit: Command = {
  name: 'audit',
  summary: 'the operator audit log (JSON, or CSV with --csv); read-only',
  usage: USAGE,
  run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        journal: { type: 'string' },
        config: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        csv: { type: 'boolean' },
      },
      false,
    );
    const sinceMs = values.since === undefined ? undefined : parseSince(values.since);
    const limit = parseLimit(values.limit);
    const journalPath =
      values.journal !== undefined
        ? resolve(io.cwd, values.journal)
        : resolve(
            io.cwd,
            loadConfig(values.config ? resolve(io.cwd, values.config) : undefined).journal.path,
          );

    let records: AuditRecord[] = [];
    if (existsSync(journalPath)) {
      const reader = openAuditLogReadOnly(journalPath);
      try {
        records = reader.list({ limit, ...(sinceMs !== undefined ? { sinceMs } : {}) });
      } finally {
        reader.close();
      }
    }
    if (values.csv === true) io.stdout.write(auditCsv(records));
    else printJson(io, { records });
    return Promise.resolve(EXIT_OK);
  },
};

export default audit;
