/**
 * The input and output of `certify check` (DESIGN.md, "The parking-terminal command"): a session is a JSON array of
 * captured messages in the order they were sent; each is judged on its own and against the session before it.
 */

/** One captured request, with the gateway's JSON answer when it is known. */
export interface CapturedMessage {
  method: string;
  path: string;
  body: Record<string, unknown>;
  response?: unknown;
  /** HTTP status of the answer, when the capture recorded it (null: no answer came). */
  httpStatus?: number | null;
  /** ISO 8601 time the request was sent, when the capture recorded it. */
  at?: string;
}

export type RuleCategory = 'data element' | 'cross-edit' | 'interchange compliance' | 'data mapping';
export type Severity = 'error' | 'warning';

/** One broken rule in one message. `field` is a dotted JSON path, or `pointOfSaleInformation.emv.tags[9F02]`. */
export interface Finding {
  rule: string;
  category: RuleCategory;
  severity: Severity;
  field: string;
  message: string;
}

export interface MessageResult {
  index: number;
  service: string;
  findings: Finding[];
}

export interface SessionResult {
  /** False when any finding is an error. */
  ok: boolean;
  messages: MessageResult[];
}

/** Stable codes of {@link CertifyInputError}. */
export type CertifyInputErrorCode =
  | 'SESSION_NOT_ARRAY'
  | 'SESSION_EMPTY'
  | 'SESSION_NOT_JUDGED'
  | 'CAPTURE_UNKNOWN_FORMAT'
  | 'MESSAGE_NOT_OBJECT'
  | 'MESSAGE_BAD_METHOD'
  | 'MESSAGE_BAD_PATH'
  | 'MESSAGE_BAD_BODY';

/** The session is not one `certify check` can read (exit 2): names the message by its index. */
export class CertifyInputError extends Error {
  override readonly name = 'CertifyInputError';
  constructor(
    readonly code: CertifyInputErrorCode,
    message: string,
    readonly index?: number,
  ) {
    super(message);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** The capture file format `certify run` writes, one case's session (DESIGN.md, "certify check … capture files"). */
export const CAPTURE_FORMAT = 'parking-terminal-capture/1';

/**
 * The messages of a session input: the plain JSON array, a capture file `{format, case, messages}`, or a case
 * evidence bundle (any object with a `messages` array of the same items).
 *
 * @throws CertifyInputError SESSION_NOT_ARRAY when none of these; CAPTURE_UNKNOWN_FORMAT for a `format` we do not read.
 */
function sessionItems(input: unknown): unknown[] {
  if (Array.isArray(input)) return input;
  if (isObject(input) && Array.isArray(input.messages)) {
    const format = input.format;
    if (format !== undefined && format !== CAPTURE_FORMAT)
      throw new CertifyInputError(
        'CAPTURE_UNKNOWN_FORMAT',
        `capture format ${JSON.stringify(format)} is not one certify check reads (${CAPTURE_FORMAT})`,
      );
    return input.messages;
  }
  throw new CertifyInputError(
    'SESSION_NOT_ARRAY',
    `a session is a JSON array of {method, path, body}, or a capture file {"format": "${CAPTURE_FORMAT}", "messages": [...]}`,
  );
}

/**
 * Reads a session from parsed JSON: an array of `{method, path, body, response?}`, or a capture file or evidence
 * bundle holding such an array in `messages` (their items may also carry `httpStatus` and `at`).
 *
 * @throws CertifyInputError naming the first message that is not `{method, path, body, response?}`.
 */
export function parseSession(input: unknown): CapturedMessage[] {
  return sessionItems(input).map((item: unknown, index): CapturedMessage => {
    if (!isObject(item))
      throw new CertifyInputError('MESSAGE_NOT_OBJECT', `message ${index} is not an object`, index);
    const { method, path, body, response, httpStatus, at } = item;
    if (typeof method !== 'string' || !METHODS.has(method.toUpperCase()))
      throw new CertifyInputError(
        'MESSAGE_BAD_METHOD',
        `message ${index}: "method" must be an HTTP method`,
        index,
      );
    if (typeof path !== 'string' || !path.startsWith('/'))
      throw new CertifyInputError('MESSAGE_BAD_PATH', `message ${index}: "path" must start with /`, index);
    const upper = method.toUpperCase();
    const extra = {
      ...(response !== undefined && response !== null ? { response } : {}),
      ...(typeof httpStatus === 'number' || httpStatus === null ? { httpStatus } : {}),
      ...(typeof at === 'string' ? { at } : {}),
    };
    // GET and DELETE carry no body; every other request must send a JSON object (a void sends at least {}).
    if (body === undefined && (upper === 'GET' || upper === 'DELETE'))
      return { method: upper, path, body: {}, ...extra };
    if (!isObject(body))
      throw new CertifyInputError(
        'MESSAGE_BAD_BODY',
        `message ${index}: "body" must be a JSON object`,
        index,
      );
    return { method: upper, path, body, ...extra };
  });
}
