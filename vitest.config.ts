import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'devices/**/*.test.ts',
      'certification/**/*.test.ts',
      'bench/**/*.test.ts',
      'main/**/*.test.ts',
      'renderer/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // Every file's temporary directories in one, removed at the end of the run (test/temp-root.ts); in it, the test
    // browser unpacked once before any file starts (test/chromium-unpacked.ts).
    globalSetup: ['test/temp-root.ts', 'test/chromium-unpacked.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two test files at a time: most of the suite waits on child processes, browsers and disk syncs, so on
    // the 2-vCPU build machines (where the default is one) two files take 58% of the time of one after the other.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
