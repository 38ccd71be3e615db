import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, matchesGlob, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * What `npm run build` compiles (tsconfig.build.json) and what electron-builder packages from it: the product, never a
 * test or a helper only tests use.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** Test code by its place or name: `*.test.ts`, anything under test/ or a `testing/` folder, `*.contract.ts`. */
function isTestCode(path: string): boolean {
  return (
    /\.test\.[cm]?[jt]s$/.test(path) ||
    path.startsWith('test/') ||
    /(^|\/)testing\//.test(path) ||
    /\.contract\.[cm]?[jt]s$/.test(path)
  );
}

/** The project's own files `tsc -p tsconfig.build.json` would compile, relative to the repository, with `/`. */
function buildFiles(): string[] {
  const out = execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--listFilesOnly'], {
    cwd: root,
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((file) => relative(root, file).split(sep).join('/'))
    .filter((file) => !file.startsWith('node_modules/') && !file.startsWith('..'));
}

/** Every file of the repository's source folders, relative with `/` (node_modules, dist and .git left out). */
function repositoryFiles(dir = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', '.git', 'var', '.tmp'].includes(entry.name))
        files.push(...repositoryFiles(path));
    } else files.push(path);
  }
  return files;
}

/** Whether electron-builder's `files` take `path`: the last pattern that matches decides, `!` excludes. */
function packaged(patterns: readonly string[], path: string): boolean {
  let taken = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (matchesGlob(path, negated ? pattern.slice(1) : pattern)) taken = !negated;
  }
  return taken;
}

describe('build contents', () => {
  const built = buildFiles();

  it('compiles the product: the kiosk main process, the command, the core and the drivers', () => {
    for (const file of [
      'main/main.ts',
      'src/cli/main.ts',
      'src/cli/run.ts',
      'src/host/terminal-host.ts',
      'devices/reader.ts',
    ])
      expect(built, file).toContain(file);
  });

  it('compiles no test and no test helper', () => {
    expect(built.filter(isTestCode)).toEqual([]);
  });

  it('recognises the test helpers it keeps out', () => {
    // The helpers this check exists for; if one moves, this list moves with it.
    for (const helper of [
      'src/flows/testing/fake-terminal.ts',
      'devices/reader.contract.ts',
      'devices/vivotech2/testing/published-frames.ts',
      'src/sandbox/testing/signed-client.ts',
    ]) {
      expect(repositoryFiles().includes(helper), helper).toBe(true);
      expect(isTestCode(helper), helper).toBe(true);
    }
  });

  it('electron-builder packages the compiled product and no test code, even from an older dist/', () => {
    const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as { files: string[] };
    const emitted = (file: string): string => `dist/${file.replace(/\.[cm]?ts$/, '.js')}`;
    for (const file of built) expect(packaged(config.files, emitted(file)), emitted(file)).toBe(true);
    expect(packaged(config.files, 'bin/parking-terminal.js')).toBe(true);
    // Every test file beside the code, as a build that still compiled it would have left it in dist/ (test/ itself was
    // never in a build's `include`).
    const testCode = repositoryFiles().filter(
      (file) => /\.[cm]?ts$/.test(file) && isTestCode(file) && !file.startsWith('test/'),
    );
    expect(testCode.length).toBeGreaterThan(0);
    for (const file of testCode) {
      expect(packaged(config.files, emitted(file)), emitted(file)).toBe(false);
      expect(packaged(config.files, `${emitted(file)}.map`), `${emitted(file)}.map`).toBe(false);
    }
    for (const file of repositoryFiles().filter(
      (f) => f.startsWith('bin/') && f !== 'bin/parking-terminal.js',
    ))
      expect(packaged(config.files, file), file).toBe(false);
  });
});
