import { ReaderError } from '../reader.js';
import { InProcessTransport } from '../transports/in-process.js';
import type { ReaderSimulator } from './simulator.js';

/** The reader simulator over an in-process byte stream (the default for `npm start`). */
export class SimulatedStreamTransport extends InProcessTransport {
  constructor(simulator: ReaderSimulator) {
    super(simulator, 'simulator (in-process stream)', 'simulated reader', {
      unavailable: (message, cause) => new ReaderError('READER_UNAVAILABLE', message, {}, { cause }),
      disconnected: (message) => new ReaderError('READER_DISCONNECTED', message),
    });
  }
}
