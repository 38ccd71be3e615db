import { EventEmitter } from 'node:events';
import type { HidDeviceLike } from '../transports/hid.js';
import { frameToReports, HID_REPORT_SIZE, HidReassembler } from '../transports/hid-reports.js';
import type { ReaderSimulator } from './simulator.js';

/**
 * The simulator as a node-hid device object (write / on('data') / on('error') / close), injected into the HID
 * transport: CI kernels have no uhid, so a virtual HID device cannot be made (environment.md). Reports cross as on
 * USB: 64 bytes, report ID first, frames split and reassembled by the real report code.
 */
export class SimulatedHidDevice extends EventEmitter implements HidDeviceLike {
  private readonly reassembler = new HidReassembler();
  private readonly endpoint: ReturnType<ReaderSimulator['attach']>;
  private open = true;

  /** @throws Error when the simulated reader is unplugged. */
  constructor(simulator: ReaderSimulator) {
    super();
    this.endpoint = simulator.attach({
      send: (bytes) => {
        for (const report of frameToReports(bytes)) {
          // Input reports arrive asynchronously, one event each, like node-hid's read loop.
          setImmediate(() => {
            if (this.open) this.emit('data', Buffer.from(report));
          });
        }
      },
      unplugged: () => {
        if (!this.open) return;
        this.open = false;
        setImmediate(() => this.emit('error', new Error('could not read from HID device')));
      },
    });
  }

  write(values: number[] | Buffer): number {
    if (!this.open) throw new Error('Cannot write to hid device');
    const report = Uint8Array.from(values);
    if (report.length !== HID_REPORT_SIZE)
      throw new Error(`report of ${report.length} bytes, expected ${HID_REPORT_SIZE}`);
    const frame = this.reassembler.push(report);
    if (frame) this.endpoint.deliver(frame);
    return report.length;
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.endpoint.detach();
  }
}
