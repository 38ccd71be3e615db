import { PassThrough } from 'node:stream';
import type { Transport, TransportConnection, TransportEvents } from '../../transports/transport.js';
import { PrinterError } from '../printer.js';
import type { PrinterEndpoint, PrinterSimulator } from './printer-simulator.js';

/**
 * The simulated printer over an in-process byte stream (the default for `npm start`): the real driver and encoder on
 * one side, the simulator on the other, bytes crossing two Node streams so that delivery is asynchronous as on a wire.
 */
export class SimulatedPrinterTransport implements Transport {
  readonly description = 'printer simulator (in-process stream)';

  constructor(private readonly simulator: PrinterSimulator) {}

  open(events: TransportEvents): Promise<TransportConnection> {
    const toPrinter = new PassThrough();
    const toHost = new PassThrough();
    let state: 'open' | 'closed' = 'open';
    let endpoint: PrinterEndpoint;
    try {
      endpoint = this.simulator.attach({
        send: (bytes) => {
          if (state === 'open') toHost.write(bytes);
        },
        unplugged: () => {
          if (state !== 'open') return;
          state = 'closed';
          toPrinter.destroy();
          toHost.destroy();
          events.closed(new Error('simulated printer unplugged'));
        },
      });
    } catch (e) {
      return Promise.reject(
        new PrinterError('PRINTER_UNAVAILABLE', e instanceof Error ? e.message : String(e), { cause: e }),
      );
    }
    toPrinter.on('data', (chunk: Buffer) => endpoint.deliver(new Uint8Array(chunk)));
    toHost.on('data', (chunk: Buffer) => {
      if (state === 'open') events.data(new Uint8Array(chunk));
    });
    return Promise.resolve({
      write: (bytes) =>
        new Promise<void>((resolve, reject) => {
          if (state !== 'open') {
            reject(new PrinterError('PRINTER_OFFLINE', 'simulated printer is not connected'));
            return;
          }
          toPrinter.write(bytes, () => resolve());
        }),
      close: () => {
        if (state === 'open') {
          state = 'closed';
          endpoint.detach();
          toPrinter.destroy();
          toHost.destroy();
        }
        return Promise.resolve();
      },
    });
  }
}
