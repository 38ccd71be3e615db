import type { Benchmark } from './types.js';

/**
 * Every benchmark group behind `parking-terminal bench`, loaded lazily. Each module exports `benchmarks: Benchmark[]`.
 */
export const BENCHMARK_GROUPS: ReadonlyArray<() => Promise<{ benchmarks: Benchmark[] }>> = [
  () => import('./sale.js'),
  () => import('./tlv.js'),
  () => import('./journal.js'),
  () => import('./gateway.js'),
  () => import('./sandbox.js'),
  () => import('./certify.js'),
  () => import('./fleet.js'),
];
