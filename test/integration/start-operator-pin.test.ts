import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bridgeRequest,
  printed,
  screenOf,
  startCommand,
  writeStartConfig,
  type StartRun,
  startTestDirectories,
} from './start-command.js';

/**
 * The operator PIN a start generates when no `terminal.operatorPinFile` is configured opens operator mode (refunds,
 * voids, releases of holds). Standard output is a pipe here, as under systemd, where it is the journal that the groups
 * systemd-journal and adm read: the PIN is never printed there, and `terminal.generatedPinFile` holds it instead.
 */

/** Bounds a hang (loading the sources on a busy machine), measures no speed. */
const HANG_MS = 60_000;

let dir: string;
const children = startTestDirectories('pt-start-operator-pin-', (d) => (dir = d));

function start(config: Record<string, unknown>): StartRun {
  const file = writeStartConfig(dir, config);
  const run = startCommand(dir, file);
  children.push(run.child);
  return run;
}

const READY = / ready: /;

describe('parking-terminal start --headless, standard output not a terminal', () => {
  it('prints no generated operator PIN, and says how to get one, without terminal.generatedPinFile', async () => {
    const run = start({});
    await printed(run, READY, HANG_MS);
    const out = run.lines.join('\n');
    expect(out).not.toMatch(/Operator PIN for this start: \d/);
    expect(out).toContain(
      'Operator PIN for this start: printed on a terminal only; set terminal.operatorPinFile, or terminal.generatedPinFile',
    );
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('writes the generated PIN to terminal.generatedPinFile, private to the service user, and removes it at the stop', async () => {
    const urlFile = join(dir, 'ui-url');
    // Relative to the working directory (the service's state directory).
    const pinFile = join(dir, 'state', 'operator-pin');
    const run = start({ bridge: { urlFile }, terminal: { generatedPinFile: 'state/operator-pin' } });
    const { port, secret } = await screenOf(run, READY, urlFile, HANG_MS);
    const pin = readFileSync(pinFile, 'utf8').trim();
    expect(pin).toMatch(/^\d{6}$/);
    expect(statSync(pinFile).mode & 0o777).toBe(0o600);
    expect(run.lines).toContain(`Operator PIN for this start: in ${pinFile}`);
    expect(run.lines.join('\n')).not.toContain(pin);
    // It is the PIN that opens operator mode.
    expect(
      await bridgeRequest(port, secret, { method: 'operator', params: { pin, action: { type: 'status' } } }),
    ).toMatchObject({ ok: true });
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(pinFile)).toBe(false);
    expect(run.lines.join('\n')).not.toContain(pin);
  }, 120_000);

  it('fails the start with exit 1 and GENERATED_PIN_FILE, without the PIN, when the file cannot be written', async () => {
    // Its directory is a regular file.
    writeFileSync(join(dir, 'not-a-dir'), '');
    const run = start({ terminal: { generatedPinFile: join(dir, 'not-a-dir', 'operator-pin') } });
    expect(await run.exited).toEqual({ code: 1, signal: null });
    const out = run.lines.join('\n');
    expect(out).not.toMatch(/Operator PIN for this start/);
    const doc = JSON.parse(out.slice(out.indexOf('{'))) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('GENERATED_PIN_FILE');
    expect(doc.error.message).toContain(
      `terminal.generatedPinFile ${join(dir, 'not-a-dir', 'operator-pin')}`,
    );
  }, 120_000);
});
