/**
 * The set-up the certification tests share: a pack run against the embedded sandbox, as `certify run` runs it. A test
 * that seeds a defect mocks the builder module itself (vi.mock is per test file, its defect from seeded-defect.ts);
 * these runs then send through it.
 */
import { parsePack } from '../../certification/pack/load.js';
import type { RunReport } from '../../certification/results.js';
import { loadPack, runPack } from '../../certification/runner/index.js';
import { VIRTUAL_CARD_NAMES } from '../../devices/sim/cards.js';
import { DEFAULT_PACK } from '../../src/cli/commands/certify.js';

/** Runs the given cases of the shipped pack, in the order given, against the embedded sandbox. */
export function runShippedCases(...caseIds: string[]): Promise<RunReport> {
  return runPack({ pack: loadPack(DEFAULT_PACK), packFile: DEFAULT_PACK, gateway: 'sandbox', caseIds });
}

/** Runs every case of a pack written in the test (YAML, as a pack file holds it) against the embedded sandbox. */
export function runInlinePack(yaml: string, packFile: string): Promise<RunReport> {
  const pack = parsePack(yaml, packFile, { cards: VIRTUAL_CARD_NAMES });
  return runPack({ pack, packFile, gateway: 'sandbox' });
}
