import { z } from 'zod';

/**
 * The payloads of the fleet topics (README, Fleet). No money state and no card data travel here (DESIGN.md, money
 * safety rules): the heartbeat carries counts and totals of what the terminal owes, never a payment; every payload goes
 * through the log's card-data redaction before it is published (src/fleet/link.ts).
 */

/** The health a terminal reports, as its operator status shows it (src/host/fleet-terminal.ts builds it). */
export interface TerminalHealth {
  /** The terminal's application version (package.json). */
  appVersion: string;
  model: string;
  /** False while out of service (an error, or the operator's or the fleet's service mode). */
  inService: boolean;
  /** Why it is out of service. */
  outOfService?: string;
  /** A customer is in the middle of something (any screen but the attract screen). */
  customerSession: boolean;
  reader: { kind: string; health: string; firmware?: string };
  /**
   * The receipt printer as the operator status shows it (`ready`, `paper-out`, `cover-open`, `offline`, `none`), asked
   * between receipts too (`printer.statusPollSeconds`); absent from the heartbeats of terminals older than it.
   */
  printer?: { kind: string; status: string };
  gateway: {
    /** As the last answers told it; null before the first. */
    online: boolean | null;
    /**
     * While `online` is false, why: no answer, the terminal's credentials refused (the keys, not the network), or the
     * gateway's processor down (the gateway answers, refusing payments PROCESSOR_UNAVAILABLE for a while).
     */
    problem?: 'unreachable' | 'credentials' | 'processor';
    lastError?: string;
    /**
     * While a forwarding run found no connection: the host that did not open (`gateway HOST:PORT`, or `OAuth token host
     * HOST:PORT` when the gateway answered and the access token had to be fetched elsewhere).
     */
    unreachableHost?: string;
    /** The terminal's clock minus the gateway's `Date` of its last answer, seconds; null before one. */
    clockSkewSeconds: number | null;
  };
  offline: {
    depth: number;
    totals: Array<{ currency: string; minor: number }>;
    /** Age of the oldest stored payment whose age is known, seconds; null when none is. */
    oldestAgeSeconds: number | null;
    declinedAfterForward: number;
    /**
     * Stored payments whose age is not known (stored while the clock was not yet set, or ahead): not in
     * `oldestAgeSeconds`. Absent from the heartbeats of terminals older than the count.
     */
    ageUnknown?: number;
  };
  /**
   * Fees a capture did not collect in full (or a tap-and-go exit could not price) that no operator has acknowledged
   * (`parking-terminal shortfalls`); absent from the heartbeats of terminals older than the count.
   */
  feeShortfalls?: number;
  /** Authorizations the terminal holds open: tap-and-go holds, watched meter authorizations, open follow-ups. */
  openAuthorizations: number;
  /** Journal entries whose outcome is unknown, and entries in flight. */
  journal: { unknown: number; inFlight: number };
  /**
   * Free space on the journal's file system, MiB (whole: a byte count of a large disk would pass the card-number
   * redaction as text); null when it cannot be read.
   */
  diskFreeMegabytes: number | null;
}

/**
 * The health a heartbeat carries: a running terminal's {@link TerminalHealth}, or the health of a terminal waiting out
 * of service for its refused configuration (src/host/refused-fleet.ts), which opened no journal, reader or gateway
 * client: the counts it cannot know are null, as every value the heartbeat does not know (`gateway.online`,
 * `clockSkewSeconds`, `diskFreeMegabytes`), and its reader reads `{kind: 'none', health: 'none'}` (none opened).
 */
export type ReportedHealth = Omit<TerminalHealth, 'offline' | 'journal' | 'openAuthorizations'> & {
  offline: Omit<TerminalHealth['offline'], 'depth' | 'declinedAfterForward'> & {
    depth: number | null;
    declinedAfterForward: number | null;
  };
  openAuthorizations: number | null;
  journal: { unknown: number | null; inFlight: number | null };
};

/** One heartbeat: the health, stamped. */
export type Heartbeat = ReportedHealth & {
  terminalId: string;
  /** ISO 8601, the terminal's clock. */
  at: string;
  /** Seconds until the next heartbeat (`fleet.heartbeatSeconds`). */
  intervalSeconds: number;
};

/**
 * What the operator's side reads of a heartbeat from the broker (`fleet status`, `fleet watch`, {@link alertsOf}):
 * whoever may write a terminal's heartbeat topic publishes it, retained, so its shape is checked before anything
 * reads it. Other fields pass as they are.
 */
export const heartbeatSchema = z.looseObject({
  terminalId: z.string(),
  at: z.iso.datetime({ offset: true }),
  intervalSeconds: z.number().positive(),
  // Printed in the operator's table as it came: printable ASCII only, no terminal escapes.
  appVersion: z.string().regex(/^[\x20-\x7e]{1,64}$/),
  inService: z.boolean(),
  reader: z.looseObject({ health: z.string().regex(/^[a-z-]{1,32}$/) }),
  printer: z.looseObject({ status: z.string().regex(/^[a-z-]{1,32}$/) }).optional(),
  gateway: z.looseObject({
    online: z.boolean().nullable(),
    problem: z.enum(['unreachable', 'credentials', 'processor']).optional(),
    clockSkewSeconds: z.number().nullable(),
  }),
  // Null: not known (a terminal whose configuration was refused opened no journal).
  offline: z.looseObject({
    depth: z.number().int().min(0).nullable(),
    declinedAfterForward: z.number().int().min(0).nullable(),
  }),
  feeShortfalls: z.number().int().min(0).optional(),
  journal: z.looseObject({ unknown: z.number().int().min(0).nullable() }),
  diskFreeMegabytes: z.number().nullable(),
});

/** Something the operator should hear of at once. */
export type FleetEvent =
  | { type: 'out-of-service'; reason: string }
  | { type: 'in-service' }
  /** Stored offline payments declined once forwarded: the total count so far. */
  | { type: 'declined-after-forward'; count: number }
  /** Recovery resolved an entry (or left it for the operator). No amount: no money state on the broker. */
  | { type: 'recovery'; transactionId: string; service: string; resolution: string };

/** An event as published on `events`. */
export type PublishedEvent = FleetEvent & { terminalId: string; at: string };

/** The commands a terminal takes (README, Fleet, Commands). */
export const FLEET_COMMANDS = [
  'out-of-service',
  'in-service',
  'flush-queue',
  'rerun-recovery',
  'audit-log',
  'apply-config',
  'restart',
  'open-stays',
  'release-stay',
] as const;
export type FleetCommandName = (typeof FLEET_COMMANDS)[number];

/**
 * The arguments each command takes (README, Fleet, Commands; their values are checked where the command is carried
 * out, src/host/fleet-terminal.ts). Any other is refused `BAD_ARGUMENTS`, by the terminal and by `fleet send`: a
 * misspelt one would otherwise be dropped without a word (`notic`: out of service with no notice).
 */
export const FLEET_COMMAND_ARGS: Readonly<Record<FleetCommandName, readonly string[]>> = {
  'out-of-service': ['notice'],
  'in-service': [],
  'flush-queue': [],
  'rerun-recovery': [],
  'audit-log': ['since', 'limit'],
  'apply-config': ['config'],
  restart: [],
  'open-stays': ['limit'],
  'release-stay': ['holdId'],
};

/** Why `args` does not suit `command`: the arguments it does not take, named; undefined when they all are its. */
export function unknownArguments(
  command: FleetCommandName,
  args: Record<string, unknown>,
): string | undefined {
  const takes = FLEET_COMMAND_ARGS[command];
  const unknown = Object.keys(args).filter((key) => !takes.includes(key));
  if (unknown.length === 0) return undefined;
  return (
    `${unknown.map((key) => JSON.stringify(key)).join(', ')}: not an argument of ${command} ` +
    `(${takes.length > 0 ? `it takes ${takes.join(', ')}` : 'it takes none'})`
  );
}

/**
 * The commands that can change where money or card data goes, carried out only when verified with a key no terminal
 * can sign with: the fleet's Ed25519 public key (src/fleet/command-signature.ts, {@link checkCommand}). A shared HMAC
 * key sits on every terminal, so one key file taken from one kiosk would sign for the whole fleet: `apply-config` can
 * set `gateway.baseUrl`, the gateway's credentials and the fleet key itself. The other commands act only through the
 * terminal's own paths towards the gateway it was started with. `release-stay` moves money, but only back to the
 * customer: it reverses in full a tap-and-go hold on the customer's own card, at the gateway the terminal runs with,
 * through the expiry watch's run — what the expiry does unasked after the maximum stay, and what operator mode's
 * release (behind the PIN every kiosk shares) does. A key taken from a kiosk can at worst free a hold early; it cannot
 * send money or card data anywhere, so it is not restricted to the Ed25519 key.
 */
export const ASYMMETRIC_KEY_COMMANDS: ReadonlySet<string> = new Set<FleetCommandName>(['apply-config']);

/** Signature algorithms of a command. */
export const SIGNATURE_ALGORITHMS = ['hmac-sha256', 'ed25519'] as const;
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];

/**
 * Deepest nesting of objects and arrays in a command's `args` (a whole configuration, the deepest arguments a command
 * takes, nests about 8 levels). Deeper is refused before anything walks it recursively (the signature's canonical JSON,
 * the redaction of log lines): 50,000 levels fit in a command's 256 KiB and would overflow the stack.
 */
export const COMMAND_MAX_DEPTH = 32;

/**
 * Whether `value` nests objects and arrays more than `max` levels deep (a bare object or array is one level). Walks
 * with a stack of its own, so that it measures any depth safely.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    const depth = next.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return false;
}

/**
 * Largest command a terminal takes, bytes of its JSON (a configuration fits with room to spare): the link refuses a
 * larger one, or the broker drops it unanswered (src/fleet/link.ts); `fleet send` refuses to send one.
 */
export const COMMAND_MAX_BYTES = 256 * 1024;

/** What is signed: every field of a command but the signature. */
export const unsignedCommandSchema = z.strictObject({
  v: z.literal(1),
  /** Unique per command (a UUID); the terminal executes an id at most once. */
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[\x21-\x7e]+$/, { message: 'printable ASCII without spaces' }),
  /** The one terminal the command is for: a command cannot be replayed on another. */
  terminalId: z.string().min(1).max(64),
  command: z.string().min(1).max(64),
  args: z
    .record(z.string(), z.unknown())
    .refine((args) => !nestedDeeperThan(args, COMMAND_MAX_DEPTH), {
      message: `nested more than ${COMMAND_MAX_DEPTH} levels deep`,
    })
    .default({}),
  /** ISO 8601: when it was signed, and until when it may be executed. */
  issuedAt: z.iso.datetime({ offset: true }),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type UnsignedCommand = z.infer<typeof unsignedCommandSchema>;

export const signedCommandSchema = unsignedCommandSchema.extend({
  signature: z.strictObject({ alg: z.enum(SIGNATURE_ALGORITHMS), value: z.base64() }),
});
export type SignedCommand = z.infer<typeof signedCommandSchema>;

/** The stable codes of a reply: `OK`, or why the command was refused or failed. */
export const REPLY_CODES = [
  'OK',
  /** Not a command: not JSON, a field missing or of the wrong type. */
  'BAD_COMMAND',
  'UNKNOWN_COMMAND',
  /** The terminal has no fleet key (`fleet.commandKeyFile`): it takes no command. */
  'COMMANDS_DISABLED',
  'BAD_SIGNATURE',
  /** Signed for another terminal. */
  'WRONG_TERMINAL',
  'EXPIRED',
  'NOT_YET_VALID',
  /** Valid for longer than `fleet.commandMaxAgeSeconds`. */
  'VALIDITY_TOO_LONG',
  /**
   * A command of {@link ASYMMETRIC_KEY_COMMANDS} verified with a key a terminal could sign with (the shared HMAC key,
   * or an Ed25519 private key given to the terminal): not carried out.
   */
  'NEEDS_ASYMMETRIC_KEY',
  /**
   * Sent as a retained message (the packet's RETAIN flag): never executed, refused once per id (src/fleet/link.ts);
   * later deliveries of it are only logged.
   */
  'RETAINED',
  /**
   * Its id was executed before (the reply then repeats the first one's under `first`), or begun and its end never
   * recorded (no `first`: the terminal stopped during it); not executed again.
   */
  'DUPLICATE',
  /**
   * It expires before the oldest expiry whose command ids the terminal still keeps all of: it may have been executed
   * and its id pruned. Only a terminal clock set back lets such a command past the expiry check; not executed.
   */
  'STALE',
  /** The terminal is not idle: a customer session, an open authorization or an unknown journal entry. */
  'BUSY',
  /** Not possible in the terminal's state (e.g. back in service when not in service mode). */
  'NOT_ALLOWED',
  /** The arguments are wrong. */
  'BAD_ARGUMENTS',
  /** The new configuration does not validate: the schema's error, with its key. */
  'CONFIG_INVALID',
  /** The terminal was started without a configuration file: there is nothing to replace. */
  'NO_CONFIG_FILE',
  /**
   * `apply-config` would move the terminal to other topics (another `terminal.id` or `fleet.topicPrefix`): its commands
   * would reach nobody. Changed on the terminal itself.
   */
  'FLEET_IDENTITY_CHANGE',
  /** `apply-config` moves the link to a broker (URL, TLS, credentials) the terminal could not connect to: not applied. */
  'BROKER_UNREACHABLE',
  /** `release-stay`: no open stay has this hold (released, captured or reversed already); nothing sent. */
  'HOLD_NOT_FOUND',
  /** `release-stay`: an exit, the expiry watch or recovery is settling the hold; nothing sent. */
  'HOLD_BUSY',
  /** `release-stay`: the hold's release is decided and a reversal of it was refused (sent again after its wait). */
  'HOLD_RELEASING',
  /**
   * The terminal waits out of service because its configuration file is refused (README, Configuration), or before
   * it starts again after failed starts (README, Running as a kiosk service): no command is carried out, whatever it
   * is — at most once needs the command's id in the journal, which this state does not open (its recovery runs when
   * the terminal really starts). Correct the file on the kiosk; the fleet sees the terminal start once it is.
   */
  'CONFIG_REFUSED',
  /**
   * Not the answer to a command (its id is null): how many refusals of messages not signed with the fleet key
   * (`BAD_COMMAND`, `BAD_SIGNATURE`, `COMMANDS_DISABLED`) went unanswered and unaudited, beyond the rate the terminal
   * answers them at (src/fleet/link.ts). Published once after the first one dropped, with the counts by code.
   */
  'RATE_LIMITED',
  'FAILED',
] as const;
export type ReplyCode = (typeof REPLY_CODES)[number];

/**
 * Largest reply published, bytes of its JSON (and so what fleet_commands.reply keeps of it): an `audit-log` of many
 * records, or an error that echoes a command's input, is not sent whole to every subscriber of the replies
 * (src/fleet/link.ts, capReply).
 */
export const REPLY_MAX_BYTES = 64 * 1024;

/** What the terminal answers on `replies`. */
export interface CommandReply {
  v: 1;
  /** The command's id; null when the command could not be read. */
  id: string | null;
  terminalId: string;
  command?: string;
  ok: boolean;
  code: ReplyCode;
  message?: string;
  result?: unknown;
  /** ISO 8601, the terminal's clock. */
  at: string;
  /** With DUPLICATE: the reply the command got when it was executed, when it finished. */
  first?: unknown;
  /**
   * Present when the reply would have been larger than a reply may be (src/fleet/link.ts): the fields left out and
   * the size it would have had, bytes of JSON. A `message` too long is cut and ends with `… [truncated: N characters in
   * all]`.
   */
  truncated?: { bytes: number; omitted: Array<'result' | 'first'> };
}

/**
 * How far a command's signed time may be ahead of the terminal's clock before the command is refused as
 * `NOT_YET_VALID` (src/fleet/command-signature.ts, checkCommand). The heartbeat's clock skew (measured against the
 * gateway's `Date`) raises the `clock-skew` alert at half of it, before the terminal refuses the fleet's commands.
 */
export const COMMAND_CLOCK_TOLERANCE_SECONDS = 60;

/** What the operator should look at for a terminal (the `fleet status` table's alerts). */
export function alertsOf(input: {
  online: boolean | undefined;
  heartbeat?: Heartbeat;
  ageSeconds?: number;
}): string[] {
  const alerts: string[] = [];
  if (input.online === false) alerts.push('offline');
  const h = input.heartbeat;
  if (!h) return [...alerts, 'no-heartbeat'];
  if (input.ageSeconds !== undefined && input.ageSeconds > 3 * h.intervalSeconds)
    alerts.push('heartbeat-late');
  if (!h.inService) alerts.push('out-of-service');
  if (h.gateway.online === false)
    alerts.push(
      h.gateway.problem === 'credentials'
        ? 'gateway-credentials'
        : h.gateway.problem === 'processor'
          ? 'processor-unavailable'
          : 'gateway-unreachable',
    );
  // `none`: no reader opened (a terminal waiting for its refused configuration, already alerted out of service).
  if (!['ready', 'busy', 'none'].includes(h.reader.health)) alerts.push(`reader-${h.reader.health}`);
  if (h.printer && h.printer.status !== 'ready' && h.printer.status !== 'none')
    alerts.push(`printer-${h.printer.status}`);
  if ((h.journal.unknown ?? 0) > 0) alerts.push('journal-unknown');
  if ((h.offline.depth ?? 0) > 0) alerts.push('offline-queue');
  if ((h.offline.declinedAfterForward ?? 0) > 0) alerts.push('declined-after-forward');
  if ((h.feeShortfalls ?? 0) > 0) alerts.push('fee-shortfalls');
  if (h.diskFreeMegabytes !== null && h.diskFreeMegabytes < 512) alerts.push('disk-low');
  if (
    h.gateway.clockSkewSeconds !== null &&
    Math.abs(h.gateway.clockSkewSeconds) > COMMAND_CLOCK_TOLERANCE_SECONDS / 2
  )
    alerts.push('clock-skew');
  return alerts;
}
