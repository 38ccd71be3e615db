/** Longest wait between two tries of a request of money to give back that did not go through. */
export const MAX_RETRY_WAIT_MS = 3_600_000;

/**
 * The wait before the next try of a reversal that did not go through (refused for now, or not finished): `baseMs`
 * (`journal.resolutionRetryMs`) doubled with each earlier try that did not, at most {@link MAX_RETRY_WAIT_MS}: an
 * outage of minutes costs a few requests, and the money is given back within the hour after it ends. One rule for the
 * host's follow-ups and the tap-and-go hold watch.
 */
export function retryWaitMs(baseMs: number, triesBefore: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, triesBefore), MAX_RETRY_WAIT_MS);
}
