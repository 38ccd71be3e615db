import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repositoryRoot } from '../src/host/bridge/build-renderer.js';

/**
 * electron-builder cannot package here (it downloads Electron; README, Packaging): electron-builder.yml is checked
 * against electron-builder's own JSON schema (app-builder-lib/scheme.json, the schema electron-builder validates its
 * configuration with), and for what the kiosk needs of it — targets, fuses, native modules outside the archive, and
 * paths that exist or that the build produces.
 */

const root = repositoryRoot();
const require = createRequire(import.meta.url);

interface Target {
  target: string;
  arch?: string[];
}

interface BuilderConfig {
  directories: { output?: string; buildResources?: string };
  extraMetadata?: { main?: string };
  files: string[];
  asarUnpack?: string[];
  asar?: boolean;
  linux?: { target?: Target[] };
  win?: { target?: Target[] };
  electronFuses?: Record<string, boolean>;
  publish?: { provider: string };
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

/** The packages the app needs at run time (package.json `dependencies`, and theirs), by name. */
function productionPackages(): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    const manifest = join(root, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) return; // an optional dependency not installed on this platform
    seen.add(name);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep);
  };
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of Object.keys(own.dependencies)) visit(dep);
  return seen;
}

describe('electron-builder.yml', () => {
  it("is valid against electron-builder's own schema", () => {
    const schemaFile = join(dirname(require.resolve('app-builder-lib/package.json')), 'scheme.json');
    const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as object;
    const ajv = new Ajv({ allErrors: true, strict: false });
    const valid = ajv.validate(schema, config);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('builds AppImage and deb for x64 and arm64, and NSIS for Windows', () => {
    for (const target of ['AppImage', 'deb']) {
      const entry = config.linux?.target?.find((t) => t.target === target);
      expect(entry?.arch, target).toEqual(expect.arrayContaining(['x64', 'arm64']));
    }
    expect(config.win?.target?.map((t) => t.target)).toContain('nsis');
  });

  it('sets the Electron fuses: no Node mode, no inspector, encrypted cookies, only an intact app.asar', () => {
    expect(config.asar).toBe(true);
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });

  it('keeps every native module of the production dependencies outside app.asar', () => {
    const natives = [...productionPackages()].filter(
      (name) =>
        existsSync(join(root, 'node_modules', name, 'binding.gyp')) ||
        existsSync(join(root, 'node_modules', name, 'prebuilds')),
    );
    expect(natives).toEqual(
      expect.arrayContaining(['better-sqlite3', '@serialport/bindings-cpp', 'node-hid']),
    );
    for (const name of natives) expect(config.asarUnpack ?? [], name).toContain(`node_modules/${name}/**`);
  });

  it('writes the update metadata electron-updater reads (a generic server)', () => {
    expect(config.publish?.provider).toBe('generic');
  });

  it('starts the compiled main process that package.json names', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string };
    expect(config.extraMetadata?.main).toBe(pkg.main);
    // tsc (tsconfig.build.json, rootDir ".", outDir "dist") turns main/main.ts into dist/main/main.js.
    expect(pkg.main).toBe('dist/main/main.js');
    expect(existsSync(join(root, 'main', 'main.ts'))).toBe(true);
    expect(config.files.some((f) => f === 'dist/**/*')).toBe(true);
  });

  it('ships the certification pack that certify run reads by default, beside dist/', () => {
    expect(config.files).toContain('certification/scripts/*.yaml');
    expect(existsSync(join(root, 'certification', 'scripts', 'parking.yaml'))).toBe(true);
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
