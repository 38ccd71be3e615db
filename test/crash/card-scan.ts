import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { VIRTUAL_CARDS } from '../../devices/sim/cards.js';
import { SAMPLE_CARDS } from '../../src/sandbox/sample-requests.js';
import { DECLINING_CARDS } from '../../src/sandbox/triggers.js';

/**
 * Every test card number the suite's terminals and drivers can handle: the simulator's virtual cards
 * (devices/sim/cards.ts), the sandbox's sample cards and its declining cards.
 */
export const TEST_PANS: readonly string[] = [
  ...new Set([
    ...Object.values(VIRTUAL_CARDS).flatMap((c) => ('card' in c.outcome ? [c.outcome.card.pan] : [])),
    ...Object.values(SAMPLE_CARDS).map((c) => c.pan),
    ...Object.keys(DECLINING_CARDS),
  ]),
];

/** Card data found in clear in a file. */
export interface CardDataFinding {
  /** Path relative to the scanned directory. */
  file: string;
  /** `pan`, `pan-bcd` (tag 5A packed form), `track1`, `track2`, `tag57`, `cvv`. */
  kind: string;
  /** Byte offset of the first occurrence. */
  offset: number;
}

// Track 1 (format B) and track 2 (with or without sentinels) of any card; tag 57 as hex text (PAN 'D' YYMM).
const PATTERNS: readonly [string, RegExp][] = [
  ['track1', /%?B\d{12,19}\^[^^\n]{2,26}\^\d{4}/],
  ['track2', /;?\d{12,19}=\d{4}\d{3}/],
  ['tag57', /\d{12,19}D\d{4}[0-9]{3}/],
  // A security code by any of its names with a 3–4 digit value, as JSON or as form data.
  [
    'cvv',
    /["']?(?:securityCode|cvv2?|cvc2?|cvn|cardVerificationValue|cid)["']?\s*[:=]\s*["']?\d{3,4}(?![0-9])/i,
  ],
];

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...listFiles(path));
    else if (st?.isFile()) out.push(path);
  }
  return out;
}

/** Card data in clear in one buffer: test PANs as text or BCD-packed bytes, track data, tag 57, security codes. */
export function findCardData(bytes: Buffer): { kind: string; offset: number }[] {
  const found: { kind: string; offset: number }[] = [];
  const text = bytes.toString('latin1');
  for (const pan of TEST_PANS) {
    const at = text.indexOf(pan);
    if (at >= 0) found.push({ kind: 'pan', offset: at });
    if (pan.length % 2 === 0) {
      const bcd = bytes.indexOf(Buffer.from(pan, 'hex'));
      if (bcd >= 0) found.push({ kind: 'pan-bcd', offset: bcd });
    }
  }
  for (const [kind, re] of PATTERNS) {
    const m = re.exec(text);
    if (m) found.push({ kind, offset: m.index });
  }
  return found;
}

/**
 * Scans every file under `dir` — journal database, its WAL and shared-memory files, key files and the stores beside
 * them, log files — for card data in clear (DESIGN.md, money safety rule 4).
 */
export function scanForCardData(dir: string): { files: string[]; findings: CardDataFinding[] } {
  const files = listFiles(dir);
  const findings: CardDataFinding[] = [];
  for (const path of files) {
    for (const f of findCardData(readFileSync(path))) findings.push({ file: relative(dir, path), ...f });
  }
  return { files: files.map((f) => relative(dir, f)), findings };
}
