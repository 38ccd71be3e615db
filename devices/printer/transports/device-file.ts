import { constants, type promises as fsPromises } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Transport, TransportConnection, TransportEvents } from '../../transports/transport.js';
import { PrinterError } from '../printer.js';

/** Options of a printer reached through a raw device file (configuration `printer.usb`). */
export interface DeviceFileTransportOptions {
  /** e.g. /dev/usb/lp0 (the Linux usblp driver); the terminal's user needs read and write access (group `lp`). */
  readonly path: string;
  /** Milliseconds between reads of the printer's answers. */
  readonly pollMs?: number;
  /** Milliseconds a write may wait for the device to accept bytes before it fails. */
  readonly writeTimeoutMs?: number;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const isErrno = (e: unknown, code: string): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/**
 * A USB printer through its device file. The usblp driver allows one open at a time and is bidirectional when the
 * printer is, so one descriptor is opened read-write and non-blocking: reads are polled (a blocking read would hold a
 * libuv thread until the printer speaks), and a write the device cannot take yet is retried until `writeTimeoutMs`.
 */
export class DeviceFileTransport implements Transport {
  readonly description: string;

  constructor(private readonly options: DeviceFileTransportOptions) {
    this.description = `usb ${options.path}`;
  }

  async open(events: TransportEvents): Promise<TransportConnection> {
    const { path } = this.options;
    const pollMs = this.options.pollMs ?? 20;
    const writeTimeoutMs = this.options.writeTimeoutMs ?? 10_000;
    let handle: fsPromises.FileHandle;
    try {
      handle = await open(path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (e) {
      throw new PrinterError('PRINTER_UNAVAILABLE', `cannot open ${path}: ${errorText(e)}`, { cause: e });
    }
    let state: 'open' | 'closing' | 'ended' = 'open';
    let reading: Promise<void> = Promise.resolve();
    const end = (error: Error): void => {
      if (state !== 'open') return;
      state = 'ended';
      clearInterval(timer);
      void reading.then(() => handle.close()).catch(() => undefined);
      events.closed(error);
    };
    const readOnce = async (): Promise<void> => {
      const buf = Buffer.alloc(64);
      try {
        const { bytesRead } = await handle.read(buf, 0, buf.length, null);
        if (bytesRead > 0 && state === 'open') events.data(new Uint8Array(buf.subarray(0, bytesRead)));
      } catch (e) {
        if (!isErrno(e, 'EAGAIN') && !isErrno(e, 'EWOULDBLOCK'))
          end(e instanceof Error ? e : new Error(String(e)));
      }
    };
    const timer = setInterval(() => {
      if (state === 'open') reading = reading.then(readOnce);
    }, pollMs);
    timer.unref();
    const write = async (bytes: Uint8Array): Promise<void> => {
      const deadline = Date.now() + writeTimeoutMs;
      let offset = 0;
      while (offset < bytes.length) {
        if (state !== 'open') throw new PrinterError('PRINTER_OFFLINE', `${path} is not open`);
        try {
          const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null);
          offset += bytesWritten;
        } catch (e) {
          if (!isErrno(e, 'EAGAIN') && !isErrno(e, 'EWOULDBLOCK')) {
            end(e instanceof Error ? e : new Error(String(e)));
            throw new PrinterError('PRINTER_OFFLINE', `write to ${path} failed: ${errorText(e)}`, {
              cause: e,
            });
          }
          if (Date.now() > deadline)
            throw new PrinterError('PRINTER_OFFLINE', `${path} took no data for ${writeTimeoutMs} ms`);
          await new Promise((r) => setTimeout(r, pollMs));
        }
      }
    };
    return {
      write,
      close: async () => {
        if (state !== 'open') return;
        state = 'closing';
        clearInterval(timer);
        await reading.catch(() => undefined);
        await handle.close().catch(() => undefined);
      },
    };
  }
}
