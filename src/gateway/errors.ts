/**
 * The gateway boundary's error hierarchy (DESIGN.md, Errors). Callers branch on `code`, never on message text, and on
 * `outcomeUnknown` to decide whether money may have moved: when it is true the request may have reached the gateway
 * and been processed, so the caller resolves it with a timeout reversal or timeout void (reference/gateway.md §2) and
 * never resends it blindly.
 */

import { clockSkewText } from '../vocabulary/clock-skew.js';

/** Stable codes of {@link GatewayError}. */
export type GatewayErrorCode =
  | 'GW_INVALID_REQUEST'
  | 'GW_AUTH'
  /** A 401 that this terminal's clock explains: it is further from the gateway's than the credentials allow. */
  | 'GW_AUTH_CLOCK'
  | 'GW_TIMEOUT'
  | 'GW_SERVER'
  | 'GW_CONNECTION'
  | 'GW_UNDOCUMENTED'
  | 'GW_PARSE'
  | 'GW_CANCELLED'
  | 'GW_NOT_FOUND'
  | 'GW_CONFIG'
  | 'GW_OAUTH_TOKEN'
  | 'GW_OAUTH_REAUTHORIZE'
  | 'GW_OAUTH_STATE'
  | 'GW_OAUTH_DENIED'
  /** A payment-link field holds personal data (spec 000): refused before sending (personal-data.ts). */
  | 'LINK_PERSONAL_DATA'
  /** A payment-link notification whose signature, merchant, time or body is not acceptable (link-notifications.ts). */
  | 'LINK_NOTIFICATION';

export interface GatewayErrorOptions {
  /** True when the request may have been processed by the gateway (see the class comment). Default false. */
  outcomeUnknown?: boolean;
  /** HTTP status of the answer that caused the error, when there was one. */
  httpStatus?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  override readonly name: string = 'GatewayError';
  /** Whether the request may have been processed (money may have moved). */
  readonly outcomeUnknown: boolean;
  /** HTTP status of the answer, when there was one. */
  readonly httpStatus: number | undefined;

  constructor(
    readonly code: GatewayErrorCode,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.outcomeUnknown = options.outcomeUnknown ?? false;
    this.httpStatus = options.httpStatus;
  }
}

/** One field problem of an invalid request, as the gateway's 400 `details[]` names them. */
export interface FieldProblem {
  /** Dotted path of the field, e.g. `pointOfSaleInformation.emv.tags`. */
  field: string;
  /** `MISSING_FIELD` or `INVALID_DATA` (the gateway's reasons), or a terminal-side reason. */
  reason: string;
}

/**
 * A request the client refuses to send (a required field of spec 001 is missing or a value is invalid): nothing was
 * sent, so `outcomeUnknown` is always false.
 */
export class GatewayInvalidRequestError extends GatewayError {
  override readonly name = 'GatewayInvalidRequestError';
  constructor(
    /** Dotted path of the first offending field. */
    readonly field: string,
    readonly reason: 'MISSING_FIELD' | 'INVALID_DATA',
    message: string,
    options: { details?: FieldProblem[]; cause?: unknown } = {},
  ) {
    super('GW_INVALID_REQUEST', message, { cause: options.cause });
    this.details = options.details ?? [{ field, reason }];
  }
  /** Every field problem found (the first is `field`). */
  readonly details: FieldProblem[];
}

/** The gateway refused the credentials (HTTP 401/403) or the authenticator could not produce them. */
export class GatewayAuthError extends GatewayError {
  override readonly name = 'GatewayAuthError';
  constructor(message: string, options: GatewayErrorOptions = {}) {
    super('GW_AUTH', message, options);
  }
}

/** A clock skew that explains a refusal of the credentials (src/gateway/clock-skew.ts, authClockSkew). */
export interface AuthClockSkew {
  /** The authentication method whose credentials the clock dates (`jwt`, `http-signature`). */
  method: string;
  /** This terminal's clock minus the gateway's, whole seconds (positive: this terminal's is ahead). */
  skewSeconds: number;
  /** How far the method's credentials may be dated from the gateway's clock, seconds. */
  toleranceSeconds: number;
}

/**
 * The gateway refused the credentials (HTTP 401) and this terminal's clock, measured against that answer's `Date`, is
 * further from the gateway's than the authentication method tolerates: the clock, not the keys, is the likely cause.
 * Like every refusal of the credentials, nothing was processed (`outcomeUnknown` false).
 */
export class GatewayClockSkewError extends GatewayError {
  override readonly name = 'GatewayClockSkewError';
  /** This terminal's clock minus the gateway's, whole seconds. */
  readonly clockSkewSeconds: number;
  readonly toleranceSeconds: number;
  constructor(httpStatus: number, skew: AuthClockSkew) {
    super(
      'GW_AUTH_CLOCK',
      `the gateway refused the credentials (HTTP ${httpStatus}): ${clockSkewText(skew.skewSeconds)}, more than the ` +
        `${skew.toleranceSeconds} s its ${skew.method} credentials allow — set the clock`,
      { httpStatus },
    );
    this.clockSkewSeconds = skew.skewSeconds;
    this.toleranceSeconds = skew.toleranceSeconds;
  }
}

/** No complete answer within the configured connect, headers or body timeout. */
export class GatewayTimeoutError extends GatewayError {
  override readonly name = 'GatewayTimeoutError';
  constructor(
    /** Which phase timed out: before the connection (nothing sent) or while waiting for the answer. */
    readonly phase: 'connect' | 'headers' | 'body',
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super('GW_TIMEOUT', message, { outcomeUnknown: phase !== 'connect', ...options });
  }
}

/** The gateway answered 5xx (502 is its documented "server error or timeout"): the outcome is unknown. */
export class GatewayServerError extends GatewayError {
  override readonly name = 'GatewayServerError';
  constructor(
    message: string,
    /** `reason` of the 502 body (SYSTEM_ERROR, SERVER_TIMEOUT, SERVICE_TIMEOUT) when readable. */
    readonly reason: string | undefined,
    options: GatewayErrorOptions = {},
  ) {
    super('GW_SERVER', message, { outcomeUnknown: true, ...options });
  }
}

/** The connection failed: before the request was written (`outcomeUnknown` false) or after (true). */
export class GatewayConnectionError extends GatewayError {
  override readonly name = 'GatewayConnectionError';
  constructor(message: string, options: GatewayErrorOptions = {}) {
    super('GW_CONNECTION', message, options);
  }
}

/**
 * The token endpoint of spec 000 failed (it answers HTTP 500 with an `error` code) or the grant is unusable.
 * `oauthError` is the endpoint's code (`invalid_client`, `server_error`, `merchant_not_active`, …) when it sent one.
 */
export class GatewayOAuthError extends GatewayError {
  override readonly name = 'GatewayOAuthError';
  constructor(
    code: 'GW_OAUTH_TOKEN' | 'GW_OAUTH_REAUTHORIZE' | 'GW_OAUTH_STATE' | 'GW_OAUTH_DENIED',
    message: string,
    readonly oauthError?: string,
    options: GatewayErrorOptions = {},
  ) {
    super(code, message, options);
  }
}
