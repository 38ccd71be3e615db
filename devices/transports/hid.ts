import type * as NodeHid from 'node-hid';
import { ReaderError } from '../reader.js';
import { frameToReports, HidReassembler } from './hid-reports.js';
import type { Transport, TransportConnection, TransportEvents } from './transport.js';

/**
 * The surface of a node-hid device object the transport uses (node-hid's `HIDAsync`; the sync `HID` fits too). Tests
 * and the simulator inject an object with this surface, since CI kernels have no uhid (environment.md).
 */
export interface HidDeviceLike {
  /** Sends one report; the first byte is the report ID (node-hid convention). */
  write(values: number[] | Buffer): number | Promise<number>;
  /** `data`: one input report, report ID first. `error`: the device failed or was unplugged. */
  on(event: 'data', listener: (data: Buffer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
  close(): void | Promise<void>;
}

export interface HidTransportOptions {
  /** USB vendor ID; ID TECH is 0x0ACD. */
  readonly vendorId: number;
  /** USB product ID; the first device of the vendor when absent. */
  readonly productId?: number;
  /** Opens the device. Default: node-hid, loaded lazily so that serial and simulated readers never need libusb. */
  readonly openDevice?: () => Promise<HidDeviceLike>;
}

const hex4 = (n: number): string => n.toString(16).padStart(4, '0').toUpperCase();

/**
 * Opens the first node-hid device matching vendor (and product). node-hid is imported here, lazily: on Linux its
 * binary needs libusb-1.0 and libudev at run time (environment.md), and a missing library becomes a clear
 * READER_UNAVAILABLE instead of a crash at start.
 */
export async function openNodeHidDevice(vendorId: number, productId?: number): Promise<HidDeviceLike> {
  let hid: typeof NodeHid;
  try {
    hid = await import('node-hid');
  } catch (e) {
    throw new ReaderError(
      'READER_UNAVAILABLE',
      `node-hid cannot be loaded (${e instanceof Error ? e.message : String(e)}); on Linux install libusb-1.0-0 and libudev1`,
      {},
      { cause: e },
    );
  }
  const name = `${hex4(vendorId)}:${productId === undefined ? '*' : hex4(productId)}`;
  try {
    const found = await hid.devicesAsync();
    const device = found.find(
      (d) => d.vendorId === vendorId && (productId === undefined || d.productId === productId) && d.path,
    );
    if (!device?.path) throw new Error(`no HID device ${name} found`);
    return await hid.HIDAsync.open(device.path);
  } catch (e) {
    if (e instanceof ReaderError) throw e;
    throw new ReaderError(
      'READER_UNAVAILABLE',
      `cannot open HID reader ${name}: ${e instanceof Error ? e.message : String(e)}`,
      {},
      { cause: e },
    );
  }
}

/** ViVOtech2 over USB-HID: 64-byte reports with IDs 1–4, reassembled by LEN (reader-protocol.md). */
export class HidTransport implements Transport {
  readonly description: string;

  constructor(private readonly options: HidTransportOptions) {
    this.description = `hid ${hex4(options.vendorId)}:${options.productId === undefined ? '*' : hex4(options.productId)}`;
  }

  async open(events: TransportEvents): Promise<TransportConnection> {
    let device: HidDeviceLike;
    try {
      device = await (
        this.options.openDevice ?? (() => openNodeHidDevice(this.options.vendorId, this.options.productId))
      )();
    } catch (e) {
      if (e instanceof ReaderError) throw e;
      throw new ReaderError(
        'READER_UNAVAILABLE',
        `cannot open ${this.description}: ${e instanceof Error ? e.message : String(e)}`,
        {},
        { cause: e },
      );
    }
    // After close or an unplug, a late 'error' from the device's read loop must not go unheard (EventEmitter throws).
    const quiet = (): void => {
      device.removeAllListeners();
      device.on('error', () => undefined);
    };
    const reassembler = new HidReassembler();
    let state: 'open' | 'closing' | 'ended' = 'open';
    device.on('data', (data: Buffer) => {
      if (state !== 'open') return;
      const frame = reassembler.push(new Uint8Array(data.buffer, data.byteOffset, data.length));
      if (frame) events.data(frame);
    });
    // node-hid reports an unplugged device as an 'error' on its read loop.
    device.on('error', (error: Error) => {
      if (state !== 'open') return;
      state = 'ended';
      quiet();
      Promise.resolve()
        .then(() => device.close())
        .catch(() => undefined);
      events.closed(error);
    });
    return {
      write: async (bytes) => {
        for (const report of frameToReports(bytes)) {
          if (state !== 'open')
            throw new ReaderError('READER_DISCONNECTED', `${this.description} is not open`);
          try {
            await device.write(Buffer.from(report));
          } catch (e) {
            throw new ReaderError(
              'READER_DISCONNECTED',
              `write to ${this.description} failed: ${e instanceof Error ? e.message : String(e)}`,
              {},
              { cause: e },
            );
          }
        }
      },
      close: async () => {
        if (state === 'ended') return;
        state = 'closing';
        quiet();
        try {
          await device.close();
        } catch {
          // Closing a device that already went away fails; there is nothing left to release.
        }
      },
    };
  }
}
