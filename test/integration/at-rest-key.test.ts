/**
 * The at-rest key and what is sealed under it (DESIGN.md rule 4): a terminal started with another key than the one
 * its sealed data was sealed with refuses to start, naming what is sealed, instead of failing the capture or reversal
 * of an open authorization later (JOURNAL_DECRYPT: the hold left on the customer's card).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOfflineCommand } from '../../src/cli/commands/offline.js';
import { main } from '../../src/cli/main.js';
import { parseConfig } from '../../src/config/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { pendingKeyPath, type RotationStep } from '../../src/journal/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type LedgerRequest, type Sandbox } from '../../src/sandbox/index.js';
import { capturedIo as cliIo } from '../../src/cli/testing/io.js';
import { sendEvent, waitForScreens } from './host-harness.js';

const MIN = 60_000;
/**
 * The terminal's clock a day on, past the meter's capture window (tariff.captureWindowMinutes, 1440): the
 * authorization of a session that died with the process is reversed at the start (the gateway's clock moved with it).
 */
const NEXT_DAY = (): Date => new Date(Date.now() + 25 * 60 * MIN);
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function setup() {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-key-'));
  let offsetMs = 0;
  const clock = {
    now: () => Date.now() + offsetMs,
    advance: (ms: number) => {
      offsetMs += ms;
    },
  };
  const config = parseConfig({
    terminal: { model: 'meter' },
    reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
    journal: { timeoutReversalDelayMs: 0, resolutionRetryMs: 50 },
  });
  const options = { logger: silentLogger(), cwd, gatewayUrlOverride: sandbox.url, parkingClock: clock };
  /** `now`: the host's clock (a restart a day later finds the session's authorization past its capture window). */
  const start = async (now?: () => Date): Promise<TerminalHost> => {
    const host = await createTerminalHost(config, now ? { ...options, now } : options);
    open.push(host);
    return host;
  };
  return { sandbox, clock, cwd, start, keyFile: join(cwd, config.offline.keyFile) };
}

/** A meter session of 60 minutes bought with a contact card: its pre-authorization approved, its tags kept. */
async function meterSession(host: TerminalHost): Promise<void> {
  await waitForScreens(host, ['idle']);
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await waitForScreens(host, ['confirm']);
  await sendEvent(host, { type: 'CONFIRM' });
  expect(await waitForScreens(host, ['session', 'declined', 'error'])).toBe('session');
}

/** The follow-ons the sandbox received (captures, reversals), with the EMV tags each carried. */
function followOns(sandbox: Sandbox, kind: 'reversals'): LedgerRequest[] {
  return sandbox
    .ledger()
    .transactions.flatMap((t) => t.requests)
    .filter((r) => r.method === 'POST' && r.path.endsWith(`/${kind}`));
}

/** The one reversal the sandbox receives is accepted and carried the authorization's tags; nothing is left held. */
async function expectReversedWithTags(sandbox: Sandbox, host: TerminalHost): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (followOns(sandbox, 'reversals').length === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await host.settle();
  const sent = followOns(sandbox, 'reversals');
  expect(sent.map((r) => r.httpStatus)).toEqual([201]);
  expect(sent[0]?.emvTags?.some((t) => t.tag === '9F26')).toBe(true);
  expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
}

async function closed(host: TerminalHost): Promise<void> {
  await host.close();
  open.splice(open.indexOf(host), 1);
}

describe('the at-rest key of a terminal with an open authorization', () => {
  it('refuses a start with another key when only the tags of an open authorization are sealed', async () => {
    const { start, keyFile } = await setup();
    const first = await start();
    await meterSession(first);
    expect(first.offline.status().depth).toBe(0); // nothing stored offline: only the tags are sealed
    await closed(first);
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    await expect(start()).rejects.toMatchObject({
      code: 'JOURNAL_KEY',
      message: expect.stringMatching(/1 tag set/) as string,
    });
  });

  it('rotate-key re-seals the tags: after a restart the reversal of the orphaned authorization repeats them', async () => {
    const { sandbox, cwd, start } = await setup();
    const first = await start();
    await meterSession(first);
    await closed(first);
    const { io, out } = cliIo(cwd);
    expect(await main(['offline', 'rotate-key'], io)).toBe(0);
    expect(JSON.parse(out())).toMatchObject({ rotated: true, storedPayments: 0, tagSets: 1 });
    sandbox.advanceClock(25 * 60 * MIN);
    const second = await start(NEXT_DAY);
    await expectReversedWithTags(sandbox, second);
  });

  it.each<[RotationStep]>([['pending-key-written'], ['journal-resealed']])(
    'a rotation interrupted after %s is settled at the next start; the reversal still carries the tags',
    async (step) => {
      const { sandbox, cwd, start, keyFile } = await setup();
      const first = await start();
      await meterSession(first);
      await closed(first);
      const crashing = createOfflineCommand({
        afterStep: (s) => {
          if (s === step) throw new Error('power cut');
        },
      });
      expect(() => crashing.run(['rotate-key'], cliIo(cwd).io)).toThrow('power cut');
      expect(existsSync(pendingKeyPath(keyFile))).toBe(true);
      sandbox.advanceClock(25 * 60 * MIN);
      const second = await start(NEXT_DAY);
      expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
      await expectReversedWithTags(sandbox, second);
    },
  );
});
