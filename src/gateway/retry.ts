import type { GatewayErrorCode } from './errors.js';

/** How one attempt failed: an HTTP answer the client will not accept, or a transport / client error. */
export type AttemptFailure =
  { kind: 'status'; httpStatus: number } | { kind: 'error'; code: GatewayErrorCode; outcomeUnknown: boolean };

/** Inputs of {@link shouldRetry}. */
export interface RetryDecision {
  /** Whether a duplicate of the request could move money twice (PreparedRequest.moneyMoving). */
  moneyMoving: boolean;
  /** Attempts made so far, including the one that failed (1 after the first attempt). */
  attempt: number;
  /** The most attempts allowed (configuration `gateway.retry.maxAttempts`). */
  maxAttempts: number;
  failure: AttemptFailure;
}

/**
 * Whether the client may send the same request again. Pure; every branch says why.
 */
export function shouldRetry(d: RetryDecision): boolean {
  // DESIGN.md money safety rule 2: a money-moving request is never resent blindly. Its unknown outcome is resolved
  // by a timeout reversal or timeout void that the caller journals and sends.
  if (d.moneyMoving) return false;
  // The configured budget is spent.
  if (d.attempt >= d.maxAttempts) return false;
  const f = d.failure;
  if (f.kind === 'status') {
    // 408 and 429 ask the client to come back later; 5xx are transient server states (502 is the gateway's
    // documented "server error or timeout").
    if (f.httpStatus === 408 || f.httpStatus === 429) return true;
    if (f.httpStatus >= 500 && f.httpStatus <= 599) return true;
    // Any other answer (4xx) would be the same answer again.
    return false;
  }
  switch (f.code) {
    // The network or the server failed, or a body arrived truncated: the same request may well succeed on a fresh
    // connection.
    case 'GW_TIMEOUT':
    case 'GW_CONNECTION':
    case 'GW_SERVER':
    case 'GW_PARSE':
      return true;
    // Nothing about the request changes between attempts: the same refusal would come back.
    case 'GW_INVALID_REQUEST':
    case 'GW_AUTH':
    case 'GW_AUTH_CLOCK':
    case 'GW_NOT_FOUND':
    case 'GW_CONFIG':
    case 'GW_UNDOCUMENTED':
      return false;
    // The caller gave up; retrying would ignore its decision.
    case 'GW_CANCELLED':
      return false;
    // Token-endpoint failures are retried by the token manager, which knows which of its codes are transient.
    case 'GW_OAUTH_TOKEN':
    case 'GW_OAUTH_REAUTHORIZE':
    case 'GW_OAUTH_STATE':
    case 'GW_OAUTH_DENIED':
      return false;
    // Refused by the terminal itself before sending (payment links): nothing went out, nothing to retry.
    case 'LINK_PERSONAL_DATA':
    case 'LINK_NOTIFICATION':
      return false;
  }
}

/** Backoff settings (configuration `gateway.retry`). */
export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * Delay before attempt `attempt + 1`: capped exponential backoff with "equal jitter" — half of the capped delay
 * fixed, half random — so that terminals restarted together after an outage do not retry in lockstep.
 *
 * @param attempt attempts made so far (≥ 1).
 * @param random a number in [0, 1) (injectable for tests).
 */
export function backoffDelayMs(
  attempt: number,
  options: BackoffOptions,
  random: number = Math.random(),
): number {
  const exp = options.initialDelayMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(options.maxDelayMs, exp);
  return Math.round(capped / 2 + (capped / 2) * random);
}
