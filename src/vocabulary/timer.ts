/**
 * The longest delay a Node timer holds: 2^31 − 1 ms, about 24.8 days. A longer one fires after 1 ms, so every timer
 * whose due time may lie further (a hold's expiry, a token's renewal, a capture window, a watchdog of weeks) waits at
 * most this long and looks again when it fires.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
