/**
 * The receipt printer on a running terminal: a pay-station sale prints its receipt on the (simulated) ESC/POS printer —
 * the card as its last four digits, never the expiry — and the operator status shows the printer; paper out is a
 * status for the operator, and the payment stands.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getPrinterSimulator } from '../../devices/printer/index.js';
import { VIRTUAL_CARDS } from '../../devices/sim/cards.js';
import { parseConfig } from '../../src/config/index.js';
import type { UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { RECEIPT_LABELS } from '../../src/host/receipts.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { readPrintedReceipt, withoutIssuedIdentifiers } from './printed-receipt.js';

let host: TerminalHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function send(h: TerminalHost, event: UserEvent): Promise<void> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
}

async function sale(h: TerminalHost): Promise<void> {
  await waitFor(h, ['idle'], 10_000);
  await send(h, { type: 'START' });
  await send(h, { type: 'LOST_TICKET' });
  await waitFor(h, ['confirm'], 5_000);
  await send(h, { type: 'CONFIRM' });
  expect((await waitFor(h, ['approved', 'declined', 'error'], 20_000)).customer.screen).toBe('approved');
}

/** A terminal with the simulated printer, on a new journal directory or on `cwd`'s (a restart). */
async function start(cwd = mkdtempSync(join(tmpdir(), 'pt-printer-'))): Promise<TerminalHost> {
  host = await createTerminalHost(
    parseConfig({
      reader: { sim: { presentDelayMs: 20 } },
      receipts: { merchantName: 'City Car Park' },
      printer: { kind: 'sim' },
    }),
    { logger: silentLogger(), cwd },
  );
  return host;
}

describe('the receipt printer on a running terminal', () => {
  it('prints the receipt of a sale, the card as its last four digits, and shows the printer to the operator', async () => {
    const h = await start();
    const sim = getPrinterSimulator(h.receipts.printer!)!;
    const printed = sim.nextReceipt();
    await sale(h);
    const lines = (await printed).lines;
    const paper = lines.join('\n');
    expect(paper).toContain('City Car Park');
    expect(paper).toContain('0119');
    expect(withoutIssuedIdentifiers(paper, readPrintedReceipt(lines).fields, 'en_GB')).not.toMatch(
      /476173|4761739001010119|3012/,
    );
    const journal = h.journal.list({ limit: 5 }).find((e) => e.service === 'sale');
    expect(paper).toContain(journal!.transactionId);
    expect(h.status().printer).toEqual({ kind: 'sim', status: 'ready' });
  }, 30_000);

  it('reports paper out to the operator and the payment stands', async () => {
    const h = await start();
    const sim = getPrinterSimulator(h.receipts.printer!)!;
    await waitFor(h, ['idle'], 10_000);
    sim.setPaper('out');
    await sale(h);
    await expect
      .poll(() => h.status().printer?.lastError ?? '', { timeout: 5_000 })
      .toContain('PRINTER_PAPER_OUT');
    expect(h.journal.list({ limit: 5 }).some((e) => e.service === 'sale' && e.state === 'approved')).toBe(
      true,
    );
  }, 30_000);
});

describe('the last receipt printed again after a restart', () => {
  /** The lines a copy states as the first receipt did: what the journal keeps of the payment. */
  const KEPT = [
    RECEIPT_LABELS.type,
    RECEIPT_LABELS.amount,
    RECEIPT_LABELS.card,
    RECEIPT_LABELS.application,
    RECEIPT_LABELS.aid,
    RECEIPT_LABELS.entry,
    RECEIPT_LABELS.verification,
    RECEIPT_LABELS.approvalCode,
    RECEIPT_LABELS.transaction,
    RECEIPT_LABELS.reference,
  ];
  const kept = (lines: readonly string[]) =>
    readPrintedReceipt(lines).fields.filter((f) => KEPT.includes(f.label));

  it('is rebuilt from the journal: the same amount, card and approval code, marked as a copy', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-printer-'));
    const first = await start(cwd);
    const printed = getPrinterSimulator(first.receipts.printer!)!.nextReceipt();
    await sale(first);
    const original = (await printed).lines;
    await first.close();
    host = undefined;
    expect(kept(original).map((f) => f.label)).toEqual(KEPT);

    const second = await start(cwd);
    await waitFor(second, ['idle'], 10_000);
    const sim = getPrinterSimulator(second.receipts.printer!)!;
    const again = sim.nextReceipt();
    expect(
      await second.operator({
        pin: second.generatedOperatorPin ?? '',
        action: { type: 'service', task: 'reprint' },
      }),
    ).toMatchObject({ ok: true, value: { outcome: 'ok', message: 'last receipt printed again' } });
    const copy = (await again).lines;
    expect(kept(copy)).toEqual(kept(original));
    expect(readPrintedReceipt(copy).title).toBe(`${readPrintedReceipt(original).title} - COPY`);
    // Never the card number, whole or as its first digits, nor the expiry.
    const card = VIRTUAL_CARDS['n2-contact']?.outcome;
    const { pan, expiry } = card?.kind === 'read' ? card.card : { pan: '', expiry: '' };
    expect(pan).toMatch(/^\d{16}$/);
    const paper = withoutIssuedIdentifiers(copy.join('\n'), readPrintedReceipt(copy).fields, 'en_GB');
    for (const secret of [pan, pan.slice(0, 6), expiry]) expect(paper).not.toContain(secret);
    expect(second.audit.list({}).map((r) => [r.action, r.result])).toContainEqual(['reprint', 'ok']);
  }, 60_000);
});

describe('service mode from operator mode', () => {
  it('takes the terminal out of service with the notice customers read, prints a test receipt, and comes back', async () => {
    const h = await start();
    await waitFor(h, ['idle'], 10_000);
    const pin = h.generatedOperatorPin ?? '';
    const off = await h.operator({
      pin,
      action: { type: 'service', task: 'on', reason: 'Paper being refilled' },
    });
    expect(off).toMatchObject({ ok: true, value: { type: 'service', outcome: 'ok' } });
    const shown = await h.snapshot();
    expect(shown.ok && shown.value.customer).toMatchObject({
      screen: 'out-of-service',
      message: 'Paper being refilled',
    });
    expect((await h.send({ type: 'START' })).ok).toBe(false);

    const sim = getPrinterSimulator(h.receipts.printer!)!;
    const test = sim.nextReceipt();
    expect(await h.operator({ pin, action: { type: 'service', task: 'test-print' } })).toMatchObject({
      ok: true,
      value: { outcome: 'ok' },
    });
    expect((await test).lines.join('\n')).toContain('Test receipt');
    expect(await h.operator({ pin, action: { type: 'service', task: 'reader-self-test' } })).toMatchObject({
      ok: true,
      value: { outcome: 'ok' },
    });

    expect(await h.operator({ pin, action: { type: 'service', task: 'off' } })).toMatchObject({
      ok: true,
      value: { outcome: 'ok', message: 'back in service' },
    });
    expect((await waitFor(h, ['idle'], 5_000)).customer.screen).toBe('idle');
    const actions = h.audit.list({}).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['service-mode-on', 'test-print', 'service-mode-off']));
  }, 30_000);
});

describe('the audit log from operator mode', () => {
  it('lists what the operator did and exports it as CSV, recording the export', async () => {
    const h = await start();
    await waitFor(h, ['idle'], 10_000);
    const pin = h.generatedOperatorPin ?? '';
    expect((await h.operator({ pin: '0', action: { type: 'status' } })).ok).toBe(false);
    await h.operator({ pin, action: { type: 'service', task: 'reader-self-test' } });
    const listed = await h.operator({ pin, action: { type: 'audit', limit: 50 } });
    if (!listed.ok || listed.value.type !== 'audit') throw new Error('no audit answer');
    expect(listed.value.records.map((r) => r.action)).toEqual(
      expect.arrayContaining(['sign-in-failed', 'sign-in', 'reader-self-test']),
    );
    expect(JSON.stringify(listed.value.records)).not.toContain(pin);
    const exported = await h.operator({ pin, action: { type: 'audit', format: 'csv' } });
    if (!exported.ok || exported.value.type !== 'audit') throw new Error('no audit answer');
    expect(exported.value.csv?.split('\r\n')[0]).toContain('action');
    expect(h.audit.list({}).some((r) => r.action === 'export')).toBe(true);
  }, 30_000);
});
