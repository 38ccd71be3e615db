import { SerialPortMock } from 'serialport';
import { afterEach, describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/emv/index.js';
import { PING_REPLY, PING_REQUEST } from '../vivotech2/testing/published-frames.js';
import { listSerialPorts, SerialTransport } from './serial.js';

// SerialPortMock carries its own copy of @serialport/binding-mock: ports are created on that one.
const MockBinding = SerialPortMock.binding;
afterEach(() => MockBinding.reset());

const mockTransport = (path: string): SerialTransport =>
  new SerialTransport({
    path,
    baudRate: 115_200,
    createPort: (o) => new SerialPortMock({ ...o, autoOpen: false }),
  });

describe('SerialTransport (serialport stream over binding-mock)', () => {
  it('fails to open a missing port with READER_UNAVAILABLE', async () => {
    await expect(
      mockTransport('/dev/NOPE').open({ data: () => undefined, closed: () => undefined }),
    ).rejects.toMatchObject({
      code: 'READER_UNAVAILABLE',
    });
  });

  it('carries a Ping exchange through the real stream code', async () => {
    MockBinding.createPort('/dev/READER2', { echo: false, record: true });
    let mock: SerialPortMock | undefined;
    const transport = new SerialTransport({
      path: '/dev/READER2',
      baudRate: 115_200,
      createPort: (o) => (mock = new SerialPortMock({ ...o, autoOpen: false })),
    });
    const received: number[] = [];
    const connection = await transport.open({ data: (c) => received.push(...c), closed: () => undefined });
    await connection.write(hexToBytes(PING_REQUEST));
    expect(bytesToHex(Uint8Array.from(mock?.port?.recording ?? []))).toBe(
      bytesToHex(hexToBytes(PING_REQUEST)),
    );
    mock?.port?.emitData(Buffer.from(hexToBytes(PING_REPLY)));
    while (received.length < 16) await new Promise((r) => setTimeout(r, 5));
    expect(bytesToHex(Uint8Array.from(received))).toBe(bytesToHex(hexToBytes(PING_REPLY)));
    await connection.close();
  });

  it('lists ports best effort, never throwing', async () => {
    await expect(listSerialPorts()).resolves.toBeInstanceOf(Array);
  });
});
