import { bytesToHex, hexToBytes, TlvError } from '../../emv/index.js';
import {
  createReader,
  DEFAULT_READER_OPTIONS,
  ReaderError,
  type ReaderOptions,
} from '../../../devices/index.js';
import { decodeFrame, encodeHostFrame, FrameError } from '../../../devices/vivotech2/frame.js';
import { redactString } from '../../log/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type CliIo, type Command } from '../output.js';

const hex2 = (n: number): string => n.toString(16).padStart(2, '0').toUpperCase();

function bytesArg(text: string, what: string): Uint8Array {
  try {
    return hexToBytes(text);
  } catch (e) {
    if (e instanceof TlvError) throw new UsageError('BAD_HEX', `${what}: ${e.message}`, { offset: e.offset });
    throw e;
  }
}

function byteArg(text: string | undefined, option: string): number {
  if (text === undefined) throw new UsageError('BAD_ARGUMENTS', `${option} HH is required`);
  if (!/^[0-9A-Fa-f]{2}$/.test(text))
    throw new UsageError('BAD_ARGUMENTS', `${option} must be one hex byte, e.g. 18`);
  return Number.parseInt(text, 16);
}

/**
 * `reader decode HEX [--from-host]`: one frame of captured traffic. Exit 1 when its CRC is wrong. A card read's frame
 * carries the PAN (tags 5A and 57, the tracks): its data is printed through the log's card-data rule
 * (`redactString`, src/log/redact.ts), `[REDACTED]` when it may hold card data (DESIGN.md, money safety rule 4).
 */
function decode(args: string[], io: CliIo): number {
  const { values, positionals } = parseCommandArgs(args, { 'from-host': { type: 'boolean' } });
  if (positionals.length !== 1)
    throw new UsageError('BAD_ARGUMENTS', 'reader decode takes exactly one HEX frame');
  const fromHost = values['from-host'] === true;
  let frame;
  try {
    frame = decodeFrame(
      bytesArg(positionals[0] ?? '', 'frame'),
      fromHost ? 'host-to-reader' : 'reader-to-host',
    );
  } catch (e) {
    if (e instanceof FrameError) throw new UsageError(e.code, e.message, { offset: e.offset });
    throw e;
  }
  printJson(io, {
    cmd: hex2(frame.cmd),
    ...(fromHost ? { sub: hex2(frame.code) } : { status: hex2(frame.code) }),
    length: frame.length,
    data: redactString(bytesToHex(frame.data)),
    crc: frame.crc.toString(16).padStart(4, '0').toUpperCase(),
    crcOk: frame.crcOk,
  });
  return frame.crcOk ? EXIT_OK : EXIT_FINDINGS;
}

/** `reader encode --cmd HH --sub HH [--data HEX]`: a host-to-reader frame. */
function encode(args: string[], io: CliIo): number {
  const { values } = parseCommandArgs(
    args,
    { cmd: { type: 'string' }, sub: { type: 'string' }, data: { type: 'string' } },
    false,
  );
  const data = values.data === undefined ? new Uint8Array(0) : bytesArg(values.data, '--data');
  try {
    printJson(io, {
      frame: bytesToHex(
        encodeHostFrame({ cmd: byteArg(values.cmd, '--cmd'), sub: byteArg(values.sub, '--sub'), data }),
      ),
    });
  } catch (e) {
    if (e instanceof FrameError) throw new UsageError(e.code, e.message);
    throw e;
  }
  return EXIT_OK;
}

function parseHidId(text: string): { vendorId: number; productId?: number } {
  const m = /^([0-9A-Fa-f]{1,4})(?::([0-9A-Fa-f]{1,4}))?$/.exec(text);
  if (!m?.[1]) throw new UsageError('BAD_ARGUMENTS', '--hid must be VID:PID in hex, e.g. 0ACD:3410');
  return { vendorId: Number.parseInt(m[1], 16), ...(m[2] ? { productId: Number.parseInt(m[2], 16) } : {}) };
}

/** `reader test [--port P | --hid VID:PID]`: connects, pings, reads the firmware version. Exit 1 when it fails. */
async function test(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    args,
    {
      port: { type: 'string' },
      hid: { type: 'string' },
      baud: { type: 'string' },
      timeout: { type: 'string' },
    },
    false,
  );
  if (values.port !== undefined && values.hid !== undefined)
    throw new UsageError('BAD_ARGUMENTS', 'give either --port or --hid, not both');
  const baudRate = values.baud === undefined ? 115_200 : Number(values.baud);
  if (!Number.isInteger(baudRate) || baudRate <= 0)
    throw new UsageError('BAD_ARGUMENTS', '--baud must be a positive integer');
  const commandTimeoutMs = values.timeout === undefined ? 2_000 : Number(values.timeout);
  if (!Number.isInteger(commandTimeoutMs) || commandTimeoutMs < 50 || commandTimeoutMs > 60_000)
    throw new UsageError('BAD_ARGUMENTS', '--timeout must be milliseconds 50-60000');
  const options: ReaderOptions = {
    ...DEFAULT_READER_OPTIONS,
    commandTimeoutMs,
    kind: values.port !== undefined ? 'serial' : values.hid !== undefined ? 'hid' : 'sim',
    serial: { path: values.port, baudRate },
    hid: values.hid !== undefined ? parseHidId(values.hid) : DEFAULT_READER_OPTIONS.hid,
  };
  const reader = createReader(options);
  const transport =
    options.kind === 'serial'
      ? `serial ${values.port}`
      : options.kind === 'hid'
        ? `hid ${values.hid}`
        : 'simulator';
  try {
    const started = performance.now();
    await reader.connect();
    await reader.ping();
    const firmware = await reader.firmwareVersion();
    printJson(io, { transport, ok: true, firmware, roundTripMs: Math.round(performance.now() - started) });
    return EXIT_OK;
  } catch (e) {
    const error =
      e instanceof ReaderError
        ? { code: e.code, message: e.message }
        : { code: 'INTERNAL', message: String(e) };
    printJson(io, { transport, ok: false, error });
    return EXIT_FINDINGS;
  } finally {
    await reader.close();
  }
}

const command: Command = {
  name: 'reader',
  summary: 'card reader tools: decode/encode ViVOtech2 frames, test a reader',
  usage: `parking-terminal reader decode HEX [--from-host]
  one ViVOtech2 frame (reader to host unless --from-host) -> {"cmd","sub"|"status","length","data","crc","crcOk"}
  data as HEX, or [REDACTED] when it may hold card data (a card read's PAN, tracks or tags 5A/57)
  exit 1 when the CRC is wrong
parking-terminal reader encode --cmd HH --sub HH [--data HEX]
  a host-to-reader frame -> {"frame": HEX}
parking-terminal reader test [--port PATH [--baud N] | --hid VID:PID] [--timeout MS]
  connect, ping and read the firmware version -> {"transport","ok","firmware","roundTripMs"}
  (the simulator when neither --port nor --hid is given); exit 1 when the reader does not answer`,
  async run(args, io) {
    const [sub, ...rest] = args;
    switch (sub ?? '') {
      case 'decode':
        return decode(rest, io);
      case 'encode':
        return encode(rest, io);
      case 'test':
        return test(rest, io);
      default:
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: reader decode|encode|test (see parking-terminal reader --help)',
        );
    }
  },
};
export default command;
