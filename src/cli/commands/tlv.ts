import {
  bytesToHex,
  CARD_DATA_TAGS,
  decodeTlv,
  encodeTlv,
  hexToBytes,
  TlvError,
  type TlvNode,
} from '../../emv/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type CliIo, type Command } from '../output.js';

/**
 * A node as `tlv decode` prints it and `tlv encode` reads it (DESIGN.md): values as upper-case hex, except the values
 * of card-data tags (`CARD_DATA_TAGS`: the PAN, track data, the cardholder's name …), printed as one star per hex
 * digit (DESIGN.md, money safety rule 4): what a command prints can end up in a shell's history or a support ticket.
 */
interface JsonNode {
  tag: string;
  length: number;
  value?: string;
  children?: JsonNode[];
}

function toJson(nodes: readonly TlvNode[]): JsonNode[] {
  return nodes.map((n) =>
    n.children !== undefined
      ? { tag: n.tag, length: n.length, children: toJson(n.children) }
      : {
          tag: n.tag,
          length: n.length,
          value: CARD_DATA_TAGS.has(n.tag)
            ? '*'.repeat(n.length * 2)
            : bytesToHex(n.value ?? new Uint8Array()),
        },
  );
}

/** Reads the JSON tree of `tlv encode`, naming the path of the first bad node. `length` is optional and ignored. */
function fromJson(input: unknown, path: string, depth: number): TlvNode[] {
  const bad = (where: string, why: string): UsageError => new UsageError('BAD_JSON', `${where}: ${why}`);
  if (depth > 64) throw bad(path, 'nested deeper than 64');
  if (!Array.isArray(input)) throw bad(path, 'expected an array of nodes');
  return input.map((item: unknown, i): TlvNode => {
    const where = `${path}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw bad(where, 'expected an object');
    const { tag, value, children, length, ...rest } = item as Record<string, unknown>;
    const unknownKey = Object.keys(rest)[0];
    if (unknownKey !== undefined) throw bad(where, `unknown key "${unknownKey}"`);
    if (typeof tag !== 'string') throw bad(where, '"tag" must be a hex string');
    if (length !== undefined && typeof length !== 'number') throw bad(where, '"length" must be a number');
    if (value !== undefined && children !== undefined) throw bad(where, 'has both "value" and "children"');
    if (value !== undefined) {
      if (typeof value !== 'string') throw bad(where, '"value" must be a hex string');
      const bytes = hexArg(value, `${where}.value`);
      return { tag: tag.toUpperCase(), length: bytes.length, value: bytes };
    }
    if (children === undefined) throw bad(where, 'needs "value" or "children"');
    return {
      tag: tag.toUpperCase(),
      length: 0,
      children: fromJson(children, `${where}.children`, depth + 1),
    };
  });
}

function hexArg(text: string, what: string): Uint8Array {
  try {
    return hexToBytes(text);
  } catch (e) {
    if (e instanceof TlvError) throw new UsageError(e.code, `${what}: ${e.message}`, { offset: e.offset });
    throw e;
  }
}

function rethrowTlv(e: unknown): never {
  if (e instanceof TlvError) throw new UsageError(e.code, e.message, { offset: e.offset });
  throw e;
}

/** `tlv decode HEX`: spaces inside HEX are allowed (several arguments are joined). */
function decode(args: string[], io: CliIo): number {
  const { positionals } = parseCommandArgs(args, {});
  if (positionals.length === 0) throw new UsageError('BAD_ARGUMENTS', 'tlv decode takes the HEX to decode');
  const bytes = hexArg(positionals.join(''), 'HEX');
  let nodes: TlvNode[];
  try {
    nodes = decodeTlv(bytes);
  } catch (e) {
    rethrowTlv(e);
  }
  printJson(io, toJson(nodes));
  return EXIT_OK;
}

/** `tlv encode JSON`: prints `{"hex": ...}`. */
function encode(args: string[], io: CliIo): number {
  const { positionals } = parseCommandArgs(args, {});
  if (positionals.length !== 1)
    throw new UsageError('BAD_ARGUMENTS', 'tlv encode takes exactly one JSON argument');
  let parsed: unknown;
  try {
    parsed = JSON.parse(positionals[0] ?? '');
  } catch (e) {
    throw new UsageError('BAD_JSON', `not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const nodes = fromJson(parsed, '$', 1);
  let bytes: Uint8Array;
  try {
    bytes = encodeTlv(nodes);
  } catch (e) {
    rethrowTlv(e);
  }
  printJson(io, { hex: bytesToHex(bytes) });
  return EXIT_OK;
}

const command: Command = {
  name: 'tlv',
  summary: 'decode or encode EMV BER-TLV',
  usage: `parking-terminal tlv decode HEX
  prints [{"tag", "length", "value"} | {"tag", "length", "children": [...]}]; malformed input exits 2 with
  {"error": {"code": "TLV_...", "message", "offset"}}. The values of card-data tags (5A, 57, 56, 5F20, 5F24, 5F30,
  99, 9F0B, 9F1F, 9F20, 9F6B) are printed as stars, one per hex digit
parking-terminal tlv encode JSON
  JSON is the array that decode prints ("length" optional, recomputed); prints {"hex": "..."}`,
  run(args, io) {
    const [sub, ...rest] = args;
    if (sub === 'decode') return Promise.resolve(decode(rest, io));
    if (sub === 'encode') return Promise.resolve(encode(rest, io));
    throw new UsageError('BAD_ARGUMENTS', 'usage: tlv decode HEX | tlv encode JSON');
  },
};
export default command;
