import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Whether the Electron binary is installed. The `electron` npm package downloads its binary in a postinstall script
 * that cannot run on machines without GitHub access (reference/environment.md); the package (types, path file) is
 * then present without `dist/`. `start` uses this to fall back to headless mode with one line.
 */
export type ElectronStatus = { available: true; path: string } | { available: false; reason: string };

/**
 * Looks for the binary the way the `electron` package's own index.js does (path.txt, dist/, and the
 * ELECTRON_OVERRIDE_DIST_PATH override), without throwing. `packageDir` is the electron package directory (tests).
 */
export function electronStatus(packageDir?: string, env: NodeJS.ProcessEnv = process.env): ElectronStatus {
  let dir = packageDir;
  if (dir === undefined) {
    try {
      dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    } catch {
      return { available: false, reason: 'the electron package is not installed' };
    }
  }
  const pathFile = join(dir, 'path.txt');
  const relative = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : undefined;
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    const path = join(override, relative ?? 'electron');
    return existsSync(path)
      ? { available: true, path }
      : { available: false, reason: `no Electron binary at ${path}` };
  }
  if (!relative)
    return { available: false, reason: 'the Electron binary was never downloaded (no path.txt)' };
  const path = join(dir, 'dist', relative);
  return existsSync(path)
    ? { available: true, path }
    : { available: false, reason: `no Electron binary at ${path}` };
}

/** The Electron executable, or undefined when it is not installed. */
export function electronBinary(
  packageDir?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const status = electronStatus(packageDir, env);
  return status.available ? status.path : undefined;
}
