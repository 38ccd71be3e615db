import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repositoryRoot } from '../src/host/bridge/build-renderer.js';

/**
 * electron-builder cannot run here (it downloads Electron), and its JSON schema is not installed: electron-builder.yml
 * is checked against a schema of the fields it uses (electron-builder's names and types), and every path it refers to
 * must exist or be produced by the build.
 */

const root = repositoryRoot();

const targets = {
  type: 'array',
  items: { type: 'string', enum: ['AppImage', 'deb', 'rpm', 'nsis', 'dir', 'zip'] },
};
const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['appId', 'productName', 'directories', 'files'],
  properties: {
    appId: { type: 'string', pattern: '^[a-z][a-z0-9]*(\\.[a-z][a-z0-9-]*)+$' },
    productName: { type: 'string', minLength: 1 },
    directories: {
      type: 'object',
      additionalProperties: false,
      properties: { output: { type: 'string' }, buildResources: { type: 'string' }, app: { type: 'string' } },
    },
    extraMetadata: { type: 'object', properties: { main: { type: 'string' } } },
    files: { type: 'array', items: { type: 'string' }, minItems: 1 },
    asar: { type: 'boolean' },
    asarUnpack: { type: 'array', items: { type: 'string' } },
    linux: {
      type: 'object',
      additionalProperties: false,
      properties: {
        target: targets,
        category: {
          type: 'string',
          enum: [
            'AudioVideo',
            'Development',
            'Education',
            'Game',
            'Graphics',
            'Network',
            'Office',
            'Science',
            'Settings',
            'System',
            'Utility',
          ],
        },
        maintainer: { type: 'string' },
      },
    },
    win: {
      type: 'object',
      additionalProperties: false,
      properties: { target: { type: 'string', enum: ['nsis', 'portable', 'zip'] } },
    },
    nsis: {
      type: 'object',
      additionalProperties: false,
      properties: { oneClick: { type: 'boolean' }, perMachine: { type: 'boolean' } },
    },
  },
} as const;

interface BuilderConfig {
  directories: { output?: string; buildResources?: string };
  extraMetadata?: { main?: string };
  files: string[];
  asarUnpack?: string[];
}

const config = parse(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;

/** The literal directory part of a glob ("node_modules/node-hid/**" → "node_modules/node-hid"). */
function base(pattern: string): string {
  const parts = pattern.replace(/^!/, '').split('/');
  const literal: string[] = [];
  for (const p of parts) {
    if (/[*?{[]/.test(p)) break;
    literal.push(p);
  }
  return literal.join('/');
}

describe('electron-builder.yml', () => {
  it('matches the schema of the fields it uses', () => {
    const ajv = new Ajv({ allErrors: true });
    const valid = ajv.validate(schema, config);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('starts the compiled main process that package.json names', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string };
    expect(config.extraMetadata?.main).toBe(pkg.main);
    // tsc (tsconfig.build.json, rootDir ".", outDir "dist") turns main/main.ts into dist/main/main.js.
    expect(pkg.main).toBe('dist/main/main.js');
    expect(existsSync(join(root, 'main', 'main.ts'))).toBe(true);
    expect(config.files.some((f) => f === 'dist/**/*')).toBe(true);
  });

  it('refers only to paths that exist or that the build produces', () => {
    const produced = new Set(['dist', 'dist/release']);
    for (const pattern of [...config.files, ...(config.asarUnpack ?? [])]) {
      const path = base(pattern);
      if (produced.has(path)) continue;
      expect(existsSync(join(root, path)), pattern).toBe(true);
    }
    if (config.directories.buildResources)
      expect(existsSync(join(root, config.directories.buildResources))).toBe(true);
  });
});
