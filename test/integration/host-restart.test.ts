import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { parseConfig, type Config } from '../../src/config/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function until<T>(what: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function screen(host: TerminalHost): Promise<string> {
  const r = await host.snapshot();
  return r.ok ? r.value.customer.screen : '?';
}

/** The operator's status request, as the panel sends it. */
const status = { type: 'status' } as const;

/**
 * A terminal whose operator PIN is 2468 (its own file, owner-only), started in a directory of its own and showing
 * the welcome screen: `first`, with the `config` and `cwd` a restart of it uses.
 */
async function terminalWithPin(): Promise<{ cwd: string; config: Config; first: TerminalHost }> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-restart-'));
  const pinFile = join(cwd, 'operator.pin');
  writeFileSync(pinFile, '2468\n');
  chmodSync(pinFile, 0o600);
  const config = parseConfig({ terminal: { operatorPinFile: pinFile } });
  const first = await createTerminalHost(config, { logger: silentLogger(), cwd });
  await until(async () => ((await screen(first)) === 'idle' ? true : undefined));
  return { cwd, config, first };
}

describe('terminal host across a restart', () => {
  it('reverses, with its EMV tags, a meter pre-authorization left uncaptured by a restart once the capture window is over', async () => {
    const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    open.push(sandbox);
    const cwd = mkdtempSync(join(tmpdir(), 'pt-restart-'));
    const config = parseConfig({
      terminal: { model: 'meter' },
      reader: { sim: { presentDelayMs: 20 } },
      // A one-minute window (and so a one-minute longest stay, which the window must cover) at 1.50 a minute.
      tariff: {
        captureWindowMinutes: 1,
        maxStayMinutes: 1,
        periods: [{ minutes: 1440, priceMinor: 150, unitMinutes: 1 }],
      },
    });
    const first = await createTerminalHost(config, {
      logger: silentLogger(),
      cwd,
      gatewayUrlOverride: sandbox.url,
    });
    await until(async () => ((await screen(first)) === 'idle' ? true : undefined));
    await first.send({ type: 'START' });
    await first.send({ type: 'CHOOSE_DURATION', minutes: 1 });
    await first.send({ type: 'CONFIRM' });
    for (let i = 0; i < 500 && (await screen(first)) !== 'session'; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await screen(first)).toBe('session');
    await first.close(); // the meter session is gone with the process

    const auth = sandbox.ledger().transactions.find((t) => t.kind === 'authorization');
    // The meter holds the price of the maximum stay (one minute at 1.50, spec 001).
    expect(auth?.amounts.authorized).toBe(150);
    // Restarted 61 seconds later: past the one-minute capture window.
    const second = await createTerminalHost(config, {
      logger: silentLogger(),
      cwd,
      gatewayUrlOverride: sandbox.url,
      now: () => new Date(Date.now() + 61_000),
    });
    open.push(second);
    const reversal = await until(() => sandbox.ledger().transactions.find((t) => t.kind === 'reversal'));
    expect(reversal.comments).toBe('REVERSAL');
    expect(reversal.requests[0]?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
    const after = sandbox.ledger().transactions.find((t) => t.kind === 'authorization');
    expect(after?.amounts.reversed).toBe(150);
    expect(sandbox.consistency().ok).toBe(true);
  });

  it('keeps operator mode locked after five wrong PINs when the terminal is restarted', async () => {
    const { cwd, config, first } = await terminalWithPin();
    for (let i = 0; i < 5; i++)
      expect(await first.operator({ pin: '1357', action: status })).toMatchObject({
        error: { code: 'OPERATOR_PIN' },
      });
    await first.close();

    const second = await createTerminalHost(config, { logger: silentLogger(), cwd });
    open.push(second);
    expect(await second.operator({ pin: '2468', action: status })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED' },
    });
  });

  it('says until when operator mode is locked after a restart, and records one refusal of the lockout', async () => {
    const { cwd, config, first } = await terminalWithPin();
    let fifth;
    for (let i = 0; i < 5; i++) fifth = await first.operator({ pin: '1357', action: status });
    const lockedUntil = fifth && !fifth.ok ? fifth.error.lockedUntil : undefined;
    expect(lockedUntil).toMatch(/^\d{4}-\d\d-\d\dT/);
    for (let i = 0; i < 50; i++) await first.operator({ pin: '2468', action: status });
    await first.close();

    const second = await createTerminalHost(config, { logger: silentLogger(), cwd });
    open.push(second);
    for (let i = 0; i < 50; i++) {
      const refused = await second.operator({ pin: '2468', action: status });
      expect(refused).toMatchObject({ ok: false, error: { code: 'OPERATOR_LOCKED' } });
      // Replayed from the audit record of the fifth wrong PIN, written a moment after the check.
      const after =
        Date.parse((!refused.ok && refused.error.lockedUntil) || '') - Date.parse(lockedUntil ?? '');
      expect(after).toBeGreaterThanOrEqual(0);
      expect(after).toBeLessThan(1_000);
    }
    const db = new Database(join(cwd, 'var/journal.db'), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT code, details FROM audit_log WHERE action = 'sign-in-failed' ORDER BY id")
        .all() as { code: string; details: string }[];
      // Five wrong PINs, then the first refusal of the lockout in each run of the terminal, and the others of the
      // first run summed up when it closed.
      expect(
        rows.map((r) => [
          r.code,
          (JSON.parse(r.details) as { refusedUnrecorded?: number }).refusedUnrecorded,
        ]),
      ).toEqual([
        ...Array<unknown>(5).fill(['OPERATOR_PIN', undefined]),
        ['OPERATOR_LOCKED', undefined],
        ['OPERATOR_LOCKED', 49],
        ['OPERATOR_LOCKED', undefined],
      ]);
    } finally {
      db.close();
    }
  });
});
