import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

/*
 * The host's side of FlowEffects.submit: when the machine's signal aborts while its request is out, the machine
 * resolves nothing, and the host's journal recovery must. A kiosk sale is out when the terminal is stopped (which
 * stops its machine, the signal aborting as with the machine's own `submitTimeout`), and the gateway approves it
 * afterwards: nobody is left to give the customer the paid ticket or to undo it, so recovery voids it — once.
 */

/** The gateway client's pool, holding the first payment request until the test lets it go. */
class HoldingAgent extends Agent {
  private heldOnce = false;
  private readonly gate: Promise<void>;
  release!: () => void;
  readonly held: Promise<void>;
  private reached!: () => void;

  constructor() {
    super();
    this.gate = new Promise<void>((r) => (this.release = r));
    this.held = new Promise<void>((r) => (this.reached = r));
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (!this.heldOnce && options.method === 'POST' && options.path === '/pts/v2/payments') {
      this.heldOnce = true;
      this.reached();
      void this.gate.then(() => super.dispatch(options, handler));
      return true;
    }
    return super.dispatch(options, handler);
  }
}

let sandbox: Sandbox;
let dir: string;
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'pt-late-approval-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const config = parseConfig({
  terminal: { model: 'kiosk' },
  reader: { sim: { presentDelayMs: 20 } },
  journal: { path: 'journal.db' },
});

async function startHost(dispatcher?: Dispatcher): Promise<TerminalHost> {
  const host = await createTerminalHost(config, {
    logger: silentLogger(),
    cwd: dir,
    gatewayUrlOverride: sandbox.url,
    ...(dispatcher ? { gatewayDispatcher: dispatcher } : {}),
  });
  hosts.push(host);
  return host;
}

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

/** A kiosk ticket entered 95 minutes ago in the terminal's default time zone: a fee the sandbox approves. */
function ticket(): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(Date.now() - 95 * 60_000));
  const g = (t: string): string => parts.find((x) => x.type === t)?.value ?? '00';
  return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}01`;
}

describe('a sale approved after its machine stopped waiting for it', () => {
  it('is voided by recovery, once, by the next start at the latest', async () => {
    const agent = new HoldingAgent();
    const host = await startHost(agent);
    await screen(host, ['idle']);
    await send(host, { type: 'START' });
    await send(host, { type: 'ENTER_TICKET', ticket: ticket() });
    await screen(host, ['confirm']);
    await send(host, { type: 'CONFIRM' });
    await agent.held;

    // The machine stops waiting (the terminal is stopped), then the gateway approves the sale.
    const closing = host.close();
    agent.release();
    await closing;
    hosts.splice(hosts.indexOf(host), 1);
    await agent.close();

    // The next start recovers before the first card.
    const again = await startHost();
    await again.settle(20_000);
    await screen(again, ['idle']);
    const sales = sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ status: 'VOIDED', voided: true });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'timeout-void')).toHaveLength(1);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
    const entry = again.journal.findByTransactionId(sales[0]?.transactionId ?? '');
    expect(entry).toMatchObject({ state: 'resolved', resolution: 'timeout-void', gatewayId: sales[0]?.id });
    expect(again.journal.inFlight()).toEqual([]);
  }, 60_000);
});
