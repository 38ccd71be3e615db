import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/index.js';
import { countStart, START_LOOP_FILE, startBackoffMs } from './start-loop.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'pt-start-loop-'));
  dirs.push(d);
  return d;
}

describe('starts that do not become ready', () => {
  it('waits nothing after a good start, then 10 s doubling up to five minutes', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 1000].map(startBackoffMs)).toEqual([
      0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ]);
  });

  it('counts every start until a good one, whatever ended the others', () => {
    const dir = stateDir();
    expect(countStart(dir, silentLogger()).failedBefore).toBe(0);
    // That start died without a word (a crash, the watchdog): the next one knows.
    const second = countStart(dir, silentLogger());
    expect(second).toMatchObject({ failedBefore: 1, backoffMs: 10_000 });
    const third = countStart(dir, silentLogger());
    expect(third).toMatchObject({ failedBefore: 2, backoffMs: 20_000 });
    third.good();
    expect(existsSync(join(dir, START_LOOP_FILE))).toBe(false);
    expect(countStart(dir, silentLogger()).failedBefore).toBe(0);
  });

  it('does not count a start stopped before it was ready', () => {
    const dir = stateDir();
    countStart(dir, silentLogger());
    const stopped = countStart(dir, silentLogger());
    stopped.stopped();
    expect(JSON.parse(readFileSync(join(dir, START_LOOP_FILE), 'utf8'))).toEqual({ failed: 1 });
    expect(countStart(dir, silentLogger()).failedBefore).toBe(1);
  });

  it('counts a record that is not its own as one failed start', () => {
    const dir = stateDir();
    writeFileSync(join(dir, START_LOOP_FILE), '{"failed":');
    expect(countStart(dir, silentLogger()).failedBefore).toBe(1);
    writeFileSync(join(dir, START_LOOP_FILE), '{"failed":-3}');
    expect(countStart(dir, silentLogger()).failedBefore).toBe(1);
  });

  it('starts without a count, never throwing, where the record cannot be read or written', () => {
    const dir = stateDir();
    // A state directory that is a file (ENOTDIR), and one that does not exist (ENOENT).
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const start = countStart(file, silentLogger());
    expect(start.failedBefore).toBe(0);
    expect(() => start.good()).not.toThrow();
    const missing = countStart(join(dir, 'no', 'such', 'dir'), silentLogger());
    expect(missing.backoffMs).toBe(0);
    expect(() => missing.stopped()).not.toThrow();
  });
});
