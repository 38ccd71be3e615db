import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** The folders of the unit tests, beside the code. */
const UNIT_DIRS = ['src', 'devices', 'certification', 'bench', 'main', 'renderer'];
const UNIT = UNIT_DIRS.map((dir) => `${dir}/**/*.test.ts`);

/**
 * Unit test files that replace a module or a global for the whole file (`vi.mock`, `vi.doMock`, `vi.stubGlobal`,
 * `vi.stubEnv`): they need a module registry of their own. Found by reading the files, so that a new one is never run
 * sharing its registry.
 */
const REPLACES_MODULES = /\bvi\.(mock|doMock|stubGlobal|stubEnv)\(/;
const ownRegistry = UNIT_DIRS.flatMap((dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !file.includes('node_modules'))
    .map((file) => `${dir}/${file}`)
    .filter((file) => REPLACES_MODULES.test(readFileSync(file, 'utf8'))),
);

export default defineConfig({
  test: {
    // Every file's temporary directories in one, removed at the end of the run (test/temp-root.ts); in it, the test
    // browser unpacked once before any file starts (test/chromium-unpacked.ts).
    globalSetup: ['test/temp-root.ts', 'test/chromium-unpacked.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two test files at a time: most of the suite waits on child processes, browsers and disk syncs, so on
    // the 2-vCPU build machines (where the default is one) two files take 58% of the time of one after the other.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          // The unit files share a test process and its loaded modules, file after file: a new process and a fresh
          // import of the sources for each of some 230 small files cost more than their tests. Each file still
          // makes its own journals, servers and timers, and restores what it fakes.
          name: 'unit',
          include: UNIT,
          exclude: ['**/node_modules/**', ...ownRegistry],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // Integration, end-to-end and crash tests (test/), and the unit files that replace modules: a process each.
          name: 'isolated',
          include: ['test/**/*.test.ts', ...ownRegistry],
        },
      },
    ],
  },
});
