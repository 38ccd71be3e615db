import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { receiptTextLines } from './layout.js';
import type { PrintableReceipt, PrinterStatus, ReceiptPrinter } from './printer.js';
import type { SimulatedPrinterControl } from './sim/printer-simulator.js';

/**
 * The ReceiptPrinter contract suite (printer.ts): one suite, run against the ESC/POS driver over the simulator and
 * against a real printer when TEST_PRINTER_PORT names one (design rule "one contract suite, two targets"). The first
 * part holds for any printer; the second steers the simulator (paper, cover, silence, cable) and reads back what it
 * printed, and is skipped for real printers.
 */

export interface PrinterContractTarget {
  readonly printer: ReceiptPrinter;
  /** Present for simulated printers: the simulator behind `printer`. */
  readonly control?: SimulatedPrinterControl;
  /** Characters per line the printer was built with. */
  readonly widthChars: number;
}

export const CONTRACT_RECEIPT: PrintableReceipt = {
  title: 'Contract test receipt',
  fields: [
    { label: 'Amount', value: '£1.00' },
    { label: 'Card', value: '**** **** **** 0119' },
    {
      label: 'Note',
      value: 'This receipt was printed by the printer contract suite and proves nothing was charged.',
    },
  ],
  qr: 'https://example.invalid/receipt?ref=CONTRACT',
};

const nextStatus = (printer: ReceiptPrinter, wanted: PrinterStatus): Promise<void> =>
  new Promise((resolve) => {
    const listener = (s: PrinterStatus): void => {
      if (s !== wanted) return;
      printer.off('status', listener);
      resolve();
    };
    printer.on('status', listener);
  });

export function describePrinterContract(
  name: string,
  create: () => Promise<PrinterContractTarget>,
  simulated: boolean,
): void {
  describe(`ReceiptPrinter contract: ${name}`, () => {
    let target: PrinterContractTarget;
    beforeEach(async () => {
      target = await create();
      await target.printer.connect();
    });
    afterEach(async () => {
      await target.printer.close();
    });

    it('is ready after connect and stays ready on a status request', async () => {
      expect(target.printer.status()).toBe('ready');
      expect(await target.printer.refreshStatus()).toBe('ready');
    });

    it('prints a receipt and is ready afterwards', async () => {
      await target.printer.print(CONTRACT_RECEIPT);
      expect(target.printer.status()).toBe('ready');
    });

    it('refuses a print or a status request while a print is outstanding', async () => {
      const first = target.printer.print(CONTRACT_RECEIPT);
      await expect(target.printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_BUSY' });
      await expect(target.printer.refreshStatus()).rejects.toMatchObject({ code: 'PRINTER_BUSY' });
      await first;
    });

    it('is offline after close', async () => {
      await target.printer.close();
      expect(target.printer.status()).toBe('offline');
    });

    describe.skipIf(!simulated)('simulated printer', () => {
      const control = (): SimulatedPrinterControl => {
        if (!target.control) throw new Error('no simulator');
        return target.control;
      };

      it('prints exactly the laid-out lines and the QR code', async () => {
        const printed = control().nextReceipt();
        await target.printer.print(CONTRACT_RECEIPT);
        const receipt = await printed;
        expect(receipt.lines).toEqual(receiptTextLines(CONTRACT_RECEIPT, target.widthChars));
        expect(receipt.qrCodes).toEqual([CONTRACT_RECEIPT.qr]);
        expect(control().protocolErrors).toEqual([]);
      });

      it('reports paper out as a status event and refuses to print with PRINTER_PAPER_OUT', async () => {
        const event = nextStatus(target.printer, 'paper-out');
        control().setPaper('out');
        expect(await target.printer.refreshStatus()).toBe('paper-out');
        await event;
        await expect(target.printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
          code: 'PRINTER_PAPER_OUT',
        });
        expect(control().receipts).toHaveLength(0);
        control().setPaper('ok');
        expect(await target.printer.refreshStatus()).toBe('ready');
        await target.printer.print(CONTRACT_RECEIPT);
        expect(control().receipts).toHaveLength(1);
      });

      it('reports an open cover and refuses to print with PRINTER_COVER_OPEN', async () => {
        control().setCover('open');
        expect(await target.printer.refreshStatus()).toBe('cover-open');
        await expect(target.printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
          code: 'PRINTER_COVER_OPEN',
        });
        control().setCover('closed');
        expect(await target.printer.refreshStatus()).toBe('ready');
      });

      it('fails a job with PRINTER_PAPER_OUT when the paper runs out during it', async () => {
        control().runOutOfPaperAfter(2);
        await expect(target.printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
          code: 'PRINTER_PAPER_OUT',
        });
        expect(target.printer.status()).toBe('paper-out');
        expect(control().receipts).toHaveLength(0);
        expect(control().pendingLines).toHaveLength(2);
      });

      it('reports a printer that does not answer as offline, and fails a print with PRINTER_OFFLINE', async () => {
        control().setSilent(true);
        expect(await target.printer.refreshStatus()).toBe('offline');
        await expect(target.printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
          code: 'PRINTER_OFFLINE',
        });
        expect(control().receipts).toHaveLength(0);
        control().setSilent(false);
        expect(await target.printer.refreshStatus()).toBe('ready');
      });

      it('goes offline when unplugged and finds the printer again on the next status request', async () => {
        const event = nextStatus(target.printer, 'offline');
        control().unplug();
        await event;
        expect(target.printer.status()).toBe('offline');
        expect(await target.printer.refreshStatus()).toBe('ready');
        await target.printer.print(CONTRACT_RECEIPT);
      });
    });
  });
}
