import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import {
  createAuthenticator,
  createOAuthAuthenticatorFromConfig,
  type Authenticator,
  type GatewayClient,
  type OAuthTokenManager,
  type Outcome,
} from '../gateway/index.js';
import { fileKeyProvider, type Forwarder, type ForwardOutcome, type SendOutcome } from '../journal/index.js';
import type { Logger } from '../log/index.js';
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

/** The configured gateway authentication, and the OAuth grant behind it when the method is `oauth`. */
export interface GatewayAuth {
  authenticator: Authenticator;
  oauth?: OAuthTokenManager;
}

/** The embedded sandbox's merchant key: the public demo key of the gateway's official SDK samples. */
export const SANDBOX_SHARED_SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';

/**
 * Builds `gateway.auth` of the configuration: HTTP signature, JWT, or the bearer tokens of an OAuth grant stored by
 * `parking-terminal oauth authorize` (encrypted under `offline.keyFile`). Key files are read now, so a wrong path
 * fails at start naming the key. The embedded sandbox's public demo secret is the default only with `kind: sandbox`.
 */
export function gatewayAuthFromConfig(
  config: Config,
  options: { baseUrl: string; cwd: string; logger?: Logger },
): GatewayAuth {
  if (config.gateway.auth.method === 'oauth') {
    const setup = createOAuthAuthenticatorFromConfig(config, {
      key: fileKeyProvider(resolve(options.cwd, config.offline.keyFile)).loadKey(),
      baseUrl: options.baseUrl,
      cwd: options.cwd,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    return { authenticator: setup.authenticator, oauth: setup.tokens };
  }
  return {
    authenticator: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      ...(config.gateway.kind === 'sandbox' ? { defaultSharedSecret: SANDBOX_SHARED_SECRET } : {}),
    }),
  };
}
