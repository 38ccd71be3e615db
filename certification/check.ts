/**
 * `certify check`: message-level validation of one captured session (DESIGN.md, "The parking-terminal command";
 * gateway.md §7, Go-live). Each message is identified, then judged by the data element, cross-edit, data mapping
 * and interchange compliance rules, the last against what the earlier messages of the session established.
 */
import {
  checkCrossEdits,
  checkDataElements,
  checkDataMapping,
  checkDcc,
  checkInterchange,
  SessionState,
  viewMessage,
} from './rules/index.js';
import { finding } from './rules/catalog.js';
import { CertifyInputError, parseSession, type MessageResult, type SessionResult } from './session.js';
import { identifyService } from './service.js';
import { isServiceName } from '../src/vocabulary/services.js';

export { CertifyInputError, parseSession } from './session.js';
export type { CapturedMessage, Finding, MessageResult, SessionResult } from './session.js';

/**
 * Validates a session.
 *
 * @param messages the session as parsed JSON: an array of `{method, path, body, response?}` in the order sent, or a
 *   capture file / evidence bundle holding that array in `messages` (see {@link parseSession}).
 * @throws CertifyInputError when the input is not a session (never for a defect inside a message: that is a finding).
 */
export function checkSession(messages: unknown): SessionResult {
  const session = parseSession(messages);
  const state = new SessionState();
  const results: MessageResult[] = session.map((message, index) => {
    const { service, targetId } = identifyService(message.method, message.path, message.body, (id) =>
      state.isRefundId(id),
    );
    const view = viewMessage(index, message, service, targetId);
    const findings =
      service === 'unknown'
        ? [
            finding(
              'DE-UNKNOWN-SERVICE',
              'path',
              `${message.method} ${message.path} is no service of the gateway`,
            ),
          ]
        : // Only the parking services have rules so far: a DCC offer, a payment link or a token request is
          // identified and passed through without findings.
          !isServiceName(service)
          ? []
          : [
              ...checkDataElements(view),
              ...checkCrossEdits(view, state),
              ...checkDataMapping(view),
              ...checkInterchange(view, state),
              ...checkDcc(view, state),
            ];
    state.record(view);
    return { index, service, findings };
  });
  const ok = results.every((m) => m.findings.every((f) => f.severity !== 'error'));
  return { ok, messages: results };
}

/**
 * Validates a session handed to `certify check` as evidence: a session in which no message was judged by the rules
 * (no message at all, or only messages of services without rules) is refused, never answered ok — an analyst would
 * read that ok as a pass of messages nobody checked.
 *
 * @throws CertifyInputError SESSION_EMPTY for a session without messages; SESSION_NOT_JUDGED when none of its messages
 *   is of a service the rules judge; the codes of {@link checkSession} for input that is not a session.
 */
export function checkEvidenceSession(messages: unknown): SessionResult {
  const result = checkSession(messages);
  if (result.messages.length === 0)
    throw new CertifyInputError(
      'SESSION_EMPTY',
      'the session has no messages: nothing was checked (a skipped case captures none)',
    );
  if (!result.messages.some((m) => isServiceName(m.service)))
    throw new CertifyInputError(
      'SESSION_NOT_JUDGED',
      `none of the session's ${result.messages.length} message(s) is of a service the rules judge (${[
        ...new Set(result.messages.map((m) => m.service)),
      ].join(', ')}): nothing was checked`,
    );
  return result;
}
