import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The import-cycle rule as the project's own ESLint configuration applies it: fixture modules are written inside the
 * repository (under test/, so tsconfig.json and eslint.config.js cover them) and linted through ESLint's Node API.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const RULE = 'local/no-import-cycle';

const fixtures: Record<string, string> = {
  // A cycle of value imports: a load-order hazard.
  'value-a.ts': "import { b } from './value-b.js';\nexport const a = (): number => b + 1;\n",
  'value-b.ts':
    "import { a } from './value-a.js';\nexport const b = 1;\nexport const twice = (): number => a() * 2;\n",
  // Closed by a type-only import, like journal/offline-queue.ts ↔ journal/recovery.ts was.
  'mixed-a.ts':
    "import type { Outcome } from './mixed-b.js';\nexport const describeOutcome = (o: Outcome): string => o.status;\n",
  'mixed-b.ts':
    "import { describeOutcome } from './mixed-a.js';\nexport interface Outcome {\n  status: string;\n}\nexport const label = (o: Outcome): string => describeOutcome(o);\n",
  // Only type imports, three files round: like sandbox/request-record.ts ↔ sandbox/store.ts was, one step longer.
  'ring-1.ts': "import type { Two } from './ring-2.js';\nexport interface One {\n  next?: Two;\n}\n",
  'ring-2.ts': "import type { Three } from './ring-3.js';\nexport interface Two {\n  next?: Three;\n}\n",
  'ring-3.ts': "import type { One } from './ring-1.js';\nexport interface Three {\n  next?: One;\n}\n",
  // Re-exports and dynamic imports are edges too.
  'reexport-a.ts': "export { later } from './reexport-b.js';\nexport const early = 1;\n",
  'reexport-b.ts':
    "export const later = async (): Promise<number> => (await import('./reexport-a.js')).early;\n",
  // No cycle: a chain, a shared leaf, Node built-ins and packages.
  'leaf.ts': "export const leaf = 'leaf';\n",
  'middle.ts': "import { leaf } from './leaf.js';\nexport const middle = `${leaf}+middle`;\n",
  'top.ts':
    "import { join } from 'node:path';\nimport { z } from 'zod';\nimport { leaf } from './leaf.js';\nimport { middle } from './middle.js';\nexport const top = z.string().parse(join(leaf, middle));\n",
};

let dir = '';
const messages = new Map<string, ESLint.LintResult['messages']>();

beforeAll(async () => {
  dir = mkdtempSync(join(root, 'test', 'lint', 'cycle-fixture-'));
  for (const [name, text] of Object.entries(fixtures)) writeFileSync(join(dir, name), text);
  const results = await new ESLint({ cwd: root }).lintFiles(
    Object.keys(fixtures).map((name) => join(dir, name)),
  );
  for (const result of results) messages.set(relative(dir, result.filePath), result.messages);
}, 120_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** The cycle reports of one fixture file: line and the path the message names, as fixture file names. */
function cycles(name: string): Array<{ line: number; path: string }> {
  const found = messages.get(name);
  expect(found, `${name} was linted`).toBeDefined();
  expect(found!.filter((m) => m.fatal === true)).toEqual([]);
  const fixtureDir = relative(root, dir);
  return found!
    .filter((m) => m.ruleId === RULE)
    .map((m) => ({
      line: m.line,
      path: (/^Import cycle: (.*?)\. /.exec(m.message)?.[1] ?? m.message).replaceAll(`${fixtureDir}/`, ''),
    }));
}

describe('no-import-cycle (eslint.config.js)', () => {
  it('reports both imports of a cycle of value imports', () => {
    expect(cycles('value-a.ts')).toEqual([{ line: 1, path: 'value-a.ts → value-b.ts → value-a.ts' }]);
    expect(cycles('value-b.ts')).toEqual([{ line: 1, path: 'value-b.ts → value-a.ts → value-b.ts' }]);
  });

  it('reports a cycle closed by a type-only import, on both sides', () => {
    expect(cycles('mixed-a.ts')).toEqual([{ line: 1, path: 'mixed-a.ts → mixed-b.ts → mixed-a.ts' }]);
    expect(cycles('mixed-b.ts')).toEqual([{ line: 1, path: 'mixed-b.ts → mixed-a.ts → mixed-b.ts' }]);
  });

  it('reports a cycle of type-only imports through three modules, naming the whole path', () => {
    expect(cycles('ring-1.ts')).toEqual([{ line: 1, path: 'ring-1.ts → ring-2.ts → ring-3.ts → ring-1.ts' }]);
    expect(cycles('ring-2.ts')).toEqual([{ line: 1, path: 'ring-2.ts → ring-3.ts → ring-1.ts → ring-2.ts' }]);
    expect(cycles('ring-3.ts')).toEqual([{ line: 1, path: 'ring-3.ts → ring-1.ts → ring-2.ts → ring-3.ts' }]);
  });

  it('counts re-exports and dynamic imports as edges', () => {
    expect(cycles('reexport-a.ts')).toEqual([
      { line: 1, path: 'reexport-a.ts → reexport-b.ts → reexport-a.ts' },
    ]);
    expect(cycles('reexport-b.ts')).toEqual([
      { line: 1, path: 'reexport-b.ts → reexport-a.ts → reexport-b.ts' },
    ]);
  });

  it('reports nothing where imports only go one way', () => {
    expect(cycles('leaf.ts')).toEqual([]);
    expect(cycles('middle.ts')).toEqual([]);
    expect(cycles('top.ts')).toEqual([]);
  });
});
