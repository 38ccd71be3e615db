import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

/*
 * AUTHORIZED_RISK_DECLINED (reference/gateway.md §4, payments): the issuer approved and the gateway's risk check
 * refused. The customer is told "declined", but the issuer holds the funds until the authorization is reversed: the
 * terminal must reverse it (src/gateway/outcome.ts). The sandbox never answers that status, so a proxy in front of a
 * standalone sandbox turns the first approved pre-authorization into it; the sandbox's ledger keeps the approval
 * the issuer made.
 */

let sandbox: Sandbox;
let proxy: Server;
let proxyUrl: string;
let dir: string;
const hosts: TerminalHost[] = [];

/** Forwards every request as it is (its Host header too: the signature covers it); rewrites one answer. */
function startProxy(target: string): Promise<void> {
  const to = new URL(target);
  let rewritten = false;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let bytes = Buffer.concat(body);
            if (!rewritten && req.method === 'POST' && req.url === '/pts/v2/payments') {
              const json = JSON.parse(bytes.toString('utf8')) as { status?: string };
              if (json.status === 'AUTHORIZED') {
                rewritten = true;
                json.status = 'AUTHORIZED_RISK_DECLINED';
                bytes = Buffer.from(JSON.stringify(json));
              }
            }
            const headers = { ...answer.headers, 'content-length': String(bytes.length) };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(bytes);
          });
        },
      );
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    proxy.listen(0, '127.0.0.1', () => {
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
  await startProxy(sandbox.url);
  dir = mkdtempSync(join(tmpdir(), 'pt-risk-declined-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await new Promise((resolve) => proxy.close(resolve));
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

async function send(h: TerminalHost, event: UserEvent): Promise<void> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

async function screen(h: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  for (;;) {
    const r = await h.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Authorizations the sandbox still holds, by gateway id. */
function openAuthorizations(): string[] {
  return sandbox
    .consistency({ requireResolved: true })
    .problems.filter((p) => p.rule === 'OPEN_AUTHORIZATION')
    .map((p) => p.id ?? '');
}

describe('a pre-authorization the issuer approved and the gateway risk-declined', () => {
  it('is shown declined and its hold is released', async () => {
    const host = await createTerminalHost(
      parseConfig({
        terminal: { model: 'meter' },
        reader: { sim: { presentDelayMs: 20 } },
        journal: { path: 'journal.db', resolutionRetryMs: 100 },
      }),
      { logger: silentLogger(), cwd: dir, gatewayUrlOverride: proxyUrl },
    );
    hosts.push(host);
    await screen(host, ['idle']);
    await send(host, { type: 'START' });
    await send(host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await send(host, { type: 'CONFIRM' });
    const shown = await screen(host, ['session', 'declined', 'error']);
    expect(shown.customer.screen).toBe('declined');
    const [held] = sandbox.ledger().transactions.filter((t) => t.kind === 'authorization');
    expect(held?.status).toBe('AUTHORIZED');

    // Released by the terminal in the background; every other answer of the gateway is left as it is.
    for (let i = 0; i < 250 && openAuthorizations().length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(openAuthorizations()).toEqual([]);
    expect(sandbox.consistency().problems).toEqual([]);
  });
});
