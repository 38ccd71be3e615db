/**
 * The configuration layers of a certification run: the pack's, the analyst's `--config`, each case's of its chain,
 * and what the runner sets, merged in that order.
 */

/** Deep merge of configuration objects: later wins; arrays and scalars are replaced. */
export function mergeConfig(...layers: Array<Record<string, unknown> | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [k, v] of Object.entries(layer)) {
      const cur = out[k];
      out[k] =
        v !== null &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        cur !== null &&
        typeof cur === 'object' &&
        !Array.isArray(cur)
          ? mergeConfig(cur as Record<string, unknown>, v as Record<string, unknown>)
          : v;
    }
  }
  return out;
}
