import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { modelConfig, ParkingClock, waitForScreen } from './models-harness.js';

/** What a test closes after it, last first. */
export type Closing = Array<() => Promise<void> | void>;

/**
 * A relay of the gateway's link notifications: the gateway POSTs each to `/in`; `/out` hands over every one held while
 * `open` is set (and none while it is not). `held`: how many came in.
 */
export async function startRelay(
  closing: Closing,
  open = true,
): Promise<{ url: string; held: number; open: boolean }> {
  const held: Array<{ headers: Record<string, string>; body: string }> = [];
  const state = { open };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/in') {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        held.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ notifications: state.open ? held : [] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closing.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get held() {
      return held.length;
    },
    get open() {
      return state.open;
    },
    set open(v: boolean) {
      state.open = v;
    },
  };
}

/**
 * A pay station on a standalone sandbox (it outlives the terminal), whose link notifications pass through a relay
 * (`relayOpen`: handed over from the start, else held until the test opens it); `start` starts a terminal on its one
 * working directory and parking clock, idle.
 */
export async function payStationBehindRelay(closing: Closing, relayOpen: boolean) {
  const relay = await startRelay(closing, relayOpen);
  const sandbox = await startSandbox({ port: 0, logger: silentLogger(), webhookUrl: `${relay.url}/in` });
  closing.push(() => sandbox.close());
  const config = modelConfig('kiosk', {
    tariff: { dailyCapMinor: 2_021, graceMinutes: 10 },
    links: { notifications: { relay: { url: `${relay.url}/out`, pollSeconds: 1 } } },
  });
  const cwd = mkdtempSync(join(tmpdir(), 'pt-pay-station-relay-'));
  closing.push(() => rmSync(cwd, { recursive: true, force: true }));
  const clock = new ParkingClock();
  const start = async (): Promise<TerminalHost> => {
    const host = await createTerminalHost(config, {
      logger: silentLogger(),
      cwd,
      parkingClock: clock,
      gatewayUrlOverride: sandbox.url,
    });
    closing.push(() => host.close());
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    return host;
  };
  return { relay, sandbox, config, clock, start };
}
