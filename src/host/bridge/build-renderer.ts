import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Failure to build the renderer. */
export class RendererBuildError extends Error {
  override readonly name = 'RendererBuildError';
  readonly code = 'RENDERER_BUILD';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface BuildRendererOptions {
  /** The repository root (the directory with renderer/ and package.json); found from this file when absent. */
  root?: string;
  /** Where the built renderer goes; `<root>/dist/renderer` when absent. */
  outDir?: string;
  /** Build even when the output is newer than every source. */
  force?: boolean;
}

/** The repository root: the nearest ancestor of this file holding renderer/vite.config.ts and package.json. */
export function repositoryRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'renderer', 'vite.config.ts')))
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new RendererBuildError(`no renderer sources above ${from}`);
    dir = parent;
  }
}

/** Newest modification time (ms) of the files under `path`, or 0 when it does not exist. */
async function newestMtime(path: string): Promise<number> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, entry)));
  return newest;
}

/** The sources the renderer bundle is made of: its own files plus the two core modules it may import. */
function sourcesOf(root: string): string[] {
  return [
    join(root, 'renderer', 'index.html'),
    join(root, 'renderer', 'vite.config.ts'),
    join(root, 'renderer', 'src'),
    join(root, 'src', 'host', 'api.ts'),
    join(root, 'src', 'money'),
  ];
}

/**
 * Builds the renderer with Vite into `dist/renderer` when the build is missing or older than its sources, and returns
 * the directory to serve. Safe when several processes start at once: each builds into its own temporary directory
 * and moves it into place with a rename, so a reader never sees a half-written build. Where the sources are absent
 * (a packaged app) an existing build is used as is.
 */
export async function buildRenderer(options: BuildRendererOptions = {}): Promise<string> {
  const root = options.root ?? repositoryRoot();
  const outDir = resolve(options.outDir ?? join(root, 'dist', 'renderer'));
  const index = join(outDir, 'index.html');
  const isFresh = async (): Promise<boolean> => {
    const built = await newestMtime(index);
    if (built === 0) return false;
    let newestSource = 0;
    for (const s of sourcesOf(root)) newestSource = Math.max(newestSource, await newestMtime(s));
    return built >= newestSource;
  };
  if (!options.force && (await isFresh())) return outDir;

  const parent = dirname(outDir);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(join(parent, '.renderer-build-'));
  try {
    let build;
    try {
      ({ build } = await import('vite'));
    } catch (e) {
      throw new RendererBuildError('Vite is not installed: run npm install (with dev dependencies)', {
        cause: e,
      });
    }
    try {
      await build({
        configFile: join(root, 'renderer', 'vite.config.ts'),
        logLevel: 'silent',
        build: { outDir: staging, emptyOutDir: true },
      });
    } catch (e) {
      throw new RendererBuildError(
        `the renderer build failed: ${e instanceof Error ? e.message : String(e)}`,
        {
          cause: e,
        },
      );
    }
    // mkdtemp makes the directory private to its owner; the build is readable like any installed file.
    await chmod(staging, 0o755);
    await moveIntoPlace(staging, outDir, isFresh);
    return outDir;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Renames `staging` to `outDir`; an existing build is moved aside first unless another process just replaced it. */
async function moveIntoPlace(
  staging: string,
  outDir: string,
  isFresh: () => Promise<boolean>,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await rename(staging, outDir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST')
        throw new RendererBuildError(`cannot install the build`, { cause: e });
    }
    // Another process may have installed a fresh build meanwhile: then ours is redundant.
    if (await isFresh()) return;
    const aside = `${outDir}.old-${process.pid}-${attempt}`;
    try {
      await rename(outDir, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new RendererBuildError('cannot replace the old build', { cause: e });
    }
    await rm(aside, { recursive: true, force: true });
  }
  throw new RendererBuildError(`cannot install the build at ${outDir}`);
}
