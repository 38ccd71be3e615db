import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import {
  createAuthenticator,
  createOAuthAuthenticatorFromConfig,
  oauthTokenStoreFromConfig,
  type Authenticator,
  type GatewayClient,
  type OAuthTokenManager,
  type Outcome,
} from '../gateway/index.js';
import type { PreparedRequest, ServiceName } from '../gateway/services/types.js';
import {
  fileKeyProvider,
  type ResealOutside,
  type Transmitter,
  type TransmitOutcome,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { PROCESSOR_UNAVAILABLE } from '../vocabulary/services.js';
import type { GatewayProblem } from './api.js';

/**
 * THE classification of a gateway client outcome for the journal (gateway.md §4), used by every send the terminal
 * makes — live payments, offline forwarding, recovery, `queue flush`:
 * - approved, declined, rejected: the gateway decided;
 * - `unknown` with `outcomeUnknown`: the request may have been processed (timeout after sending, reset after writing,
 *   5xx, undocumented status) — resolved by a timeout reversal or void, never resent;
 * - otherwise nothing was processed: when the gateway answered (401 and the like) it refused the request unprocessed
 *   (`rejected`, with the code); when it never answered (connection refused, connect timeout, no OAuth token) the
 *   request provably never reached it (`not-sent`: its transactionId is free again, e.g. for the offline queue).
 */
export function toSendOutcome(outcome: Outcome): TransmitOutcome {
  switch (outcome.kind) {
    // Literals of every field (undefined where absent): an object assembled from conditional spreads gets a shape of
    // its own, and each read of it afterwards is a slow lookup.
    case 'approved':
      return {
        kind: 'approved',
        gatewayId: outcome.gatewayId,
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        authorizedMinor: outcome.authorizedMinor,
        amountMinor: outcome.amountMinor,
        partial: outcome.partial,
        approvalCode: outcome.approvalCode,
      };
    case 'declined':
      return {
        kind: 'declined',
        ...(outcome.gatewayId !== undefined ? { gatewayId: outcome.gatewayId } : {}),
        status: outcome.status,
        httpStatus: outcome.httpStatus,
        ...(outcome.authorizedMinor !== undefined ? { authorizedMinor: outcome.authorizedMinor } : {}),
        reason: outcome.reason,
      };
    case 'rejected':
      return { kind: 'rejected', httpStatus: outcome.httpStatus, reason: outcome.reason };
    case 'unknown': {
      const { error } = outcome;
      if (error.outcomeUnknown)
        return {
          kind: 'unknown',
          ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
          error: { code: error.code, message: error.message },
        };
      const httpStatus = outcome.httpStatus ?? error.httpStatus;
      // Credentials refused (401, 403), or no access token to send it with (the token endpoint's own answer carries
      // the status then): the gateway processed nothing, as if the request never left — its transactionId is free,
      // and a payment stored offline stays stored until the credentials are mended, rather than being closed as
      // refused with its card data wiped.
      return httpStatus !== undefined && !processedNothing(error.code)
        ? { kind: 'rejected', httpStatus, reason: error.code }
        : { kind: 'not-sent', reason: error.code };
    }
  }
}

/** Codes of a `not-sent` outcome that mean the gateway cannot be reached (the offline queue may take the payment). */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['GW_CONNECTION', 'GW_TIMEOUT']);

/**
 * Codes that mean the gateway refused the terminal's credentials (401, 403) or the terminal could not produce them (a
 * key file it cannot read): the network is not at fault, the keys are. Nothing was processed (a `not-sent` outcome).
 */
export const CREDENTIALS_CODES: ReadonlySet<string> = new Set([
  'GW_AUTH',
  // A 401 that the terminal's clock explains (src/gateway/clock-skew.ts): refused credentials all the same.
  'GW_AUTH_CLOCK',
  // OAuth: the merchant must authorize the terminal again (grant expired or withdrawn), or refused the consent.
  'GW_OAUTH_REAUTHORIZE',
  'GW_OAUTH_DENIED',
  'GW_OAUTH_STATE',
]);

/**
 * Whether a failure with this code left the gateway's payments untouched although it may carry an HTTP status: the
 * credentials were refused, or the access token could not be had — the token endpoint answered an error
 * (`GW_OAUTH_TOKEN`, its status is the token request's), so the request itself was never sent.
 */
function processedNothing(code: string): boolean {
  return CREDENTIALS_CODES.has(code) || code === 'GW_OAUTH_TOKEN';
}

/**
 * Why the gateway could not be used, from the code of the last failed exchange, as the operator status bar and the
 * fleet's heartbeat say it: its credentials refused, its processor down (the gateway answers, refusing every payment
 * PROCESSOR_UNAVAILABLE for a while: nothing to look at in the network or the keys), or no answer at all.
 */
export function gatewayProblemOf(code: string | undefined): GatewayProblem {
  if (code === undefined) return 'unreachable';
  if (CREDENTIALS_CODES.has(code)) return 'credentials';
  return code === PROCESSOR_UNAVAILABLE ? 'processor' : 'unreachable';
}

/**
 * The journal's transmitter over the gateway client: the one way bytes reach the gateway, for live payments, the
 * offline queue, recovery, `queue flush` and the `queue.forward` benchmark. Each request is sent once, as journaled.
 */
export function gatewayTransmitter(gateway: GatewayClient): Transmitter {
  return {
    async transmit(request) {
      const outcome = await gateway.send({
        service: request.service as ServiceName,
        method: request.method as PreparedRequest['method'],
        path: request.path,
        body: request.body,
        comments: request.comments,
        transactionId: request.transactionId,
        referencedTransactionId: request.referencedTransactionId,
        amountMinor: request.amountMinor,
        currency: request.currency,
        moneyMoving: request.moneyMoving,
      });
      return toSendOutcome(outcome);
    },
    reachable: () => gateway.reachable(),
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
 * The one value sealed under the at-rest key outside the journal: the OAuth grant of `oauth.tokenStoreFile` (see
 * {@link gatewayAuthFromConfig}), sealed again under the new key by a key rotation. A store that does not open under
 * the previous key (none, or already sealed under the new one) is left as it is.
 */
export function oauthTokensResealer(config: Config, cwd: string): ResealOutside {
  return (from, to) => {
    if (from === undefined) return;
    const tokens = oauthTokenStoreFromConfig(config, { key: from, cwd }).load();
    if (tokens !== undefined) oauthTokenStoreFromConfig(config, { key: to, cwd }).save(tokens);
  };
}

/**
 * Builds `gateway.auth` of the configuration: HTTP signature, JWT, or the bearer tokens of an OAuth grant stored by
 * `parking-terminal oauth authorize` (encrypted under `offline.keyFile`). Key files are read now, so a wrong path
 * fails at start naming the key. The embedded sandbox's public demo secret is the default only with `kind: sandbox`.
 */
export function gatewayAuthFromConfig(
  config: Config,
  options: { baseUrl: string; cwd: string; logger?: Logger; now?: () => number },
): GatewayAuth {
  if (config.gateway.auth.method === 'oauth') {
    const setup = createOAuthAuthenticatorFromConfig(config, {
      key: fileKeyProvider(resolve(options.cwd, config.offline.keyFile)).loadKey(),
      baseUrl: options.baseUrl,
      cwd: options.cwd,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    return { authenticator: setup.authenticator, oauth: setup.tokens };
  }
  return {
    authenticator: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      ...(config.gateway.kind === 'sandbox' ? { defaultSharedSecret: SANDBOX_SHARED_SECRET } : {}),
    }),
  };
}
