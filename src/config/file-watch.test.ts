import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

  it('reports a directory that cannot be watched (not there) as a failed watch, not a throw', () => {
    const failures: Error[] = [];
    watch = watchConfigFile(join(dir, 'gone', 'terminal.yml'), () => undefined, {
      failed: (e) => failures.push(e),
    });
    expect(failures).toEqual([expect.objectContaining({ code: 'ENOENT' })]);
    watch.close();
  });
});
