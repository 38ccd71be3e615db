import { describe, it } from 'vitest';
import { createPrinter, DEFAULT_PRINTER_OPTIONS } from '../../devices/printer/index.js';
import { describePrinterContract } from '../../devices/printer/printer.contract.js';

// The ReceiptPrinter contract against a real ESC/POS printer when TEST_PRINTER_PORT names one: a serial path
// (TEST_PRINTER_BAUD, default 38400) or usb:/dev/usb/lp0; TEST_PRINTER_WIDTH 42 or 48. Only the part that needs no
// simulator runs on hardware (it prints two short test receipts).

const port = process.env.TEST_PRINTER_PORT;
if (port) {
  const usb = port.startsWith('usb:') ? port.slice(4) : undefined;
  const widthChars = process.env.TEST_PRINTER_WIDTH === '48' ? 48 : 42;
  describePrinterContract(
    `real printer on ${port}`,
    () => {
      const printer = createPrinter({
        ...DEFAULT_PRINTER_OPTIONS,
        kind: usb ? 'usb' : 'serial',
        serial: { path: port, baudRate: Number(process.env.TEST_PRINTER_BAUD ?? 38_400) },
        usb: { path: usb ?? DEFAULT_PRINTER_OPTIONS.usb.path },
        widthChars,
      });
      if (!printer) throw new Error('no printer');
      return Promise.resolve({ printer, widthChars });
    },
    false,
  );
} else {
  describe.skip('ReceiptPrinter contract: real printer — not run: TEST_PRINTER_PORT is not set (a serial path, or usb:PATH)', () => {
    it('runs the contract against hardware', () => undefined);
  });
}
