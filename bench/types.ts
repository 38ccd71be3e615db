/** One line of `parking-terminal bench --json` (DESIGN.md): our figure, the named peer's, and ours / peer. */
export interface BenchResult {
  readonly name: string;
  /** Unit of `ours` and `peerValue`, e.g. "ops/s", "req/s", "ms", "s". */
  readonly unit: string;
  readonly ours: number;
  /** The peer measured in the same run (package name, or a description of the baseline). */
  readonly peer: string | null;
  readonly peerValue: number | null;
  /**
   * ours / peerValue for throughput units (higher is better), peerValue / ours for time units (so that a ratio
   * above 1 always means "we are better"); null without a peer.
   */
  readonly ratio: number | null;
  /** CPU time (user + system) of our process per operation, microseconds, where measured. */
  readonly cpuMicrosPerOp?: number;
  /** The peer's CPU time per operation in the same run, microseconds, where measured. */
  readonly peerCpuMicrosPerOp?: number;
  /**
   * The physical limit the figure is measured against, where one applies (e.g. one disk sync per commit), in `unit`
   * or its own unit.
   */
  readonly limit?: { readonly what: string; readonly value: number; readonly unit: string };
  /** Extra figures (p99, totals, per-second rates beside a total time) for the human report. */
  readonly extra?: Record<string, number | string>;
}

export interface BenchOptions {
  /** Fewer iterations, for tests of the harness itself. */
  readonly quick: boolean;
}

export interface Benchmark {
  /** Dotted name, e.g. "tlv.decode"; `bench --only tlv` selects every name starting with "tlv". */
  readonly name: string;
  /**
   * For the help text: what the figure measures, against which peer, and what limits it (one or two sentences).
   * Optional: benchmarks whose module comment says it leave it out.
   */
  readonly description?: string;
  run(options: BenchOptions): Promise<BenchResult[]>;
}

/** Ratio such that > 1 means better than the peer, for a unit where higher (throughput) or lower (time) wins. */
export function ratioOf(ours: number, peer: number, higherIsBetter: boolean): number {
  if (peer === 0 || ours === 0) return 0;
  const r = higherIsBetter ? ours / peer : peer / ours;
  return Math.round(r * 100) / 100;
}

/** Median and p-th percentile of a sample (sorted copy). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] ?? Number.NaN;
}
