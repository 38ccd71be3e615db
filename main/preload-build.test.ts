import { statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPC_CHANNELS } from '../src/host/api.js';
import { repositoryRoot } from '../src/host/bridge/build-renderer.js';
import { buildPreload } from './preload-build.js';

let dir: string;
let code: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'preload-'));
  code = await readFile(await buildPreload(repositoryRoot(), join(dir, 'preload.cjs')), 'utf8');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('preload bundle', () => {
  it('is one CommonJS script that requires nothing but electron (a sandboxed preload can load nothing else)', () => {
    const required = [...code.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]);
    expect(required).toEqual(['electron']);
    expect(code).not.toMatch(/^\s*import\s/m);
    expect(code).not.toMatch(/^\s*export\s/m);
  });

  it('exposes window.terminal and uses exactly the IPC channels of api.ts', () => {
    expect(code).toContain('exposeInMainWorld("terminal"');
    for (const channel of Object.values(IPC_CHANNELS)) expect(code).toContain(channel);
    expect(code).not.toMatch(/exposeInMainWorld\(\s*["'](?!terminal)/);
  });

  it('reuses a bundle that is newer than its sources', async () => {
    const out = join(dir, 'preload.cjs');
    const before = statSync(out).mtimeMs;
    await buildPreload(repositoryRoot(), out);
    expect(statSync(out).mtimeMs).toBe(before);
  });
});
