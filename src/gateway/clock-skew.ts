import type { Authenticator } from './auth/authenticator.js';
import type { AuthClockSkew } from './errors.js';

/** An answer's `Date` header with when its request went out and it came back (epoch ms): the transport's `onAnswer`. */
export interface DatedAnswer {
  date: string | undefined;
  sentAtMs: number;
  receivedAtMs: number;
}

/**
 * This terminal's clock minus the gateway's, whole seconds: our clock at the middle of the exchange minus the answer's
 * `Date` (the header has whole seconds, so the skew is known to about a second). Undefined without a readable `Date`.
 * The one rule of the skew: the operator status, the fleet heartbeat and the diagnosis of a 401 all read it.
 */
export function clockSkewSeconds(answer: DatedAnswer): number | undefined {
  const theirs = answer.date === undefined ? NaN : Date.parse(answer.date);
  if (!Number.isFinite(theirs)) return undefined;
  return Math.round(((answer.sentAtMs + answer.receivedAtMs) / 2 - theirs - 500) / 1000);
}

/**
 * How far the terminal's clock may be from the gateway's before the gateway refuses its credentials with 401, seconds,
 * per authentication method (reference/gateway.md §1). JWT: a token expires 120 s after its `iat` (`exp` = iat + 120),
 * so a clock more than that behind sends expired tokens, and one as far ahead sends tokens issued in the future. HTTP
 * signature: the signed `date` is checked against the gateway's clock; the reference states no window, so the JWT's is
 * taken (the sandbox allows ±5 minutes). OAuth: bearer tokens, whose expiry the gateway states — the terminal's clock
 * signs nothing, so a 401 says nothing of it.
 */
export const AUTH_CLOCK_TOLERANCE_SECONDS: Readonly<Record<Authenticator['method'], number | undefined>> = {
  jwt: 120,
  'http-signature': 120,
  oauth: undefined,
};

/**
 * The 401 of an answer explained by this terminal's clock: the skew measured on that same answer is beyond what the
 * authentication method tolerates. Undefined when it is not (no `Date`, clocks close enough, or a method the clock
 * does not sign): then the 401 is a plain refusal of the credentials. Called only on a 401, never on the hot path.
 */
export function authClockSkew(
  method: Authenticator['method'],
  answer: DatedAnswer,
): AuthClockSkew | undefined {
  const toleranceSeconds = AUTH_CLOCK_TOLERANCE_SECONDS[method];
  if (toleranceSeconds === undefined) return undefined;
  const skewSeconds = clockSkewSeconds(answer);
  if (skewSeconds === undefined || Math.abs(skewSeconds) <= toleranceSeconds) return undefined;
  return { method, skewSeconds, toleranceSeconds };
}
