import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  fleetSchema,
  loadConfigFile,
  readConfigData,
  terminalSchema,
  type Config,
} from '../../config/index.js';
import { withSecretFilesResolved } from '../../config/secret-file.js';
import {
  COMMAND_MAX_BYTES,
  FLEET_COMMANDS,
  FleetBrokerError,
  FleetView,
  readFleetKey,
  signCommand,
  unknownArguments,
  unsignedCommandSchema,
  type BrokerSettings,
  type FleetCommandName,
  type FleetKey,
  type TerminalRow,
} from '../../fleet/index.js';
import { parseCommandArgs } from '../args.js';
import {
  EXIT_FINDINGS,
  EXIT_OK,
  EXIT_USAGE,
  printError,
  printJson,
  UsageError,
  type CliIo,
  type Command,
} from '../output.js';

const USAGE = `parking-terminal fleet status [--json] [--wait S] [connection options]
parking-terminal fleet watch [connection options]
parking-terminal fleet send TERMINAL COMMAND [--args JSON] [--new-config FILE] [--timeout S] [--expires S] [connection options]
  status          every terminal on the broker (their retained status and heartbeat): online, seconds since the last
                  heartbeat, offline queue depth, alerts, the host that did not open while the gateway is unreachable;
                  a table, or one JSON document with --json
  watch           the same table, kept current until Ctrl-C
  send            signs COMMAND for TERMINAL with the fleet key, publishes it (QoS 1), waits for the reply and prints
                  it; exit 0 when done, 1 when refused, failed or unanswered, 2 on bad input
  each: exit 1 (BROKER_UNREACHABLE) when no connection to the broker opens in time, 2 (BROKER_REFUSED) when the
                  broker refuses the operator's credentials
  COMMAND         ${FLEET_COMMANDS.join(', ')}
  --args JSON     the command's arguments, e.g. '{"notice":"closed for works"}' (out-of-service),
                  '{"since":"2026-01-01T00:00:00Z","limit":50}' (audit-log), '{"limit":20}' (open-stays),
                  '{"holdId":"T01JQ…"}' (release-stay: a hold id as open-stays lists it)
  --new-config FILE  apply-config: the new configuration (JSON or YAML) sent as args.config
  --wait S        status: longest wait for the retained messages (default 5)
  --timeout S     send: how long to wait for the reply (default 30)
  --expires S     send: the command's validity (default 300; at most the terminal's fleet.commandMaxAgeSeconds)
connection options (default: the fleet section of --config):
  --config FILE   a configuration (JSON or YAML) with a fleet section: url, caFile, certFile, keyFile, usernameFile,
                  passwordFile, topicPrefix, commandKeyFile (the fleet key: the Ed25519 private key, preferred, or
                  the shared HMAC key, under which terminals refuse apply-config: NEEDS_ASYMMETRIC_KEY)
  --url URL  --ca FILE  --cert FILE  --key FILE  --username-file FILE  --password-file FILE  --prefix P
  --fleet-key FILE`;

const OPTIONS = {
  config: { type: 'string' },
  url: { type: 'string' },
  ca: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'username-file': { type: 'string' },
  'password-file': { type: 'string' },
  prefix: { type: 'string' },
  'fleet-key': { type: 'string' },
  json: { type: 'boolean' },
  wait: { type: 'string' },
  timeout: { type: 'string' },
  expires: { type: 'string' },
  args: { type: 'string' },
  'new-config': { type: 'string' },
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** The connection options (README: each action takes them, the fleet key too, so that one set serves every action). */
const CONNECTION_OPTIONS = [
  'config',
  'url',
  'ca',
  'cert',
  'key',
  'username-file',
  'password-file',
  'prefix',
  'fleet-key',
] as const;
/** The options each action reads: another action's is refused rather than left unread (`status --timeout 5`). */
const ACTION_OPTIONS: Record<string, ReadonlyArray<keyof typeof OPTIONS>> = {
  status: [...CONNECTION_OPTIONS, 'json', 'wait'],
  watch: [...CONNECTION_OPTIONS, 'wait'],
  send: [...CONNECTION_OPTIONS, 'args', 'new-config', 'timeout', 'expires'],
};

/** Refuses the options given that `action` does not read. */
function onlyOptionsOf(action: string, values: Values): void {
  const reads = ACTION_OPTIONS[action];
  if (reads === undefined) return;
  const unread = Object.keys(values).filter((option) => !(reads as readonly string[]).includes(option));
  if (unread.length > 0)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `fleet ${action} does not take ${unread.map((o) => `--${o}`).join(', ')} (see fleet --help)`,
    );
}

function seconds(value: string | undefined, option: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > max)
    throw new UsageError('BAD_ARGUMENTS', `${option} takes seconds from 0 to ${max}, got "${value}"`);
  return n;
}

/**
 * `--prefix` as a terminal's `fleet.topicPrefix` may be: a wildcard or an empty level would subscribe to, or send
 * commands on, topics of no terminal (or be refused by the client).
 */
function topicPrefix(option: string | undefined): string | undefined {
  if (option === undefined) return undefined;
  const checked = fleetSchema.shape.topicPrefix.safeParse(option);
  if (!checked.success)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `--prefix: "${option}" is not a topic prefix (topic levels of letters, digits, _ and -)`,
    );
  return checked.data;
}

/** The broker settings, prefix and fleet key file from --config and the options (options win). */
function connection(
  values: Values,
  cwd: string,
): { settings: BrokerSettings; prefix: string; keyFile: string | undefined } {
  let fleet: Config['fleet'];
  if (values.config) {
    const config = withSecretFilesResolved(loadConfigFile(resolve(cwd, values.config)), cwd);
    fleet = config.fleet;
    if (!fleet) throw new UsageError('BAD_ARGUMENTS', `${values.config} has no fleet section`);
  }
  const at = (file: string | undefined): string | undefined =>
    file === undefined ? undefined : resolve(cwd, file);
  const url = values.url ?? fleet?.url;
  if (!url)
    throw new UsageError('BAD_ARGUMENTS', 'the broker: --url URL or --config FILE with a fleet section');
  if (!/^(mqtts?|wss?):\/\//.test(url) || !URL.canParse(url))
    throw new UsageError('BAD_ARGUMENTS', `--url: "${url}" is not an mqtt://, mqtts://, ws:// or wss:// URL`);
  const pick = (option: string | undefined, configured: string | undefined): string | undefined =>
    at(option) ?? configured;
  const caFile = pick(values.ca, fleet?.caFile);
  const certFile = pick(values.cert, fleet?.certFile);
  const keyFile = pick(values.key, fleet?.keyFile);
  const usernameFile = pick(values['username-file'], fleet?.usernameFile);
  const passwordFile = pick(values['password-file'], fleet?.passwordFile);
  return {
    settings: {
      url,
      reconnectMaxSeconds: fleet?.reconnectMaxSeconds ?? 10,
      ...(caFile ? { caFile } : {}),
      ...(certFile ? { certFile } : {}),
      ...(keyFile ? { keyFile } : {}),
      ...(usernameFile ? { usernameFile } : {}),
      ...(passwordFile ? { passwordFile } : {}),
    },
    prefix: topicPrefix(values.prefix) ?? fleet?.topicPrefix ?? 'parking',
    keyFile: pick(values['fleet-key'], fleet?.commandKeyFile),
  };
}

function age(s: number | null): string {
  if (s === null) return '-';
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

/** Longest reason printed in the table, characters (the JSON document carries it whole). */
const REASON_MAX_CHARS = 200;

/** Longest unreachable host printed in the table, characters (the JSON document carries it whole). */
const UNREACHABLE_MAX_CHARS = 80;

/**
 * Text from a heartbeat as the table prints it: whoever may write the heartbeat topic wrote it, so control characters
 * (terminal escapes, line breaks) are replaced and it is cut at `max` characters.
 */
function printable(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** Why a terminal is out of service, as its heartbeat says, for the table; '-' when in service. */
export function reasonCell(heartbeat: TerminalRow['heartbeat']): string {
  const reason = heartbeat && !heartbeat.inService ? heartbeat.outOfService : undefined;
  if (typeof reason !== 'string' || reason === '') return '-';
  return printable(reason, REASON_MAX_CHARS);
}

/**
 * The host a terminal could not connect to, as its heartbeat names it while the gateway is unreachable (`gateway
 * HOST:PORT`, or `OAuth token host HOST:PORT` while the gateway itself answers), for the table: what the alert
 * `gateway-unreachable` alone does not say. '-' otherwise, and for a terminal older than the field.
 */
export function unreachableCell(heartbeat: TerminalRow['heartbeat']): string {
  // Refused credentials, or a processor that is down: the gateway answered, no host failed to open.
  const problem = heartbeat?.gateway.problem;
  if (
    !heartbeat ||
    heartbeat.gateway.online !== false ||
    problem === 'credentials' ||
    problem === 'processor'
  )
    return '-';
  // Not checked by the heartbeat's schema: whoever may write the topic could send anything. A string is shown.
  const host: unknown = heartbeat.gateway.unreachableHost;
  return typeof host === 'string' && host !== '' ? printable(host, UNREACHABLE_MAX_CHARS) : '-';
}

/** Longest terminal id printed in the table, characters (a command's `terminalId` is at most 64). */
const TERMINAL_ID_MAX_CHARS = 64;

/** The rows as a text table. */
export function fleetTable(rows: TerminalRow[]): string {
  const lines = [['TERMINAL', 'ONLINE', 'HEARTBEAT', 'QUEUE', 'VERSION', 'ALERTS', 'UNREACHABLE', 'REASON']];
  for (const r of rows)
    lines.push([
      // A level of a topic under the prefix: whoever may publish there chose it, escapes and all.
      printable(r.terminalId, TERMINAL_ID_MAX_CHARS),
      r.online === undefined ? '?' : r.online ? 'yes' : 'no',
      age(r.heartbeatAgeSeconds),
      r.queueDepth === null ? '-' : String(r.queueDepth),
      r.heartbeat?.appVersion ?? '-',
      r.alerts.join(',') || '-',
      unreachableCell(r.heartbeat),
      reasonCell(r.heartbeat),
    ]);
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const text = lines.map((l) =>
    l
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  return `${text.join('\n')}\n${rows.length} terminal(s)\n`;
}

function statusDocument(rows: TerminalRow[]): unknown {
  return {
    terminals: rows.map((r) => ({
      terminalId: r.terminalId,
      online: r.online ?? null,
      heartbeatAgeSeconds: r.heartbeatAgeSeconds,
      queueDepth: r.queueDepth,
      alerts: r.alerts,
      ...(r.heartbeat ? { heartbeat: r.heartbeat } : {}),
    })),
  };
}

function readNewConfig(file: string, cwd: string): unknown {
  try {
    return readConfigData(resolve(cwd, file)).data;
  } catch (e) {
    throw new UsageError('BAD_ARGUMENTS', `--new-config: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) done();
    else signal.addEventListener('abort', () => done(), { once: true });
  });
}

async function send(values: Values, positionals: string[], io: CliIo): Promise<number> {
  const [terminalId, name, ...extra] = positionals;
  if (!terminalId || !name || extra.length > 0)
    throw new UsageError('BAD_ARGUMENTS', 'usage: fleet send TERMINAL COMMAND (see fleet --help)');
  if (!(FLEET_COMMANDS as readonly string[]).includes(name))
    throw new UsageError('BAD_ARGUMENTS', `no command "${name}"; one of ${FLEET_COMMANDS.join(', ')}`);
  // A terminal's id as its configuration allows it (`terminal.id`): anything else is a topic no terminal reads — a
  // wildcard, another level — and would wait the whole timeout for a reply that cannot come.
  if (!terminalSchema.unwrap().shape.id.safeParse(terminalId).success)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `TERMINAL: "${terminalId}" is not a terminal id (1 to 8 letters and digits, as terminal.id)`,
    );
  let args: Record<string, unknown> = {};
  if (values.args !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.args);
    } catch {
      throw new UsageError('BAD_ARGUMENTS', '--args: not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError('BAD_ARGUMENTS', '--args: a JSON object');
    args = parsed as Record<string, unknown>;
  }
  if (values['new-config'] !== undefined)
    args = { ...args, config: readNewConfig(values['new-config'], io.cwd) };
  const unknown = unknownArguments(name as FleetCommandName, args);
  if (unknown !== undefined) throw new UsageError('BAD_ARGUMENTS', `--args: ${unknown}`);
  const timeout = seconds(values.timeout, '--timeout', 30, 3_600);
  const expires = seconds(values.expires, '--expires', 300, 86_400);
  const { settings, prefix, keyFile } = connection(values, io.cwd);
  if (!keyFile)
    throw new UsageError('BAD_ARGUMENTS', 'the fleet key: --fleet-key FILE or fleet.commandKeyFile');
  let key: FleetKey;
  try {
    key = readFleetKey(keyFile, values['fleet-key'] ? '--fleet-key' : 'fleet.commandKeyFile');
  } catch (e) {
    if (e instanceof Error && !('code' in e)) throw new UsageError('FLEET_KEY', e.message);
    throw e;
  }
  const issued = new Date();
  const unsigned = {
    v: 1 as const,
    id: randomUUID(),
    terminalId,
    command: name,
    args,
    issuedAt: issued.toISOString(),
    expiresAt: new Date(issued.getTime() + expires * 1000).toISOString(),
  };
  // What a terminal refuses as BAD_COMMAND (arguments nested too deep) is refused here, as the arguments' fault.
  const checked = unsignedCommandSchema.safeParse(unsigned);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const [field, ...path] = issue?.path ?? [];
    const what = field === 'args' ? 'the arguments (--args, --new-config)' : `the command's ${String(field)}`;
    throw new UsageError(
      'BAD_ARGUMENTS',
      `${what}${path.length > 0 ? ` at ${path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  let command;
  try {
    command = signCommand(unsigned, key);
  } catch (e) {
    throw new UsageError('FLEET_KEY', e instanceof Error ? e.message : String(e));
  }
  // Larger, the broker drops it unanswered (the terminal's MQTT Maximum Packet Size) or the terminal refuses it.
  const bytes = Buffer.byteLength(JSON.stringify(command));
  if (bytes > COMMAND_MAX_BYTES)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `the command is ${bytes} bytes signed; a terminal takes at most ${COMMAND_MAX_BYTES} (--args, --new-config)`,
    );
  const view = await connectView(settings, prefix, io);
  if (typeof view === 'number') return view;
  try {
    const reply = await view.send(command, timeout * 1000);
    if (!reply) {
      // Not "not done": a terminal away keeps the command in its session at the broker and carries it out when it
      // comes back, before its expiry. Sent again meanwhile (a new id), it would run twice.
      printJson(io, {
        error: {
          code: 'NO_REPLY',
          message:
            `no reply from ${terminalId} within ${timeout} s; the terminal may still carry it out until ` +
            `${command.expiresAt} (a terminal away gets it when it comes back): look at its audit-log, or wait ` +
            `until then, before sending it again`,
          id: command.id,
          expiresAt: command.expiresAt,
        },
      });
      return EXIT_FINDINGS;
    }
    printJson(io, reply);
    return reply.ok ? EXIT_OK : EXIT_FINDINGS;
  } finally {
    view.close();
  }
}

const command: Command = {
  name: 'fleet',
  summary: "the operator's view of terminals on the MQTT broker: status, watch, send a signed command",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, OPTIONS);
    const [action, ...rest] = positionals;
    if (action !== undefined) onlyOptionsOf(action, values);
    if (action === 'send') return send(values, rest, io);
    if ((action !== 'status' && action !== 'watch') || rest.length > 0)
      throw new UsageError(
        'BAD_ARGUMENTS',
        'usage: fleet status | fleet watch | fleet send TERMINAL COMMAND',
      );
    const wait = seconds(values.wait, '--wait', 5, 600);
    const { settings, prefix } = connection(values, io.cwd);
    const view = await connectView(settings, prefix, io);
    if (typeof view === 'number') return view;
    try {
      await view.settle({ maxMs: wait * 1000 });
      if (action === 'status') {
        const rows = view.rows();
        if (values.json) printJson(io, statusDocument(rows));
        else io.stdout.write(fleetTable(rows));
        return EXIT_OK;
      }
      // watch: the table again at each change (at most twice a second), until Ctrl-C.
      let timer: NodeJS.Timeout | undefined;
      const draw = (): void => {
        timer = undefined;
        const clear = (io.stdout as { isTTY?: boolean }).isTTY ? '\x1b[2J\x1b[H' : '';
        io.stdout.write(`${clear}${new Date().toISOString()}\n${fleetTable(view.rows())}`);
      };
      draw();
      const stop = view.onChange(() => {
        timer ??= setTimeout(draw, 500);
      });
      // Ages move on without messages: the table is redrawn every 5 s too.
      const tick = setInterval(draw, 5_000);
      await aborted(io.signal);
      stop();
      clearInterval(tick);
      if (timer) clearTimeout(timer);
      return EXIT_OK;
    } finally {
      view.close();
    }
  },
};
export default command;

/**
 * The operator's view of the broker, or the exit code once its failure is printed: 1 when the broker cannot be reached
 * (it may be back later: not bad input), 2 when it refused this client (the credentials, the configuration).
 */
async function connectView(settings: BrokerSettings, prefix: string, io: CliIo): Promise<FleetView | number> {
  try {
    return await FleetView.connect(settings, prefix);
  } catch (e) {
    if (!(e instanceof FleetBrokerError)) throw e;
    printError(io, e.code, e.message);
    return e.code === 'BROKER_UNREACHABLE' ? EXIT_FINDINGS : EXIT_USAGE;
  }
}
