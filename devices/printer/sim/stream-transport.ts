import { InProcessTransport } from '../../transports/in-process.js';
import { PrinterError } from '../printer.js';
import type { PrinterSimulator } from './printer-simulator.js';

/** The printer simulator over an in-process byte stream (the default for `npm start`). */
export class SimulatedPrinterTransport extends InProcessTransport {
  constructor(simulator: PrinterSimulator) {
    super(simulator, 'printer simulator (in-process stream)', 'simulated printer', {
      unavailable: (message, cause) => new PrinterError('PRINTER_UNAVAILABLE', message, { cause }),
      disconnected: (message) => new PrinterError('PRINTER_OFFLINE', message),
    });
  }
}
