import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchConfigFile, type ConfigFileWatch } from './file-watch.js';

let dir: string;
let watch: ConfigFileWatch | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-config-watch-'));
});
afterEach(() => {
  watch?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Watches `file` and resolves at its first reported change. */
function firstChange(file: string): Promise<void> {
  return new Promise<void>((changed) => {
    watch = watchConfigFile(file, changed, { debounceMs: 20 });
  });
}

describe('watchConfigFile', () => {
  it('reports a file renamed over the watched one (an editor saving atomically)', async () => {
    const file = join(dir, 'terminal.yml');
    writeFileSync(file, 'terminal: {}\n');
    const changed = firstChange(file);
    writeFileSync(join(dir, 'terminal.yml.draft'), 'terminal: { model: meter }\n');
    renameSync(join(dir, 'terminal.yml.draft'), file);
    await changed;
  });

  it('reports a write in place, and a file that did not exist yet being created', async () => {
    const file = join(dir, 'terminal.json');
    const created = firstChange(file);
    writeFileSync(file, '{}');
    await created;
    watch?.close();
    const written = firstChange(file);
    writeFileSync(file, '{"terminal":{}}');
    await written;
  });

  it('reports a file written in place in two pieces once, whole: not its first piece, quiet for a debounce', async () => {
    // The pause is longer than the debounce and shorter than two. Its end is a timer armed before any of the watch's
    // (which all follow the first piece's event): its due time comes before the watch's second read, whatever the
    // machine's speed, so no timing here can make this test pass or fail by chance.
    const debounceMs = 100;
    const file = join(dir, 'terminal.yml');
    writeFileSync(file, 'reader: { colour: blue }\n');
    const first = 'terminal:\n  model: meter\n';
    const rest = 'gateway:\n  merchantId: acme-parking\n';
    const reports: string[] = [];
    let whole: () => void = () => undefined;
    const reported = new Promise<void>((r) => (whole = r));
    watch = watchConfigFile(
      file,
      () => {
        reports.push(readFileSync(file, 'utf8'));
        if (reports.at(-1) === first + rest) whole();
      },
      { debounceMs },
    );
    writeFileSync(file, first);
    await new Promise((r) => setTimeout(r, debounceMs * 1.9));
    appendFileSync(file, rest);
    await reported;
    expect(reports).toEqual([first + rest]);
  });

  it('reports the file on a recheck once it reads the same twice, with no change and with no watch', async () => {
    const failures: Error[] = [];
    const rechecked = new Promise<void>((changed) => {
      watch = watchConfigFile(join(dir, 'gone', 'terminal.yml'), changed, {
        debounceMs: 20,
        failed: (e) => failures.push(e),
      });
    });
    expect(failures).toHaveLength(1);
    watch?.recheck();
    await rechecked;
  });

  it('reports a directory that cannot be watched (not there) as a failed watch, not a throw', () => {
    const failures: Error[] = [];
    watch = watchConfigFile(join(dir, 'gone', 'terminal.yml'), () => undefined, {
      failed: (e) => failures.push(e),
    });
    expect(failures).toEqual([expect.objectContaining({ code: 'ENOENT' })]);
    watch.close();
  });
});
