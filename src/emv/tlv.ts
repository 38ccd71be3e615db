/**
 * BER-TLV as EMV uses it (EMV Book 3, Annex B; reference/emv.md "BER-TLV"): multi-byte tags, length forms
 * 1 / 81 / 82 / 83, constructed values decoded recursively with a depth bound, `00` padding between objects.
 * Pure functions: no I/O, no logging. Every malformed input is a {@link TlvError}; nothing else is thrown.
 *
 * Error messages name offsets and counts, never a tag, a length or any other byte of the input: once a short length
 * puts the read out of step, the "tag" and "length" it stops at are bytes of a value (a PAN in 5A, track 2 in 57), and
 * messages reach logs (DESIGN.md: no card data in logs).
 */
import { MAX_TAG_BYTES, TlvError } from './errors.js';
import { byteToHex, isCanonicalHex } from './hex.js';

/** One decoded data object. Exactly one of `value` (primitive tag) and `children` (constructed tag) is set. */
export interface TlvNode {
  /** The tag as upper-case hex, all its bytes: `"9F02"`, `"70"`, `"DF9A03"`. */
  tag: string;
  /**
   * Length of the value in bytes as declared on the wire (decode), or as it will be encoded (ignored by
   * {@link encodeTlv}, which recomputes it from `value` / `children`).
   */
  length: number;
  /** The value of a primitive object (bit 6 of the first tag byte clear). A copy: never a view into the input. */
  value?: Uint8Array;
  /** The objects inside a constructed object (bit 6 of the first tag byte set), in wire order. */
  children?: TlvNode[];
}

/** Options of {@link decodeTlv}. */
export interface DecodeTlvOptions {
  /**
   * Deepest nesting accepted: top-level objects are at depth 1, the children of a constructed object at depth 1 are
   * at depth 2, and so on. Default {@link DEFAULT_MAX_DEPTH}; must be an integer 1–{@link MAX_DEPTH_LIMIT}.
   */
  maxDepth?: number;
  /** Trailing garbage is always an error; the option exists so that callers state it. */
  allowTrailingGarbage?: false;
}

/** Default nesting bound: EMV templates nest 3 deep at most (77 → 70 → 61 …); 8 leaves room and stops bombs. */
export const DEFAULT_MAX_DEPTH = 8;
/** The largest `maxDepth` accepted, so that recursion can never exhaust the stack. */
export const MAX_DEPTH_LIMIT = 64;
/** The largest length the `83` form can carry. */
export const MAX_TLV_LENGTH = 0xffffff;

/**
 * Decodes a BER-TLV list. `00` bytes before, between and after objects are skipped; a run of `FF` bytes that reaches
 * the end of the enclosing data is skipped too (erased card record space — it cannot be a tag, since a tag's last byte
 * has bit 8 clear). Non-minimal length forms (`81 05`) are accepted as BER allows.
 *
 * @throws TlvError for every defect, with its byte offset: truncated tag / length / value, a length form other than
 *   1/81/82/83, trailing garbage, nesting deeper than `maxDepth`. Never returns a shortened value.
 * @throws RangeError when `options.maxDepth` is not an integer 1–64 (a programming error, not bad input).
 */
export function decodeTlv(bytes: Uint8Array, options: DecodeTlvOptions = {}): TlvNode[] {
  return decodeList(bytes, 0, bytes.length, 1, maxDepthOf(options), undefined);
}

/**
 * Receives one primitive object of a TLV list: its upper-case hex tag and where its value lies in the decoded bytes,
 * `bytes[start, end)`.
 */
export type TlvPrimitiveVisitor = (tag: string, start: number, end: number) => void;

/**
 * The primitive objects of a BER-TLV list in wire order, constructed objects replaced by their contents — what
 * {@link flattenTlv} of {@link decodeTlv} lists — handed to `visit` with the place of each value in `bytes` instead of a
 * copy: the same decoder, the same checks and errors, without a tree or a copy of each value. `visit` has seen the
 * objects before a defect when one is thrown.
 *
 * @throws TlvError as {@link decodeTlv} does, for the same defects at the same offsets.
 * @throws RangeError when `options.maxDepth` is not an integer 1–64.
 */
export function visitTlvPrimitives(
  bytes: Uint8Array,
  visit: TlvPrimitiveVisitor,
  options: DecodeTlvOptions = {},
): void {
  decodeList(bytes, 0, bytes.length, 1, maxDepthOf(options), visit);
}

/** The nesting limit of a decode, checked. @throws RangeError when it is not an integer 1–{@link MAX_DEPTH_LIMIT}. */
function maxDepthOf(options: DecodeTlvOptions): number {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_DEPTH_LIMIT)
    throw new RangeError(`maxDepth must be an integer 1-${MAX_DEPTH_LIMIT}`);
  return maxDepth;
}

/**
 * The text of each two-byte tag, made once (a first byte whose low five bits are all ones, then a last byte, bit 8
 * clear): the same string each time a tag is decoded, its hash computed once for every map and set it is looked up
 * in. Indexed by the first byte's top three bits and the second byte.
 */
const TWO_BYTE_TAGS: (string | undefined)[] = new Array<string | undefined>(8 * 128).fill(undefined);

function twoByteTag(first: number, second: number): string {
  const index = ((first >> 5) << 7) | second;
  return (TWO_BYTE_TAGS[index] ??= byteToHex(first) + byteToHex(second));
}

function onlyFfUntil(bytes: Uint8Array, from: number, end: number): boolean {
  for (let i = from; i < end; i++) if (bytes[i] !== 0xff) return false;
  return true;
}

/**
 * Decodes the objects in `bytes[start, end)`: into the returned nodes, or, when `visit` is given, into calls of it for
 * each primitive object (the list returned is then empty).
 */
function decodeList(
  bytes: Uint8Array,
  start: number,
  end: number,
  depth: number,
  maxDepth: number,
  visit: TlvPrimitiveVisitor | undefined,
): TlvNode[] {
  const nodes: TlvNode[] = [];
  /** Objects decoded so far in this list. */
  let count = 0;
  let pos = start;
  while (pos < end) {
    const first = bytes[pos] as number;
    if (first === 0x00) {
      pos++;
      continue;
    }
    if (first === 0xff && onlyFfUntil(bytes, pos, end)) break;
    const objStart = pos;
    // A defect in bytes that follow complete objects is reported as trailing garbage (same offset, clearer code).
    const shortCode = count > 0 ? 'TLV_TRAILING_GARBAGE' : undefined;

    // Tag (Annex B1): low five bits all ones → subsequent bytes, each with bit 8 = "another byte follows".
    let tag = byteToHex(first);
    pos++;
    if ((first & 0x1f) === 0x1f) {
      let tagBytes = 1;
      for (;;) {
        if (pos >= end)
          throw new TlvError(
            shortCode ?? 'TLV_TRUNCATED_TAG',
            `data ends inside the tag that starts at offset ${objStart}`,
            objStart,
          );
        const b = bytes[pos++] as number;
        tag = tagBytes === 1 && (b & 0x80) === 0 ? twoByteTag(first, b) : tag + byteToHex(b);
        if (++tagBytes > MAX_TAG_BYTES)
          throw new TlvError(
            'TLV_TAG_TOO_LONG',
            `tag at offset ${objStart} is longer than ${MAX_TAG_BYTES} bytes`,
            objStart,
          );
        if ((b & 0x80) === 0) break;
      }
    }

    // Length (Annex B2): short form 0-127, or 81/82/83 + that many bytes.
    if (pos >= end)
      throw new TlvError(
        shortCode ?? 'TLV_TRUNCATED_LENGTH',
        `the object at offset ${objStart} has no length`,
        objStart,
      );
    const lengthOffset = pos;
    let length = bytes[pos++] as number;
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 3)
        throw new TlvError(
          'TLV_BAD_LENGTH',
          `the object at offset ${objStart} uses a length form other than 81, 82, 83 (offset ${lengthOffset})`,
          lengthOffset,
        );
      if (pos + count > end)
        throw new TlvError(
          shortCode ?? 'TLV_TRUNCATED_LENGTH',
          `data ends inside the length of the object at offset ${objStart}`,
          objStart,
        );
      length = 0;
      for (let i = 0; i < count; i++) length = (length << 8) | (bytes[pos++] as number);
    }
    if (length > end - pos)
      throw new TlvError(
        'TLV_TRUNCATED_VALUE',
        `the object at offset ${objStart} declares more bytes than the ${end - pos} that remain`,
        objStart,
      );

    if (first & 0x20) {
      if (depth + 1 > maxDepth && length > 0 && !onlyPadding(bytes, pos, pos + length))
        throw new TlvError(
          'TLV_TOO_DEEP',
          `the template at offset ${objStart} nests deeper than ${maxDepth}`,
          objStart,
        );
      const children =
        depth + 1 > maxDepth ? [] : decodeList(bytes, pos, pos + length, depth + 1, maxDepth, visit);
      if (visit === undefined) nodes.push({ tag, length, children });
    } else if (visit === undefined) {
      nodes.push({ tag, length, value: bytes.slice(pos, pos + length) });
    } else {
      visit(tag, pos, pos + length);
    }
    count++;
    pos += length;
  }
  return nodes;
}

/** True when [from, end) holds only `00` bytes, or `00` bytes followed by `FF` bytes: a list with no object in it. */
function onlyPadding(bytes: Uint8Array, from: number, end: number): boolean {
  let i = from;
  while (i < end && bytes[i] === 0x00) i++;
  return onlyFfUntil(bytes, i, end);
}

/** Tag text → bytes, validated; bounded cache because the same few dozen tags are encoded all day. */
const tagCache = new Map<string, Uint8Array>();
const TAG_CACHE_LIMIT = 1024;

/**
 * Bytes of a tag written as hex, or a {@link TlvError} `TLV_BAD_NODE` if the text is not one well-formed BER tag:
 * 1 byte unless the low five bits are all ones, then continuation bytes with bit 8 set and a last byte with bit 8
 * clear; at most {@link MAX_TAG_BYTES} bytes; never `00` (that is padding).
 */
export function tagBytes(tag: string): Uint8Array {
  const cached = tagCache.get(tag);
  if (cached) return cached;
  const bytes = parseTag(tag);
  if (tagCache.size < TAG_CACHE_LIMIT) tagCache.set(tag, bytes);
  return bytes;
}

function parseTag(tag: string): Uint8Array {
  const bad = (why: string): TlvError => new TlvError('TLV_BAD_NODE', `tag "${tag.slice(0, 16)}" ${why}`, -1);
  if (!isCanonicalHex(tag) || tag !== tag.toUpperCase()) throw bad('is not upper-case hex of whole bytes');
  const n = tag.length / 2;
  if (n > MAX_TAG_BYTES) throw bad(`is longer than ${MAX_TAG_BYTES} bytes`);
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = parseInt(tag.slice(2 * i, 2 * i + 2), 16);
  const first = bytes[0] as number;
  if (first === 0x00) throw bad('is 00, which is padding');
  const multi = (first & 0x1f) === 0x1f;
  if (!multi && n !== 1) throw bad('has more bytes than its first byte announces');
  if (multi) {
    if (n < 2) throw bad('announces more bytes than it has');
    for (let i = 1; i < n; i++) {
      const more = ((bytes[i] as number) & 0x80) !== 0;
      if (more !== i < n - 1) throw bad('has wrong continuation bits');
    }
  }
  return bytes;
}

/** True when the tag's first byte has bit 6 set (its value is a TLV list). `tag` must be well-formed hex. */
export function isConstructedTag(tag: string): boolean {
  return (parseInt(tag.slice(0, 2), 16) & 0x20) !== 0;
}

function lengthFieldSize(length: number): number {
  return length < 0x80 ? 1 : length <= 0xff ? 2 : length <= 0xffff ? 3 : 4;
}

/**
 * Encodes a TLV list with the shortest length forms; each node's `length` is recomputed from its `value` or
 * `children`.
 *
 * @throws TlvError `TLV_BAD_NODE` (offset -1) for a malformed tag, a node with both or neither of `value` and
 *   `children`, a `value` on a constructed tag or `children` on a primitive one, a value longer than 16 MiB − 1,
 *   or nesting deeper than {@link MAX_DEPTH_LIMIT}.
 */
export function encodeTlv(nodes: readonly TlvNode[]): Uint8Array {
  // Pass 1 computes each node's content size in pre-order; pass 2 writes in the same order, so each buffer is
  // allocated once.
  const sizes: number[] = [];
  const tags: Uint8Array[] = [];
  const total = measureList(nodes, sizes, tags, 1);
  const out = new Uint8Array(total);
  const cursor = { pos: 0, index: 0 };
  writeList(nodes, out, sizes, tags, cursor);
  return out;
}

function measureList(nodes: readonly TlvNode[], sizes: number[], tags: Uint8Array[], depth: number): number {
  if (depth > MAX_DEPTH_LIMIT)
    throw new TlvError('TLV_BAD_NODE', `nodes nest deeper than ${MAX_DEPTH_LIMIT}`, -1);
  let total = 0;
  for (const node of nodes) {
    const tb = tagBytes(node.tag);
    const constructed = ((tb[0] as number) & 0x20) !== 0;
    const index = sizes.length;
    sizes.push(0);
    tags.push(tb);
    let content: number;
    if (node.value !== undefined && node.children === undefined) {
      if (constructed)
        throw new TlvError('TLV_BAD_NODE', `tag ${node.tag} is constructed but the node has a value`, -1);
      content = node.value.length;
    } else if (node.children !== undefined && node.value === undefined) {
      if (!constructed)
        throw new TlvError('TLV_BAD_NODE', `tag ${node.tag} is primitive but the node has children`, -1);
      content = measureList(node.children, sizes, tags, depth + 1);
    } else {
      throw new TlvError('TLV_BAD_NODE', `node ${node.tag} must have exactly one of value and children`, -1);
    }
    if (content > MAX_TLV_LENGTH)
      throw new TlvError(
        'TLV_BAD_NODE',
        `tag ${node.tag} holds ${content} bytes, more than ${MAX_TLV_LENGTH}`,
        -1,
      );
    sizes[index] = content;
    total += tb.length + lengthFieldSize(content) + content;
  }
  return total;
}

function writeList(
  nodes: readonly TlvNode[],
  out: Uint8Array,
  sizes: readonly number[],
  tags: readonly Uint8Array[],
  cursor: { pos: number; index: number },
): void {
  for (const node of nodes) {
    const content = sizes[cursor.index] as number;
    const tb = tags[cursor.index] as Uint8Array;
    cursor.index++;
    for (let i = 0; i < tb.length; i++) out[cursor.pos++] = tb[i] as number;
    if (content < 0x80) out[cursor.pos++] = content;
    else if (content <= 0xff) {
      out[cursor.pos++] = 0x81;
      out[cursor.pos++] = content;
    } else if (content <= 0xffff) {
      out[cursor.pos++] = 0x82;
      out[cursor.pos++] = content >> 8;
      out[cursor.pos++] = content & 0xff;
    } else {
      out[cursor.pos++] = 0x83;
      out[cursor.pos++] = content >> 16;
      out[cursor.pos++] = (content >> 8) & 0xff;
      out[cursor.pos++] = content & 0xff;
    }
    if (node.value !== undefined) {
      const v = node.value;
      // TypedArray.set costs more than a loop for the few bytes most EMV values have.
      if (v.length > 32) out.set(v, cursor.pos);
      else for (let i = 0; i < v.length; i++) out[cursor.pos + i] = v[i] as number;
      cursor.pos += v.length;
    } else if (node.children !== undefined) {
      writeList(node.children, out, sizes, tags, cursor);
    }
  }
}

/** One primitive data object, as the tag-set builder and the reader drivers exchange them. */
export interface TlvEntry {
  /** Upper-case hex tag. */
  tag: string;
  /** The raw value bytes. */
  value: Uint8Array;
}

/** The primitive objects of a tree in wire order (depth first); constructed objects are replaced by their contents. */
export function flattenTlv(nodes: readonly TlvNode[]): TlvEntry[] {
  const out: TlvEntry[] = [];
  const walk = (list: readonly TlvNode[]): void => {
    for (const n of list) {
      if (n.children !== undefined) walk(n.children);
      else if (n.value !== undefined) out.push({ tag: n.tag, value: n.value });
    }
  };
  walk(nodes);
  return out;
}

/** The first primitive object with `tag` anywhere in the tree (depth first), or undefined. */
export function findTlv(nodes: readonly TlvNode[], tag: string): Uint8Array | undefined {
  for (const n of nodes) {
    if (n.tag === tag && n.value !== undefined) return n.value;
    if (n.children !== undefined) {
      const found = findTlv(n.children, tag);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
