/**
 * The sandbox's own error classes. A request the sandbox refuses becomes an HTTP answer built from one of these; a
 * sandbox that cannot start throws {@link SandboxError}. Callers branch on `code`, never on message text.
 */

/** One field named in a 400 answer (reference/gateway.md §4). */
export interface FieldDetail {
  /** Dotted path of the request field, e.g. `pointOfSaleInformation.catLevel`. */
  field: string;
  reason: 'MISSING_FIELD' | 'INVALID_DATA';
}

/**
 * A request the gateway answers with a documented error body. `status` is the HTTP status, `body` the JSON answer.
 * Thrown inside request handling only; the server turns it into the answer.
 */
export class GatewayAnswer extends Error {
  override readonly name = 'GatewayAnswer';
  constructor(
    readonly httpStatus: number,
    readonly body: Record<string, unknown>,
    /** Stable reason code (e.g. `MISSING_FIELD`, `EXCEEDS_AUTH_AMOUNT`), also in `body.reason`. */
    readonly code: string,
  ) {
    super(`${httpStatus} ${code}`);
  }
}

/** Failure to start or operate the sandbox itself (bad options, port in use, unreadable ledger file). */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  constructor(
    readonly code: 'SANDBOX_OPTIONS' | 'SANDBOX_LISTEN' | 'SANDBOX_STORE' | 'SANDBOX_TLS',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
