import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { electronBinary, electronStatus } from './electron-available.js';

let pkg: string;
beforeEach(async () => {
  pkg = await mkdtemp(join(tmpdir(), 'electron-pkg-'));
});
afterEach(async () => {
  await rm(pkg, { recursive: true, force: true });
});

describe('electron availability', () => {
  it('reports a package whose binary was never downloaded as unavailable', () => {
    expect(electronStatus(pkg, {})).toEqual({
      available: false,
      reason: expect.stringContaining('path.txt') as string,
    });
    expect(electronBinary(pkg, {})).toBeUndefined();
  });

  it('reports a path file without dist/ as unavailable', async () => {
    await writeFile(join(pkg, 'path.txt'), 'electron');
    expect(electronBinary(pkg, {})).toBeUndefined();
  });

  it('finds the binary named by path.txt under dist/', async () => {
    await writeFile(join(pkg, 'path.txt'), 'electron');
    await mkdir(join(pkg, 'dist'));
    await writeFile(join(pkg, 'dist', 'electron'), '');
    expect(electronBinary(pkg, {})).toBe(join(pkg, 'dist', 'electron'));
  });

  it('honours ELECTRON_OVERRIDE_DIST_PATH like the electron package does', async () => {
    const other = join(pkg, 'elsewhere');
    await mkdir(other);
    await writeFile(join(other, 'electron'), '');
    expect(electronBinary(pkg, { ELECTRON_OVERRIDE_DIST_PATH: other })).toBe(join(other, 'electron'));
  });

  it('answers for the installed electron package without throwing', () => {
    const status = electronStatus();
    expect(typeof status.available).toBe('boolean');
  });
});
