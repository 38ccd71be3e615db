import { unknownVirtualCard } from '../../devices/index.js';
import { ConfigError, type Config } from '../config/index.js';

/**
 * Refuses, as CONFIG_INVALID naming reader.sim.card, a simulated reader whose card is not a virtual card
 * (devices `unknownVirtualCard`): the start refuses it with its key rather than failing to build the reader after the
 * configuration passed. The schema cannot check it (src/config does not import devices).
 */
export function assertReaderConfiguration(config: Config, file = '<configuration>'): void {
  const unknown = unknownVirtualCard(config.reader);
  if (unknown !== undefined)
    throw new ConfigError(
      'CONFIG_INVALID',
      `${file}: "reader.sim.card": ${unknown}`,
      file,
      'reader.sim.card',
    );
}
