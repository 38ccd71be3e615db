import { bytesToHex, decodeTlv, encodeTlv, hexToBytes, type TlvNode } from '../../src/emv/index.js';
import { redactCardNumbers } from '../../src/log/index.js';

/**
 * The last check before evidence is written (DESIGN.md, money safety rule 4): the runner has already masked card data
 * in a way that keeps EMV tags and masked PANs readable, so the reports do not redact again wholesale (the log
 * redactor would also erase every long hex blob, the tags included, and every gateway id). They only make sure that
 * nothing that reads as a full card number survives, by the log's own card-number rule (`redactCardNumbers`): a number
 * of a card network with any separators or in full-width digits, and any Luhn-valid run of 13–19 digits grouped by
 * spaces or dashes.
 */

/**
 * A run of hex digits (and the stars of values the runner masked) with at least one letter, long enough to hold a card
 * number: EMV tags as the evidence shows them.
 */
const HEX_RUN = /(?<![0-9A-Za-z*])(?=[0-9A-Fa-f*]*[A-Fa-f])[0-9A-Fa-f*]{13,}(?![0-9A-Za-z*])/g;

/** Stands for a run of tags while the rest of the text is scrubbed: a character no card-number rule reads. */
const TAGS_PLACEHOLDER = '\uE000';

/** One TLV object of `source` from `at` (the decoded `node`), each primitive value holding a card number starred. */
function scrubNode(node: TlvNode, source: string, at: number): string {
  const length = bytesToHex(encodeTlv([node])).length;
  if (node.children !== undefined) {
    const header = length - bytesToHex(encodeTlv(node.children)).length;
    let out = source.slice(at, at + header);
    let position = at + header;
    for (const child of node.children) {
      out += scrubNode(child, source, position);
      position += bytesToHex(encodeTlv([child])).length;
    }
    return out;
  }
  const valueStart = at + length - (node.value?.length ?? 0) * 2;
  const value = source.slice(valueStart, at + length);
  return (
    source.slice(at, valueStart) + (redactCardNumbers(value) === value ? value : '*'.repeat(value.length))
  );
}

/**
 * A run of hex read as EMV tags, value by value: a value that holds a card number is starred whole, and digits that
 * only read as one across a tag, a length and the next value (`9F36 02 0028 82 02 5C00`: "3602002882025") are left
 * alone. Undefined when the run is no canonical TLV (stars read as zeros: the runner stars values only).
 */
function scrubTlvHex(run: string): string | undefined {
  try {
    const plain = run.replace(/\*/g, '0');
    const nodes = decodeTlv(hexToBytes(plain));
    if (bytesToHex(encodeTlv(nodes)).toUpperCase() !== plain.toUpperCase()) return undefined;
    let out = '';
    let position = 0;
    for (const node of nodes) {
      out += scrubNode(node, run, position);
      position += bytesToHex(encodeTlv([node])).length;
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * `text` with every card number the log redaction removes replaced by its redaction. A run of hex that reads as EMV
 * tags is judged value by value instead, a value holding a card number starred (the tags stay readable and true to
 * what was sent); the rest of the text, with each such run standing apart, by the log's rule.
 */
export function scrubCardNumbers(text: string): string {
  const runs: string[] = [];
  const rest = text.replace(HEX_RUN, (run) => {
    const scrubbed = scrubTlvHex(run);
    if (scrubbed === undefined) return run;
    runs.push(scrubbed);
    return TAGS_PLACEHOLDER;
  });
  if (runs.length === 0) return redactCardNumbers(text);
  const redacted = redactCardNumbers(rest);
  const pieces = redacted.split(TAGS_PLACEHOLDER);
  // A redaction that took a placeholder with it: the whole text by the log's rule, as without runs.
  if (pieces.length !== runs.length + 1) return redactCardNumbers(text);
  const out = pieces.map((piece, i) => piece + (runs[i] ?? '')).join('');
  return out === text ? text : out;
}

/**
 * A deep copy of a JSON value with {@link scrubCardNumbers} applied to every string, and to every integer large
 * enough to be a card number (which then becomes a string).
 */
export function scrubCardNumbersDeep(value: unknown): unknown {
  if (typeof value === 'string') return scrubCardNumbers(value);
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) >= 1e12) {
    const text = String(value);
    const scrubbed = scrubCardNumbers(text);
    return scrubbed === text ? value : scrubbed;
  }
  if (Array.isArray(value)) return value.map(scrubCardNumbersDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      // defineProperty: a key named `__proto__` (legal JSON) stays a key instead of replacing the prototype.
      Object.defineProperty(out, scrubCardNumbers(k), {
        value: scrubCardNumbersDeep(v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return value;
}
