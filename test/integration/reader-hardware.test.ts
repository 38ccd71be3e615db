import { describe, it } from 'vitest';
import { createReader, DEFAULT_READER_OPTIONS } from '../../devices/index.js';
import { describeReaderContract } from '../../devices/reader.contract.js';

// The CardReader contract against a real ViVOtech2 reader when TEST_READER_PORT names one: a serial path
// (TEST_READER_BAUD, default 115200) or hid:VID:PID. Only the part that needs no card runs on hardware.

const port = process.env.TEST_READER_PORT;
if (port) {
  const hid = /^hid:([0-9a-f]{1,4})(?::([0-9a-f]{1,4}))?$/i.exec(port);
  describeReaderContract(
    `real reader on ${port}`,
    () =>
      Promise.resolve({
        reader: createReader({
          ...DEFAULT_READER_OPTIONS,
          kind: hid ? 'hid' : 'serial',
          serial: { path: port, baudRate: Number(process.env.TEST_READER_BAUD ?? 115_200) },
          hid: hid?.[1]
            ? {
                vendorId: Number.parseInt(hid[1], 16),
                ...(hid[2] ? { productId: Number.parseInt(hid[2], 16) } : {}),
              }
            : DEFAULT_READER_OPTIONS.hid,
        }),
      }),
    false,
  );
} else {
  describe.skip('CardReader contract: real reader — not run: TEST_READER_PORT is not set (a serial path, or hid:VID:PID)', () => {
    it('runs the contract against hardware', () => undefined);
  });
}
