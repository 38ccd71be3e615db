import { afterEach, describe, expect, it } from 'vitest';
import { getPrinterSimulator } from '../../devices/printer/index.js';
import { parseConfig } from '../config/index.js';
import type { ReceiptData } from '../flows/index.js';
import { silentLogger } from '../log/index.js';
import { ReceiptDesk } from './receipt-desk.js';

const SALE: ReceiptData = {
  service: 'sale',
  comments: 'Parking Sale',
  amountMinor: 600,
  currency: 'GBP',
  maskedPan: '476173******0119',
  transactionId: 'T01TESTRECEIPT',
  gatewayId: '7012345678901234567890',
  atMs: Date.parse('2026-11-24T10:00:00Z'),
  lines: [{ label: 'Ticket', value: '2026112408000001' }],
};

let desk: ReceiptDesk | undefined;
afterEach(async () => {
  await desk?.close();
  desk = undefined;
});

async function start(overrides: Record<string, unknown> = {}): Promise<ReceiptDesk> {
  desk = new ReceiptDesk(parseConfig({ printer: { kind: 'sim' }, ...overrides }), silentLogger());
  await desk.start();
  return desk;
}

describe('ReceiptDesk', () => {
  it('prints the receipt of a payment with its QR, the card as its last four digits only', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const printed = sim.nextReceipt();
    const doc = d.issue(SALE);
    expect(doc).toBeDefined();
    const paper = await printed;
    const text = paper.lines.join('\n');
    expect(text).toContain('0119');
    expect(text).not.toContain('476173');
    expect(text).toContain('T01TESTRECEIPT');
    expect(paper.qrCodes).toHaveLength(1);
    expect(d.summary()).toEqual({ kind: 'sim', status: 'ready' });
  });

  it('reports paper out to the operator and loses nothing: the receipt can be printed again', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    sim.setPaper('out');
    d.issue(SALE);
    await expect.poll(() => d.summary().lastError ?? '').toContain('PRINTER_PAPER_OUT');
    expect(d.summary().status).toBe('paper-out');
    sim.setPaper('ok');
    const again = sim.nextReceipt();
    await d.reprint();
    expect((await again).lines.join('\n')).toContain('T01TESTRECEIPT');
    expect(d.summary().lastError).toBeUndefined();
  });

  it('prints a test receipt, and works without a printer', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const test = sim.nextReceipt();
    await d.testPrint();
    expect((await test).lines.join('\n')).toContain('Test receipt');
    await d.close();
    desk = await start({ printer: { kind: 'none' } });
    expect(desk.summary()).toEqual({ kind: 'none', status: 'none' });
    expect(desk.issue(SALE)).toBeDefined();
    await expect(desk.testPrint()).rejects.toMatchObject({ code: 'PRINTER_UNAVAILABLE' });
  });
});
