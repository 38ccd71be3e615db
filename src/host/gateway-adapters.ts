import type { GatewayClient, Outcome } from '../gateway/index.js';
import type { Forwarder, ForwardOutcome, SendOutcome } from '../journal/index.js';
import { failpoint } from './failpoints.js';

/**
 * The gateway client's outcome as the journal's recovery and offline queue take it. `notSent` is the outcome of a
 * request that provably never reached the gateway (connection refused before a byte was written).
 */
export function toSendOutcome(outcome: Outcome): SendOutcome | { kind: 'not-sent'; reason: string } {
  switch (outcome.kind) {
    case 'approved':
      return {
        kind: 'approved',
        gatewayId: outcome.gatewayId,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        ...(outcome.authorizedMinor !== undefined ? { authorizedMinor: outcome.authorizedMinor } : {}),
      };
    case 'declined':
      return {
        kind: 'declined',
        ...(outcome.gatewayId !== undefined ? { gatewayId: outcome.gatewayId } : {}),
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        reason: outcome.reason,
      };
    case 'rejected':
      return { kind: 'rejected', httpStatus: outcome.httpStatus, reason: outcome.reason };
    case 'unknown':
      return outcome.error.outcomeUnknown
        ? { kind: 'unknown', error: { code: outcome.error.code, message: outcome.error.message } }
        : { kind: 'not-sent', reason: outcome.error.code };
  }
}

/**
 * Forwards stored offline payments with the gateway client: the one mapping used by the terminal host,
 * `parking-terminal queue flush` and the `queue.forward` benchmark. Each stored request is sent once, as stored.
 */
export function gatewayForwarder(gateway: GatewayClient): Forwarder {
  return {
    async forward(req): Promise<ForwardOutcome> {
      const outcome = await gateway.send({
        service: req.service as 'sale',
        method: req.method as 'POST',
        path: req.path,
        body: req.body,
        comments: req.comments,
        transactionId: req.transactionId,
        amountMinor: req.amountMinor,
        currency: req.currency,
        moneyMoving: true,
      });
      failpoint('offline.forwarded');
      return toSendOutcome(outcome);
    },
  };
}
