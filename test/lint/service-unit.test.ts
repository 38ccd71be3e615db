import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT_RESTART } from '../../src/cli/commands/start.js';
import { EXIT_FINDINGS, EXIT_USAGE } from '../../src/cli/output.js';
import { GATEWAY_TIMEOUT_MAX_MS, parseConfig } from '../../src/config/index.js';
import { STOP_EXIT_MS, STOP_LIMIT_MS } from '../../src/host/stopping.js';

/**
 * The kiosk service unit (deploy/systemd/parking-terminal.service): it watches the terminal, restarts it on the
 * terminal's own restart code, runs it as its own user behind systemd's hardening, and starts the compiled JavaScript —
 * which must be an entry `npm run build` produces and which starts.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const unitFile = join(root, 'deploy/systemd/parking-terminal.service');
const INSTALL_DIR = '/opt/parking-terminal/';

/** The settings of the unit's section `wanted`, every value of a key repeated (DeviceAllow=) kept. */
function sectionSettings(wanted: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of readFileSync(unitFile, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    if (section !== wanted) continue;
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

const unit = sectionSettings('Service');
const one = (key: string): string | undefined => unit.get(key)?.at(-1);
const unitSection = sectionSettings('Unit');

describe('the kiosk service unit', () => {
  it('is a notify service whose watchdog restarts it, and restarts on the terminal restart code', () => {
    expect(one('Type')).toBe('notify');
    // systemd-notify and the Electron main process are children of the main process.
    expect(one('NotifyAccess')).toBe('all');
    expect(Number(one('WatchdogSec'))).toBeGreaterThan(0);
    // on-failure, on-abnormal, on-watchdog and always all include a missed watchdog.
    expect(['on-failure', 'on-abnormal', 'on-watchdog', 'always']).toContain(one('Restart'));
    expect(one('RestartForceExitStatus')?.split(/\s+/)).toContain(String(EXIT_RESTART));
    expect(one('LimitCORE')).toBe('0');
  });

  it('restarts a failed start forever, never one refused for its configuration, always the restart it asks for', () => {
    // An unattended kiosk whose network or reader is down at boot keeps trying: no start limit (systemd's default
    // gives up after 5 starts in 10 s, and any burst limit ends in a dead kiosk until someone comes).
    expect(unitSection.get('StartLimitIntervalSec')?.at(-1)).toBe('0');
    expect(one('Restart')).toBe('always');
    // A backoff between starts, not a tight loop.
    expect(Number(one('RestartSec'))).toBeGreaterThanOrEqual(5);
    // Exit 2 (bad configuration or input: the same at every start) is not restarted...
    const prevented = one('RestartPreventExitStatus')?.split(/\s+/) ?? [];
    expect(prevented).toContain(String(EXIT_USAGE));
    // ...but a failure (1) and the terminal's own restart (75: `apply-config`, the fleet's restart, the daily one) are.
    expect(prevented).not.toContain(String(EXIT_FINDINGS));
    expect(prevented).not.toContain(String(EXIT_RESTART));
    expect(one('RestartForceExitStatus')?.split(/\s+/)).toContain(String(EXIT_RESTART));
  });

  it('ends a stop before TimeoutStopSec, whatever gateway timeouts the configuration sets', () => {
    const unitLimitMs = Number(one('TimeoutStopSec')) * 1000;
    // A stop waits for a request out (its connect counts in headersMs: src/gateway/transport.ts) and for the timeout
    // void its unknown outcome hands over. At the schema's maxima that is beyond any stop worth waiting for: the
    // stop's own limit cuts it, leaving the entry to the next start's recovery, and then the stop ends in
    // STOP_EXIT_MS — all before systemd's SIGKILL.
    const atMaxima = 2 * (GATEWAY_TIMEOUT_MAX_MS.headersMs + GATEWAY_TIMEOUT_MAX_MS.bodyMs);
    expect(Math.min(atMaxima, STOP_LIMIT_MS) + STOP_EXIT_MS).toBeLessThanOrEqual(unitLimitMs);
    // At the default timeouts the limit cuts nothing: an ordinary stop lets the request and its void finish.
    const defaults = parseConfig({}).gateway.timeouts;
    expect(2 * (defaults.headersMs + defaults.bodyMs)).toBeLessThanOrEqual(STOP_LIMIT_MS);
  });

  it('runs as its own user behind the hardening options, writing only its data directories', () => {
    expect(one('User')).toBe('parking-terminal');
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['DevicePolicy', 'closed'],
      ['CapabilityBoundingSet', ''],
    ] as const)
      expect(one(key), key).toBe(value);
    const writable = one('ReadWritePaths')?.split(/\s+/) ?? [];
    expect(writable).toContain(one('WorkingDirectory'));
    const devices = unit.get('DeviceAllow') ?? [];
    for (const device of ['char-ttyACM rw', 'char-ttyUSB rw', 'char-hidraw rw', 'char-usb rw'])
      expect(devices).toContain(device);
    const sysusers = readFileSync(join(root, 'deploy/systemd/parking-terminal.sysusers.conf'), 'utf8');
    expect(sysusers).toMatch(/^u parking-terminal /m);
  });

  it('starts the compiled command with node, never the sources through tsx', () => {
    const [program, entry, ...args] = (one('ExecStart') ?? '').split(/\s+/);
    expect(program).toBe('/usr/bin/node');
    expect(entry?.startsWith(INSTALL_DIR)).toBe(true);
    const relative = entry!.slice(INSTALL_DIR.length);
    expect(relative).toBe('dist/src/cli/run.js');
    // The file tsc compiles into it (tsconfig.build.json: rootDir ".", outDir "dist").
    expect(existsSync(join(root, 'src/cli/run.ts'))).toBe(true);
    expect(args.slice(0, 1)).toEqual(['start']);
    for (const [key, values] of unit) for (const value of values) expect(value, key).not.toMatch(/\btsx\b/);
  });

  it.skipIf(spawnSync('systemd-analyze', ['--version']).status !== 0)(
    'passes systemd-analyze verify without a warning about its settings',
    () => {
      const result = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
      const warnings = result.stderr
        .split('\n')
        .filter(
          (line) => line.includes('parking-terminal.service') && /Unknown|Invalid|Failed|ignoring/.test(line),
        );
      expect(warnings).toEqual([]);
    },
  );
});

/** Whether dist/ holds a build of the current sources (bin/parking-terminal.js runs it then). */
function builtAndCurrent(): boolean {
  const compiled = join(root, 'dist/src/cli/run.js');
  if (!existsSync(compiled)) return false;
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
        newest = Math.max(newest, statSync(join(root, path)).mtimeMs);
    }
  };
  for (const dir of ['src', 'devices', 'main', 'certification', 'bench']) walk(dir);
  return statSync(compiled).mtimeMs >= newest;
}

// A build takes far longer than a test may (tsc over the whole product): after `npm run build` this runs the build;
// without one it is skipped (the unit's entry is still checked above, and test/lint/build-contents.test.ts checks that
// tsconfig.build.json compiles src/cli/run.ts).
describe.skipIf(!builtAndCurrent())('the compiled command (after npm run build)', () => {
  it('starts from dist/src/cli/run.js on node alone: the help and a command', () => {
    const run = join(root, 'dist/src/cli/run.js');
    const help = execFileSync(process.execPath, [run, '--help'], { encoding: 'utf8' });
    expect(help).toMatch(/^parking-terminal/);
    expect(help).toMatch(/\bstart\b/);
    const decoded = JSON.parse(
      execFileSync(process.execPath, [run, 'tlv', 'decode', '9F0206000000001250'], { encoding: 'utf8' }),
    ) as { tag: string }[];
    expect(decoded[0]?.tag).toBe('9F02');
  });
});
