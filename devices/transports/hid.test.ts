import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/emv/index.js';
import { encodeReaderFrame } from '../vivotech2/frame.js';
import { PING_REQUEST, VENDOR_REPLY } from '../vivotech2/testing/published-frames.js';
import { HidTransport, openNodeHidDevice, type HidDeviceLike } from './hid.js';
import { frameToReports } from './hid-reports.js';

/** A node-hid-shaped device that records the reports written to it. */
class FakeDevice extends EventEmitter implements HidDeviceLike {
  readonly written: Uint8Array[] = [];
  closed = false;
  failWrites = false;
  write(values: number[] | Buffer): number {
    if (this.failWrites) throw new Error('Cannot write to hid device');
    this.written.push(Uint8Array.from(values));
    return values.length;
  }
  close(): void {
    this.closed = true;
  }
}

const open = async (device: FakeDevice) => {
  const received: Uint8Array[] = [];
  const closed: (Error | undefined)[] = [];
  const connection = await new HidTransport({
    vendorId: 0x0acd,
    openDevice: () => Promise.resolve(device),
  }).open({
    data: (c) => received.push(c),
    closed: (e) => closed.push(e),
  });
  return { connection, received, closed };
};

describe('HidTransport', () => {
  it('writes a frame as 64-byte reports with the report ID first', async () => {
    const device = new FakeDevice();
    const { connection } = await open(device);
    await connection.write(hexToBytes(PING_REQUEST));
    expect(device.written).toHaveLength(1);
    expect(device.written[0]?.length).toBe(64);
    expect(device.written[0]?.[0]).toBe(1);
    expect(bytesToHex(device.written[0]?.subarray(1, 17) ?? new Uint8Array(0))).toBe(
      bytesToHex(hexToBytes(PING_REQUEST)),
    );
  });

  it('delivers a multi-report frame once its last report arrives', async () => {
    const device = new FakeDevice();
    const { received } = await open(device);
    const frame = hexToBytes(VENDOR_REPLY);
    for (const r of frameToReports(frame)) device.emit('data', Buffer.from(r));
    expect(received.map((c) => bytesToHex(c))).toEqual([bytesToHex(frame)]);
  });

  it('reports an unplugged device once, closes it, and refuses further writes', async () => {
    const device = new FakeDevice();
    const { connection, closed } = await open(device);
    device.emit('error', new Error('could not read from HID device'));
    device.emit(
      'data',
      Buffer.from(frameToReports(encodeReaderFrame({ cmd: 0x18, status: 0 }))[0] as Uint8Array),
    );
    expect(closed).toHaveLength(1);
    await new Promise((r) => setImmediate(r));
    expect(device.closed).toBe(true);
    await expect(connection.write(hexToBytes(PING_REQUEST))).rejects.toMatchObject({
      code: 'READER_DISCONNECTED',
    });
  });

  it('turns a failed write into READER_DISCONNECTED', async () => {
    const device = new FakeDevice();
    const { connection } = await open(device);
    device.failWrites = true;
    await expect(connection.write(hexToBytes(PING_REQUEST))).rejects.toMatchObject({
      code: 'READER_DISCONNECTED',
    });
  });

  it('fires no event after close()', async () => {
    const device = new FakeDevice();
    const { connection, closed, received } = await open(device);
    await connection.close();
    device.emit('error', new Error('late'));
    expect(closed).toHaveLength(0);
    expect(received).toHaveLength(0);
    expect(device.closed).toBe(true);
  });
});

describe('openNodeHidDevice', () => {
  it('fails with READER_UNAVAILABLE when no device of the vendor is present', async () => {
    // Vendor FFFE is reserved: no such device exists. node-hid itself may be missing its libraries: same code.
    await expect(openNodeHidDevice(0xfffe, 0x0001)).rejects.toMatchObject({ code: 'READER_UNAVAILABLE' });
  });
});
