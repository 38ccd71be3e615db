import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The application version of package.json: the nearest one named parking-terminal above this file, from the sources
 * and from dist/ alike. `unknown` when there is none (a copy without its package.json).
 */
export function appVersion(): string {
  let dir = import.meta.dirname;
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'parking-terminal' && pkg.version) return pkg.version;
      } catch {
        // not ours: keep looking
      }
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
