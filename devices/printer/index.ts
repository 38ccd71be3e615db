import type { Logger } from '../../src/log/index.js';
import { SerialTransport, type SerialTransportOptions } from '../transports/serial.js';
import type { Transport } from '../transports/transport.js';
import { EscPosPrinter } from './escpos-printer.js';
import { printableDots, type PrinterCodepage } from './escpos.js';
import { PrinterError, type ReceiptPrinter } from './printer.js';
import { PrinterSimulator, type SimulatedPrinterControl } from './sim/printer-simulator.js';
import { SimulatedPrinterTransport } from './sim/stream-transport.js';
import { DeviceFileTransport } from './transports/device-file.js';

export * from './printer.js';
export { EscPosPrinter, type EscPosPrinterOptions } from './escpos-printer.js';
export {
  encodableIn,
  encodeReceipt,
  printableDots,
  qrModuleDots,
  receiptCodepage,
  type PrinterCodepage,
} from './escpos.js';
export { printableText, receiptTextLines } from './layout.js';
export {
  PrinterSimulator,
  type PrintedReceipt,
  type SimulatedPrinterControl,
} from './sim/printer-simulator.js';

/**
 * Printer options: the `printer` section of the configuration (src/config/schema.ts), mapped by the host. devices may
 * not import src/config, so the shape is repeated here.
 */
export interface PrinterOptions {
  readonly kind: 'none' | 'sim' | 'serial' | 'usb';
  readonly serial: { readonly path?: string; readonly baudRate: number };
  readonly usb: { readonly path: string };
  readonly widthChars: 42 | 48;
  readonly codepage: PrinterCodepage;
  readonly statusTimeoutMs: number;
}

/** The embedded defaults of the configuration's `printer` section. */
export const DEFAULT_PRINTER_OPTIONS: PrinterOptions = {
  kind: 'sim',
  serial: { baudRate: 38_400 },
  usb: { path: '/dev/usb/lp0' },
  widthChars: 42,
  codepage: 'cp858',
  statusTimeoutMs: 1_000,
};

export interface PrinterDeps {
  readonly logger?: Logger;
  /** Opens the serial port stream (tests inject serialport's SerialPortMock; kind 'serial' only). */
  readonly createSerialPort?: SerialTransportOptions['createPort'];
}

const simulators = new WeakMap<ReceiptPrinter, PrinterSimulator>();

/**
 * Builds the printer the options describe, or null for kind `none`. Nothing is opened until `connect()`. For kind
 * `sim` the simulator is reachable through {@link getPrinterSimulator}.
 * @throws PrinterError PRINTER_UNAVAILABLE when a serial printer has no path.
 */
export function createPrinter(options: PrinterOptions, deps: PrinterDeps = {}): ReceiptPrinter | null {
  let transport: Transport;
  let simulator: PrinterSimulator | undefined;
  switch (options.kind) {
    case 'none':
      return null;
    case 'serial': {
      const path = options.serial.path;
      if (!path)
        throw new PrinterError('PRINTER_UNAVAILABLE', 'printer.serial.path is required for a serial printer');
      transport = new SerialTransport({
        path,
        baudRate: options.serial.baudRate,
        ...(deps.createSerialPort ? { createPort: deps.createSerialPort } : {}),
      });
      break;
    }
    case 'usb':
      transport = new DeviceFileTransport({ path: options.usb.path });
      break;
    case 'sim':
      simulator = new PrinterSimulator({ printableDots: printableDots(options.widthChars) });
      transport = new SimulatedPrinterTransport(simulator);
      break;
  }
  const printer = new EscPosPrinter(
    transport,
    { widthChars: options.widthChars, codepage: options.codepage, statusTimeoutMs: options.statusTimeoutMs },
    deps.logger?.child({ component: 'printer' }),
  );
  if (simulator) simulators.set(printer, simulator);
  return printer;
}

/** The simulator behind a printer created with kind `sim`; undefined for real printers. */
export function getPrinterSimulator(printer: ReceiptPrinter): SimulatedPrinterControl | undefined {
  return simulators.get(printer);
}
