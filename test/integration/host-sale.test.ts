import { afterEach, describe, expect, it } from 'vitest';
import type { TerminalSnapshot } from '../../src/host/api.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { send, waitFor } from '../../src/host/drive.js';
import { closeHosts, startHost } from './host-harness.js';

afterEach(closeHosts);

function waitForScreen(host: TerminalHost, screens: string[], timeoutMs = 15_000): Promise<TerminalSnapshot> {
  return waitFor(host, screens, timeoutMs);
}

function ticketEnteredMinutesAgo(minutes: number): string {
  const d = new Date(Date.now() - minutes * 60_000);
  const p = (n: number): string => String(n).padStart(2, '0');
  const local = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d);
  const g = (t: string): string => local.find((x) => x.type === t)?.value ?? '00';
  return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}${p(1)}`;
}

describe('terminal host: pay-station sale end to end on the embedded defaults', () => {
  it('sells parking with the simulated N2 contact card and the sandbox records one signed authorization', async () => {
    const host = await startHost();
    await waitForScreen(host, ['idle']);
    await send(host, { type: 'START' });
    await send(host, { type: 'ENTER_TICKET', ticket: ticketEnteredMinutesAgo(95) });
    const confirm = await waitForScreen(host, ['confirm']);
    expect(confirm.customer.amount?.minor).toBeGreaterThan(0);
    await send(host, { type: 'CONFIRM' });
    const done = await waitForScreen(host, ['approved', 'declined', 'error']);
    expect(done.customer.screen).toBe('approved');
    expect(done.customer.maskedPan).toMatch(/^\d{6}\*+\d{4}$/);

    const ledger = host.sandbox!.ledger();
    expect(ledger.transactions).toHaveLength(1);
    const tx = ledger.transactions[0]!;
    expect(tx.comments).toBe('Parking Sale');
    expect(tx.card?.type).toBe('001');
    expect(tx.requests).toHaveLength(1);
    const request = tx.requests[0]!;
    expect(request.auth).toMatchObject({ scheme: 'http-signature', verified: true });
    // The exact EMV tags sent: N2 mandatory tags present, never-send tags absent.
    const tags = (request.emvTags ?? []).map((t) => t.tag);
    for (const m of [
      '9A',
      '9C',
      '5F2A',
      '9F1A',
      '9F02',
      '9F03',
      '9F36',
      '82',
      '84',
      '95',
      '9F10',
      '9F26',
      '9F33',
      '9F37',
    ])
      expect(tags).toContain(m);
    for (const never of ['56', '57', '5A', '5F20', '5F24', '99', '9F0B', '9F1F', '9F20'])
      expect(tags).not.toContain(never);
    const body = request.body as {
      pointOfSaleInformation: { catLevel: number | string; emv: { tags: string } };
    };
    expect(String(body.pointOfSaleInformation.catLevel)).toBe('2');
    expect(host.sandbox!.consistency().ok).toBe(true);
    expect(host.journal.counts().inFlight).toBe(0);
  });
});
