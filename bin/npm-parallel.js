#!/usr/bin/env node
// `node bin/npm-parallel.js SCRIPT...`: runs the named npm scripts at the same time (for `npm run check`: the
// typecheck, ESLint and the format check are each mostly one core's work) and exits 1 when any of them failed, once
// all have ended; each script's output goes to this process's, as it comes.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  process.stderr.write('usage: node bin/npm-parallel.js SCRIPT...\n');
  process.exit(2);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/**
 * Runs one npm script; resolves when it has ended, with how.
 * @param {string} script
 * @returns {Promise<{ script: string; code: number | null; signal?: string | null; err?: Error }>}
 */
function run(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', script], { stdio: 'inherit' });
    child.on('error', (err) => resolve({ script, code: null, err }));
    child.on('exit', (code, signal) => resolve({ script, code, signal }));
  });
}

const ended = await Promise.all(scripts.map(run));
const failed = ended.filter((e) => e.code !== 0);
for (const e of failed)
  process.stderr.write(
    `npm run ${e.script} failed (${e.err ? e.err.message : e.signal ? `signal ${e.signal}` : `exit ${e.code}`})\n`,
  );
process.exit(failed.length > 0 ? 1 : 0);
