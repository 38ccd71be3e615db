import { SerialPort, type SerialPortMock } from 'serialport';
import { ReaderError } from '../reader.js';
import type { Transport, TransportConnection, TransportEvents } from './transport.js';

/** Options of a serial reader (configuration `reader.serial`). */
export interface SerialTransportOptions {
  /** Device path, e.g. /dev/ttyUSB0, /dev/ttyACM0, COM3, or a pseudo-terminal / symlink to one. */
  readonly path: string;
  /** Line speed in baud; ViVOtech2 readers default to 115200, 8N1, no flow control (reader-protocol.md). */
  readonly baudRate: number;
  /**
   * Opens the port stream; tests inject `new SerialPortMock(...)` (from the serialport package) to run the real
   * stream code over @serialport/binding-mock. Default: the real `SerialPort`.
   */
  readonly createPort?: (options: { path: string; baudRate: number }) => SerialPort | SerialPortMock;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** ViVOtech2 over RS-232 / USB-serial through the `serialport` package, 8N1, no flow control. */
export class SerialTransport implements Transport {
  readonly description: string;

  constructor(private readonly options: SerialTransportOptions) {
    this.description = `serial ${options.path} @${options.baudRate}`;
  }

  async open(events: TransportEvents): Promise<TransportConnection> {
    const { path, baudRate } = this.options;
    const port =
      this.options.createPort?.({ path, baudRate }) ??
      new SerialPort({
        path,
        baudRate,
        dataBits: 8,
        parity: 'none',
        stopBits: 1,
        rtscts: false,
        autoOpen: false,
      });
    await new Promise<void>((resolve, reject) => {
      port.open((err) => {
        if (err)
          reject(
            new ReaderError(
              'READER_UNAVAILABLE',
              `cannot open ${path}: ${errorText(err)}`,
              {},
              { cause: err },
            ),
          );
        else resolve();
      });
    });
    let closing = false;
    let ended = false;
    const end = (error: Error | undefined): void => {
      if (ended || closing) return;
      ended = true;
      events.closed(error);
    };
    port.on('data', (chunk: Buffer) => {
      if (!closing) events.data(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
    });
    // serialport emits 'close' with an error carrying `disconnected: true` when the device goes away.
    port.on('close', (err: Error | null) => end(err ?? undefined));
    port.on('error', (err: Error) => {
      end(err);
      if (port.isOpen) port.close(() => undefined);
    });
    return {
      write: (bytes) =>
        new Promise<void>((resolve, reject) => {
          if (ended || closing || !port.isOpen) {
            reject(new ReaderError('READER_DISCONNECTED', `${path} is not open`));
            return;
          }
          port.write(Buffer.from(bytes), (err) => {
            if (err)
              reject(
                new ReaderError(
                  'READER_DISCONNECTED',
                  `write to ${path} failed: ${errorText(err)}`,
                  {},
                  { cause: err },
                ),
              );
            else port.drain(() => resolve());
          });
        }),
      close: () =>
        new Promise<void>((resolve) => {
          closing = true;
          if (!port.isOpen) {
            resolve();
            return;
          }
          port.close(() => resolve());
        }),
    };
  }
}

/** A serial port the OS lists. */
export interface ListedSerialPort {
  readonly path: string;
  readonly manufacturer?: string;
  readonly vendorId?: string;
  readonly productId?: string;
}

/**
 * Serial ports the OS lists, best effort: `SerialPort.list()` never lists pseudo-terminals and fails on Linux without
 * `udevadm` (environment.md), so a failure yields an empty list and the path comes from configuration.
 */
export async function listSerialPorts(): Promise<ListedSerialPort[]> {
  try {
    const ports = await SerialPort.list();
    return ports.map((p) => ({
      path: p.path,
      ...(p.manufacturer ? { manufacturer: p.manufacturer } : {}),
      ...(p.vendorId ? { vendorId: p.vendorId } : {}),
      ...(p.productId ? { productId: p.productId } : {}),
    }));
  } catch {
    return [];
  }
}
