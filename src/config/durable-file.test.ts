import * as fs from 'node:fs';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeDirectory, removePrivateFileDurably, writePrivateFileDurably } from './durable-file.js';

// The file system as it is, with the steps of a write observable and a failure injectable between them.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    openSync: vi.fn(real.openSync),
    fsyncSync: vi.fn(real.fsyncSync),
    renameSync: vi.fn(real.renameSync),
    linkSync: vi.fn(real.linkSync),
  };
});

const posix = process.platform !== 'win32';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-durable-'));
  vi.clearAllMocks();
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The files of `dir` other than `keep`: drafts left behind. */
function leftovers(...keep: string[]): string[] {
  return readdirSync(dir).filter((name) => !keep.includes(name));
}

/** The path each `fsyncSync` call synced, in order: that of the last `openSync` before it that returned its descriptor. */
function syncedPaths(): string[] {
  const opened = vi.mocked(fs.openSync).mock;
  const synced = vi.mocked(fs.fsyncSync).mock;
  return synced.calls.map(([fd], i) => {
    const at = synced.invocationCallOrder[i] ?? 0;
    let path = `fd ${fd}`;
    opened.results.forEach((r, j) => {
      if (r.type === 'return' && r.value === fd && (opened.invocationCallOrder[j] ?? 0) < at)
        path = String(opened.calls[j]?.[0]);
    });
    return path;
  });
}

describe('writePrivateFileDurably', () => {
  it('replaces a file by a synced draft renamed over it, then syncs the directory; mode 0600, no draft left', () => {
    const path = join(dir, 'tokens.enc');
    writeFileSync(path, 'old');
    writePrivateFileDurably(path, 'new grant', 'replace');
    expect(readFileSync(path, 'utf8')).toBe('new grant');
    if (posix) expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(leftovers('tokens.enc')).toEqual([]);

    const [draft, to] = vi.mocked(fs.renameSync).mock.calls[0] ?? [];
    expect(to).toBe(path);
    expect(String(draft)).toMatch(/^.*tokens\.enc\.\d+\.[0-9a-f]{8}\.new$/);
    expect(syncedPaths()).toEqual([String(draft), dir]);
    // The draft's sync comes before the rename, the directory's after it.
    const [fileSync, dirSync] = vi.mocked(fs.fsyncSync).mock.invocationCallOrder;
    const rename = vi.mocked(fs.renameSync).mock.invocationCallOrder[0] ?? 0;
    expect(fileSync).toBeLessThan(rename);
    expect(dirSync).toBeGreaterThan(rename);
  });

  it('leaves the previous file whole and readable when a failure comes between the synced draft and the rename', () => {
    const path = join(dir, 'tokens.enc');
    writePrivateFileDurably(path, 'grant 1', 'replace');
    vi.mocked(fs.renameSync).mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
    });
    expect(() => writePrivateFileDurably(path, 'grant 2', 'replace')).toThrow('EIO');
    expect(readFileSync(path, 'utf8')).toBe('grant 1');
    if (posix) expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(leftovers('tokens.enc')).toEqual([]);
  });

  it('leaves the previous file whole when the draft cannot be synced, and never moves the draft into place', () => {
    const path = join(dir, 'tokens.enc');
    writePrivateFileDurably(path, 'grant 1', 'replace');
    vi.mocked(fs.renameSync).mockClear();
    vi.mocked(fs.fsyncSync).mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    expect(() => writePrivateFileDurably(path, 'grant 2', 'replace')).toThrow('EIO');
    expect(fs.renameSync).not.toHaveBeenCalled();
    expect(readFileSync(path, 'utf8')).toBe('grant 1');
    expect(leftovers('tokens.enc')).toEqual([]);
  });

  it('creates a file by a link that never replaces one already there, in a directory it creates 0700', () => {
    const path = join(dir, 'var', 'offline.key');
    writePrivateFileDurably(path, 'key 1\n', 'create');
    expect(readFileSync(path, 'utf8')).toBe('key 1\n');
    if (posix) {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'var')).mode & 0o777).toBe(0o700);
    }
    expect(fs.linkSync).toHaveBeenCalledTimes(1);
    expect(() => writePrivateFileDurably(path, 'key 2\n', 'create')).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(readFileSync(path, 'utf8')).toBe('key 1\n');
    expect(readdirSync(join(dir, 'var'))).toEqual(['offline.key']);
  });
});

describe('removePrivateFileDurably', () => {
  it('removes the file, then syncs its directory, so that a power cut cannot bring it back', () => {
    const path = join(dir, 'tokens.enc');
    writePrivateFileDurably(path, 'grant', 'replace');
    vi.clearAllMocks();
    removePrivateFileDurably(path);
    expect(readdirSync(dir)).toEqual([]);
    expect(syncedPaths()).toEqual([dir]);
  });

  it('is done when the file is not there: nothing to remove, the directory synced all the same', () => {
    removePrivateFileDurably(join(dir, 'never-written'));
    expect(syncedPaths()).toEqual([dir]);
    expect(() => removePrivateFileDurably(join(dir, 'missing', 'tokens.enc'))).not.toThrow();
  });
});

describe('makeDirectory', () => {
  it('creates the missing directories above, and an existing one is no error', () => {
    const root = mkdtempSync(join(tmpdir(), 'pt-mkdir-'));
    const dir = join(root, 'a', 'b', 'c');
    makeDirectory(dir, 0o700);
    makeDirectory(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    rmSync(root, { recursive: true, force: true });
  });

  // Node's recursive mkdir never returns here: it finds /proc (EEXIST) and tries /proc/… again, forever.
  it.runIf(existsSync('/proc/self'))('throws ENOENT for a directory under /proc, at once', () => {
    expect(() => makeDirectory('/proc/no-such-directory/journal')).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
