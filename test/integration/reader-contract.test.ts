import { describe, expect, it } from 'vitest';
import {
  CONTRACT_CARDS_EXIST,
  describeReaderContract,
  simulatedTarget,
} from '../../devices/reader.contract.js';

// The CardReader contract over the simulator's in-process stream and over the injected HID device. The pseudo-terminal
// and the real reader run in reader-pty.test.ts and reader-hardware.test.ts.

describe('contract card table', () => {
  it('names only virtual cards that exist', () => {
    expect(CONTRACT_CARDS_EXIST()).toBe(true);
  });
});

describeReaderContract('simulator over an in-process stream', simulatedTarget('stream'), true);
describeReaderContract(
  'simulator over an injected HID device (64-byte reports)',
  simulatedTarget('hid'),
  true,
);
