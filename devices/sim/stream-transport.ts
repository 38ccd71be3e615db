import { PassThrough } from 'node:stream';
import { ReaderError } from '../reader.js';
import type { Transport, TransportConnection, TransportEvents } from '../transports/transport.js';
import type { ReaderSimulator } from './simulator.js';

/**
 * The simulator over an in-process byte stream (the default for `npm start`): the real driver and codec on one side,
 * the simulator on the other, bytes crossing two Node streams so that delivery is asynchronous as on a wire.
 */
export class SimulatedStreamTransport implements Transport {
  readonly description = 'simulator (in-process stream)';

  constructor(private readonly simulator: ReaderSimulator) {}

  open(events: TransportEvents): Promise<TransportConnection> {
    const toReader = new PassThrough();
    const toHost = new PassThrough();
    let state: 'open' | 'closed' = 'open';
    let endpoint: ReturnType<ReaderSimulator['attach']>;
    try {
      endpoint = this.simulator.attach({
        send: (bytes) => {
          if (state === 'open') toHost.write(bytes);
        },
        unplugged: () => {
          if (state !== 'open') return;
          state = 'closed';
          toReader.destroy();
          toHost.destroy();
          events.closed(new Error('simulated reader unplugged'));
        },
      });
    } catch (e) {
      return Promise.reject(
        new ReaderError('READER_UNAVAILABLE', e instanceof Error ? e.message : String(e), {}, { cause: e }),
      );
    }
    toReader.on('data', (chunk: Buffer) => endpoint.deliver(new Uint8Array(chunk)));
    toHost.on('data', (chunk: Buffer) => {
      if (state === 'open') events.data(new Uint8Array(chunk));
    });
    return Promise.resolve({
      write: (bytes) =>
        new Promise<void>((resolve, reject) => {
          if (state !== 'open') {
            reject(new ReaderError('READER_DISCONNECTED', 'simulated reader is not connected'));
            return;
          }
          toReader.write(bytes, () => resolve());
        }),
      close: () => {
        if (state === 'open') {
          state = 'closed';
          endpoint.detach();
          toReader.destroy();
          toHost.destroy();
        }
        return Promise.resolve();
      },
    });
  }
}
