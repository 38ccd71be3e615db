#!/usr/bin/env node
// The `parking-terminal` command. In production it runs the compiled JavaScript of `npm run build`
// (dist/src/cli/run.js): always where the sources are absent (an installed or packaged copy), and in a checkout when
// dist/ is current — built after the last change of any source. Otherwise, in development, it runs the TypeScript
// sources through tsx, so that a fresh `npm install` is enough. PARKING_TERMINAL_SOURCES=1 forces the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = `${root}dist/src/cli/run.js`;

/** The newest modification time of the TypeScript sources the build compiles (0 when there are none). */
function newestSource() {
  let newest = 0;
  /** @param {string} dir */
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
        newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of ['src', 'devices', 'main', 'certification', 'bench'])
    if (existsSync(`${root}${dir}`)) walk(`${root}${dir}`);
  return newest;
}

/** Whether to run dist/: built, and not older than the sources (when there are sources). */
function runsCompiled() {
  if (process.env.PARKING_TERMINAL_SOURCES === '1' || !existsSync(compiled)) return false;
  if (!existsSync(`${root}src/cli/main.ts`)) return true;
  return statSync(compiled).mtimeMs >= newestSource();
}

if (runsCompiled()) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}
