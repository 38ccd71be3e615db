/**
 * This terminal's clock against the gateway's as the operator reads it: "this terminal's clock is 300 s ahead of the
 * gateway's" (or "behind"). `skewSeconds`: this terminal's clock minus the gateway's (src/gateway/clock-skew.ts). The
 * one wording of the error GW_AUTH_CLOCK and the host's log line.
 */
export function clockSkewText(skewSeconds: number): string {
  return `this terminal's clock is ${Math.abs(skewSeconds)} s ${skewSeconds > 0 ? 'ahead of' : 'behind'} the gateway's`;
}
