import { z } from 'zod';
import type {
  ApiError,
  OperatorAction,
  OperatorRequest,
  Result,
  UserEvent,
  WsMessage,
  WsRequest,
} from '../api.js';

/**
 * Validation of what a WebSocket client sends to the headless bridge. Everything that crosses the socket is
 * untrusted: each message is parsed and checked against these schemas before TerminalApi sees it, and anything else
 * is answered with a typed error (never a crash, never a hang).
 */

/** Largest WebSocket message the bridge accepts, in bytes; a bigger one closes the socket (close code 1009). */
export const MAX_MESSAGE_BYTES = 16 * 1024;

/** Highest request id accepted; ids are echoed back, so they stay small safe integers. */
const MAX_ID = 2 ** 31 - 1;

/** Amounts are integer minor units (DESIGN.md, money rule 5); the bound matches src/money's MAX_MINOR. */
const minor = z.number().int().nonnegative().max(999_999_999_999);
/** A parking duration or extension in minutes: at least one minute, at most a year. */
const minutes = z.number().int().min(1).max(525_600);

export const userEventSchema: z.ZodType<UserEvent> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('START') }),
  z.strictObject({ type: z.literal('ENTER_TICKET'), ticket: z.string().trim().min(1).max(64) }),
  z.strictObject({ type: z.literal('LOST_TICKET') }),
  z.strictObject({ type: z.literal('CHOOSE_DURATION'), minutes }),
  z.strictObject({ type: z.literal('ENTER_AMOUNT'), minor }),
  z.strictObject({ type: z.literal('CONFIRM') }),
  z.strictObject({ type: z.literal('PAY_BY_LINK') }),
  z.strictObject({ type: z.literal('ALT_METHOD'), profile: z.number().int().min(1).max(8) }),
  // The machine checks the value (spec 001 field rules); the bound only keeps the socket's message small.
  z.strictObject({ type: z.literal('ALT_FIELD'), value: z.string().max(512) }),
  z.strictObject({ type: z.literal('CHOOSE_CURRENCY'), currency: z.string().regex(/^[A-Z]{3}$/) }),
  z.strictObject({ type: z.literal('EXTEND'), minutes }),
  z.strictObject({ type: z.literal('END_SESSION') }),
  z.strictObject({ type: z.literal('TAP_ENTRY') }),
  z.strictObject({ type: z.literal('TAP_EXIT') }),
  // The operator PIN, checked by the terminal as operator mode checks it; bounded as an operator request's.
  z.strictObject({ type: z.literal('CREDIT'), pin: z.string().min(1).max(32) }),
  z.strictObject({ type: z.literal('CANCEL') }),
  z.strictObject({ type: z.literal('SET_ACCESSIBILITY'), on: z.boolean() }),
  z.strictObject({ type: z.literal('MORE_TIME') }),
  z.strictObject({ type: z.literal('SET_LANGUAGE'), locale: z.string().min(1).max(35) }),
  z.strictObject({ type: z.literal('SPEECH'), command: z.enum(['repeat', 'stop', 'louder', 'softer']) }),
  // A key's or a control's name: the bound only keeps the socket's message small.
  z.strictObject({
    type: z.literal('ECHO'),
    text: z.string().trim().min(1).max(200),
    // The control's own language (a BCP 47 tag); one the terminal has no voice for is said in the screen's.
    lang: z.string().min(1).max(35).optional(),
  }),
  // An utterance's id as the terminal gives them out (SpeechView.id: 1, 2, …).
  z.strictObject({
    type: z.literal('SPEECH_STATE'),
    id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    speaking: z.boolean(),
  }),
  // Nothing typed ever rides along: the strict object refuses any other field.
  z.strictObject({ type: z.literal('ACTIVITY') }),
  z.strictObject({ type: z.literal('DONE') }),
]);

/**
 * The notice customers read on the out-of-service screen while in service mode, from operator mode or the fleet's
 * `out-of-service`: trimmed, never empty (an empty one would blank the screen's message), as long as the screen shows.
 */
export const serviceNotice = z.string().trim().min(1).max(120);

/** A transactionId as the terminal makes them (and a hold's id: its authorization's); also the fleet's `release-stay`. */
export const transactionId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/);

/** The id a client gives one refund, so that the same refund submitted again is not carried out twice. */
const requestId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/);

/** A payment link id: its purchase number (spec 000), a path segment at the gateway. */
const linkId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/);

const operatorActionSchema: z.ZodType<OperatorAction> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('transactions'), limit: z.number().int().min(1).max(1000).optional() }),
  z.strictObject({
    type: z.literal('refund'),
    transactionId,
    amountMinor: minor.optional(),
    requestId: requestId.optional(),
  }),
  z.strictObject({ type: z.literal('void'), transactionId }),
  z.strictObject({ type: z.literal('flush-queue') }),
  z.strictObject({ type: z.literal('offline-declines') }),
  z.strictObject({ type: z.literal('offline-acknowledge'), transactionId }),
  z.strictObject({ type: z.literal('fee-shortfalls') }),
  z.strictObject({ type: z.literal('fee-shortfall-acknowledge'), transactionId }),
  z.strictObject({ type: z.literal('status') }),
  z.strictObject({
    type: z.literal('service'),
    task: z.enum(['on', 'off', 'reader-self-test', 'test-print', 'reprint', 'rerun-recovery']),
    reason: serviceNotice.optional(),
  }),
  z.strictObject({
    type: z.literal('audit'),
    since: z.iso.datetime({ offset: true }).optional(),
    limit: z.number().int().min(1).max(100_000).optional(),
    format: z.enum(['json', 'csv']).optional(),
  }),
  z.strictObject({
    type: z.literal('links'),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  }),
  z.strictObject({ type: z.literal('link-deactivate'), linkId }),
  z.strictObject({ type: z.literal('link-reactivate'), linkId }),
  z.strictObject({
    type: z.literal('alt-sales'),
    status: z
      .array(z.enum(['pending', 'settled', 'failed', 'abandoned', 'unknown']))
      .max(5)
      .optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  }),
  z.strictObject({
    type: z.literal('alt-refund'),
    saleId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    amountMinor: minor.optional(),
    requestId: requestId.optional(),
  }),
  z.strictObject({ type: z.literal('stays'), limit: z.number().int().min(1).max(1000).optional() }),
  // A hold's id is its pre-authorization's transactionId.
  z.strictObject({ type: z.literal('hold-release'), holdId: transactionId }),
]);

export const operatorRequestSchema: z.ZodType<OperatorRequest> = z.strictObject({
  pin: z.string().min(1).max(32),
  action: operatorActionSchema,
});

const id = z.number().int().min(0).max(MAX_ID);

export const wsRequestSchema: z.ZodType<WsRequest> = z.discriminatedUnion('method', [
  z.strictObject({ id, method: z.literal('snapshot') }),
  z.strictObject({ id, method: z.literal('send'), params: userEventSchema }),
  z.strictObject({ id, method: z.literal('operator'), params: operatorRequestSchema }),
]);

/** Stable codes of the errors the bridge itself answers with (TerminalApi's own codes pass through unchanged). */
export type BridgeErrorCode =
  | 'BAD_MESSAGE' // not a JSON text message
  | 'BAD_REQUEST' // JSON, but not a WsRequest
  | 'BUSY' // too many requests in flight on this socket
  | 'INTERNAL'; // TerminalApi threw instead of answering with a Result

/** The outcome of parsing one incoming message: a request to run, or the answer to send back at once. */
export type ParsedMessage = { ok: true; request: WsRequest } | { ok: false; reply: WsMessage };

function failure(code: BridgeErrorCode, message: string): Result<never> {
  const error: ApiError = { code, message };
  return { ok: false, error };
}

/** An error answer for request `id` (null when the message carried no usable id). */
export function errorReply(id: number | null, code: BridgeErrorCode, message: string): WsMessage {
  return { id, result: failure(code, message) };
}

/**
 * Parses one WebSocket message. Never throws: a binary frame, invalid JSON or a message that is not a WsRequest
 * becomes an error reply, echoing the message's id when it has a valid one so that the client can match it.
 */
export function parseMessage(data: string | Buffer, isBinary: boolean): ParsedMessage {
  if (isBinary)
    return { ok: false, reply: errorReply(null, 'BAD_MESSAGE', 'binary messages are not accepted') };
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    return { ok: false, reply: errorReply(null, 'BAD_MESSAGE', 'message is not valid JSON') };
  }
  const parsed = wsRequestSchema.safeParse(value);
  if (parsed.success) return { ok: true, request: parsed.data };
  const candidate = id.safeParse((value as { id?: unknown } | null)?.id);
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return {
    ok: false,
    reply: errorReply(
      candidate.success ? candidate.data : null,
      'BAD_REQUEST',
      `not a valid request${where}: ${issue?.message ?? 'invalid'}`,
    ),
  };
}
