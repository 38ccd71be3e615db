import type { Command } from '../output.js';

/**
 * The subcommands of `parking-terminal`, loaded lazily so that `tlv decode` does not load SQLite or undici.
 * Order is the order of `--help`.
 */
export const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  start: () => import('./start.js'),
  simulate: () => import('./simulate.js'),
  bench: () => import('./bench.js'),
  sign: () => import('./sign.js'),
  oauth: () => import('./oauth.js'),
  reader: () => import('./reader.js'),
  tlv: () => import('./tlv.js'),
  card: () => import('./card.js'),
  emv: () => import('./emv.js'),
  queue: () => import('./queue.js'),
  shortfalls: () => import('./shortfalls.js'),
  offline: () => import('./offline.js'),
  audit: () => import('./audit.js'),
  links: () => import('./links.js'),
  fleet: () => import('./fleet.js'),
  altpay: () => import('./altpay.js'),
  sandbox: () => import('./sandbox.js'),
  certify: () => import('./certify.js'),
};
