import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Failure to bundle the preload. */
export class PreloadBuildError extends Error {
  override readonly name = 'PreloadBuildError';
  readonly code = 'PRELOAD_BUILD';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The preload's sources, relative to the repository root. */
const SOURCES = ['main/preload.ts', 'main/preload-api.ts', 'src/host/api.ts'];

/**
 * Bundles main/preload.ts into one CommonJS file (`<root>/dist/main/preload.cjs` unless `outFile` is given) when it is
 * missing or older than its sources, and returns its path. A sandboxed preload can `require` only `electron` and a
 * few built-ins and cannot load ES modules, so it must be a single CommonJS script.
 */
export async function buildPreload(
  root: string,
  outFile = join(root, 'dist', 'main', 'preload.cjs'),
): Promise<string> {
  const newest = Math.max(
    ...SOURCES.map((s) => (existsSync(join(root, s)) ? statSync(join(root, s)).mtimeMs : 0)),
  );
  if (existsSync(outFile) && (newest === 0 || statSync(outFile).mtimeMs >= newest)) return outFile;
  await mkdir(dirname(outFile), { recursive: true });
  try {
    const { build } = await import('vite');
    await build({
      configFile: false,
      logLevel: 'silent',
      root,
      build: {
        outDir: dirname(outFile),
        emptyOutDir: false,
        minify: false,
        target: 'node20',
        lib: {
          entry: join(root, 'main', 'preload.ts'),
          formats: ['cjs'],
          fileName: () => outFile.slice(dirname(outFile).length + 1),
        },
        rollupOptions: { external: ['electron'] },
      },
    });
  } catch (e) {
    throw new PreloadBuildError(`the preload bundle failed: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  return outFile;
}
