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
import { parseSession, type MessageResult, type SessionResult } from './session.js';
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
