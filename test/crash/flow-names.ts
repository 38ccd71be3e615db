/** The flows test/crash/driver.ts plays (see its header); the harness plans kills in each. */
export const FLOW_NAMES = [
  'sale',
  'meter',
  'meter-extend',
  'refund',
  'void',
  'meter-void',
  'offline',
  'queued',
  'gate',
  'gate-phone',
] as const;

export type Flow = (typeof FLOW_NAMES)[number];
