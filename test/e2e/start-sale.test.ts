import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { installWatchers, screensSeen, violationsSeen } from './page-scripts.js';
import { ticketFor } from './terminal-process.js';

/**
 * Issue 2, "Done when": a person opens the URL given by `parking-terminal start --headless`, buys parking at the
 * pay station with the simulated card and sees "Approved"; the sandbox ledger then shows one authorization with a
 * valid signature and the EMV tags sent. Everything here is the real thing: the command as a process, the bridge,
 * the built renderer in headless Chromium, the host, the simulated reader and the embedded sandbox.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');

let cwd: string;
let child: ChildProcess;
let launched: LaunchedBrowser;
let url: string;
let sandboxUrl: string;
const stdout: string[] = [];
let stderr = '';

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'pt-start-'));
  // The embedded defaults but for the file the URL is written to: its secret is printed on a terminal only, and
  // standard output is a pipe here.
  await writeFile(join(cwd, 'config.json'), JSON.stringify({ bridge: { urlFile: 'ui-url' } }));
  child = spawn(process.execPath, [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((ready, failed) => {
    child.once('exit', (code) =>
      failed(new Error(`start exited with ${code}: ${stdout.join('\n')}\n${stderr}`)),
    );
    lines.on('line', (line) => {
      stdout.push(line);
      const sandbox = /^Sandbox gateway: (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (sandbox) sandboxUrl = sandbox[1]!;
      if (/ ready: /.test(line))
        readFile(join(cwd, 'ui-url'), 'utf8').then((text) => {
          url = text.trim();
          if (sandboxUrl) ready();
        }, failed);
    });
  });
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(cwd, { recursive: true, force: true });
});

interface LedgerTx {
  kind: string;
  status: string;
  currency: string;
  amounts: { requested: number };
  card?: { masked?: string; type?: string; entryMode?: string };
  emv?: { present: boolean; contact: boolean };
  requests: {
    method: string;
    path: string;
    auth: { scheme: string; verified: boolean };
    emvTags?: { tag: string; value?: string }[];
    body: unknown;
  }[];
}

describe('parking-terminal start --headless', () => {
  it('gives a URL on 127.0.0.1 with a secret, printing neither it nor the simulated card number', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?s=[A-Za-z0-9_-]{43}$/);
    expect(stdout.join('\n')).not.toContain(new URL(url).searchParams.get('s'));
    expect(stdout.join('\n')).not.toMatch(/4761739001010119|476173\d+0119/);
  });

  it('sells parking at the pay station in a real browser and the sandbox ledger shows the authorization', async () => {
    const context = await launched.browser.newContext({ viewport: { width: 1024, height: 1280 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.addInitScript(installWatchers);
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);

    const customer = page.getByTestId('customer');
    await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
    await page.getByTestId('action-START').click();
    await page.locator('[data-testid="customer"][data-screen="enter-ticket"]').waitFor();
    await page.getByTestId('ticket-input').fill(ticketFor(130, 'Europe/London'));
    await page.getByTestId('action-ENTER_TICKET').click();
    await page.locator('[data-testid="customer"][data-screen="confirm"]').waitFor();
    const shownAmount = (await page.getByTestId('customer-amount').textContent()) ?? '';
    expect(shownAmount).toMatch(/\d/);
    await page.getByTestId('action-CONFIRM').click();

    // The simulated reader presents its card by itself; a DCC offer, if the configuration makes one, is declined.
    const done = page.locator(
      '[data-testid="customer"][data-screen="approved"], [data-testid="customer"][data-screen="declined"], [data-testid="customer"][data-screen="error"], [data-testid="customer"][data-screen="choose-currency"]',
    );
    await done.first().waitFor();
    if ((await customer.getAttribute('data-screen')) === 'choose-currency') {
      await page.locator('[data-testid^="dcc-option-"]').first().click();
      await page.locator('[data-testid="customer"][data-screen="approved"]').waitFor();
    }
    expect(await customer.getAttribute('data-screen')).toBe('approved');
    expect(await page.getByTestId('customer-title').textContent()).toBe('Approved');
    const seen = await page.evaluate(screensSeen);
    // In this order, with whatever waiting screens the terminal shows between them.
    const milestones = ['idle', 'enter-ticket', 'confirm', 'present-card', 'approved'];
    expect(
      seen.filter((s) => milestones.includes(s)),
      seen.join(' → '),
    ).toEqual(milestones);
    expect(await page.evaluate(violationsSeen)).toEqual([]);
    // The page shows the masked PAN (first 6 + last 4) and never the card number itself.
    const masked = (await page.getByTestId('masked-pan').textContent()) ?? '';
    const [, first6, last4] = /(\d{6})\*+(\d{4})/.exec(masked) ?? [];
    expect(first6).toBeDefined();
    const text = (await page.locator('body').textContent()) ?? '';
    expect(text).not.toMatch(new RegExp(`${first6}\\d{2,9}${last4}`));

    const ledger = (await (await fetch(`${sandboxUrl}/__sandbox/ledger`)).json()) as {
      transactions: LedgerTx[];
    };
    const auths = ledger.transactions.filter((t) => t.kind === 'authorization' || t.kind === 'sale');
    expect(auths).toHaveLength(1);
    const auth = auths[0]!;
    expect(auth.status).toBe('AUTHORIZED');
    const request = auth.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/pts/v2/payments');
    expect(request.auth).toMatchObject({ scheme: 'http-signature', verified: true });
    expect(auth.emv).toMatchObject({ present: true, contact: true });
    const tags = (request.emvTags ?? []).map((t) => t.tag);
    for (const tag of ['9F02', '9F26', '9F10', '95', '9A', '9C', '5F2A']) expect(tags).toContain(tag);
    // The amount the customer confirmed is the amount authorized.
    expect(shownAmount.replace(/[^\d]/g, '')).toBe(String(auth.amounts.requested));
    await context.close();
  });
});
