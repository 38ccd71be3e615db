import { PassThrough } from 'node:stream';
import type { Transport, TransportConnection, TransportEvents } from './transport.js';

/** What a simulated device offers a host: bytes out through `link.send`, bytes in through the endpoint. */
export interface SimulatedDevice {
  attach(link: { send(bytes: Uint8Array): void; unplugged(): void }): {
    deliver(bytes: Uint8Array): void;
    detach(): void;
  };
}

/** How a device's errors are made (each device family has its own typed error). */
export interface InProcessErrors {
  /** The device cannot be attached (unplugged, already connected). */
  unavailable(message: string, cause: unknown): Error;
  /** A write after the connection ended. */
  disconnected(message: string): Error;
}

/**
 * A simulated device over an in-process byte stream (the default for `npm start`): the real driver and codec on one
 * side, the simulator on the other, bytes crossing two Node streams so that delivery is asynchronous as on a wire.
 * The card reader's and the receipt printer's simulators both travel this way.
 */
export class InProcessTransport implements Transport {
  constructor(
    private readonly device: SimulatedDevice,
    readonly description: string,
    private readonly name: string,
    private readonly errors: InProcessErrors,
  ) {}

  open(events: TransportEvents): Promise<TransportConnection> {
    const toDevice = new PassThrough();
    const toHost = new PassThrough();
    let state: 'open' | 'closed' = 'open';
    let endpoint: ReturnType<SimulatedDevice['attach']>;
    try {
      endpoint = this.device.attach({
        send: (bytes) => {
          if (state === 'open') toHost.write(bytes);
        },
        unplugged: () => {
          if (state !== 'open') return;
          state = 'closed';
          toDevice.destroy();
          toHost.destroy();
          events.closed(new Error(`${this.name} unplugged`));
        },
      });
    } catch (e) {
      return Promise.reject(this.errors.unavailable(e instanceof Error ? e.message : String(e), e));
    }
    toDevice.on('data', (chunk: Buffer) => endpoint.deliver(new Uint8Array(chunk)));
    toHost.on('data', (chunk: Buffer) => {
      if (state === 'open') events.data(new Uint8Array(chunk));
    });
    return Promise.resolve({
      write: (bytes) =>
        new Promise<void>((resolve, reject) => {
          if (state !== 'open') {
            reject(this.errors.disconnected(`${this.name} is not connected`));
            return;
          }
          toDevice.write(bytes, () => resolve());
        }),
      close: () => {
        if (state === 'open') {
          state = 'closed';
          endpoint.detach();
          toDevice.destroy();
          toHost.destroy();
        }
        return Promise.resolve();
      },
    });
  }
}
