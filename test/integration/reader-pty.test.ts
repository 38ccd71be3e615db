import { spawnSync } from 'node:child_process';
import { describe, it } from 'vitest';
import { describeReaderContract, simulatedTarget } from '../../devices/reader.contract.js';

// The CardReader contract through a real pseudo-terminal pair and the real serialport package. The pair comes from a
// python3 relay (socat is not on a fresh machine; environment.md).

const python = spawnSync('python3', ['--version']);
const reason = python.error ? `python3 is not available (${python.error.message})` : undefined;
if (reason === undefined) {
  describeReaderContract('simulator over a pseudo-terminal through serialport', simulatedTarget('pty'), true);
} else {
  describe.skip(`CardReader contract: pseudo-terminal — not run: ${reason}`, () => {
    it('needs python3 for the pty relay', () => undefined);
  });
}
