/** The gateway client: the public surface of src/gateway (DESIGN.md layout; issue 5). */
export * from './errors.js';
export { newTransactionId } from './transaction-id.js';
export { requestTarget } from './request-target.js';
export {
  shouldRetry,
  backoffDelayMs,
  type RetryDecision,
  type AttemptFailure,
  type BackoffOptions,
} from './retry.js';
export {
  signRequest,
  createHttpSigner,
  type HttpSigner,
  signingString,
  digestHeader,
  decodeSharedSecret,
  assertSignedIdentity,
  type SignRequestInput,
  type SignedHeaders,
} from './auth/http-signature.js';
export {
  createJwt,
  certificateKid,
  rsaKeyFromPem,
  rsaKeyFromPkcs12,
  hmacKey,
  type JwtKey,
  type JwtRequest,
} from './auth/jwt.js';
export {
  createAuthenticator,
  httpSignatureAuthenticator,
  jwtAuthenticator,
  oauthAuthenticator,
  type Authenticator,
  type AuthRequest,
  type BearerTokenSource,
  type CreateAuthenticatorOptions,
} from './auth/authenticator.js';
export {
  OAuthTokenManager,
  encryptedFileTokenStore,
  buildConsentUrl,
  newConsentState,
  receiveConsent,
  REFRESH_GRACE_MS,
  oauthGrantState,
  type OAuthTokens,
  type TokenStore,
  type OAuthGrantState,
  type OAuthTokenManagerOptions,
  type ConsentResult,
} from './auth/oauth.js';
export {
  createOAuthAuthenticatorFromConfig,
  createOAuthTokenManagerFromConfig,
  oauthSettings,
  oauthTokenStoreFromConfig,
  type OAuthConfigOptions,
  type OAuthSettings,
  type OAuthSetup,
} from './auth/oauth-config.js';
export { classifyPaymentAnswer, type Outcome } from './outcome.js';
export {
  createGatewayClient,
  type GatewayClient,
  type GatewayClientOptions,
  type PaymentStatusRequest,
  type PaymentStatusResult,
} from './client.js';
export type { Timeouts, RetryOptions } from './transport.js';
export { ConnectionPool, ConnectionPoolError, type ExchangeDispatcher } from './connection-pool.js';
export * from './services/types.js';
export { preparePayment, type PaymentBuilderOptions } from './services/payments.js';
export {
  REQUIRED_FIELDS,
  missingFields,
  type RequiredField,
  type RequestContext,
} from './services/required-fields.js';
export { NEVER_SEND_TAGS, CONTACT_FOLLOW_ON_TAGS, inspectEmvTags } from './services/emv-checks.js';
export type { DccOfferRequest, DccOffer, DccOfferResult } from './services/dcc.js';
export {
  MAX_LIST_LIMIT,
  buildPaymentLinkBody,
  isLinkId,
  statusUpdateOf,
  type PaymentLink,
  type PaymentLinkInput,
  type PaymentLinkLineItem,
  type PaymentLinkPage,
} from './services/payment-links.js';
export {
  assertNoPersonalData,
  personalDataIn,
  PersonalDataError,
  type PersonalDataKind,
} from './personal-data.js';
export {
  AltPaymentAnswerError,
  ALT_REFUND_STATUSES,
  ALT_SALE_STATUSES,
  buildAltRefund,
  buildAltSale,
  buildAltStatus,
  parseAltSaleAnswer,
  type AltAnswerProblem,
  type AltCustomer,
  type AltMethod,
  type AltRefundStatus,
  type AltSaleResult,
  type AltSaleStatus,
  type AltStatusResult,
  type PreparedAltCall,
} from './services/alt-payments.js';
export {
  LinkNotificationError,
  LinkNotificationListener,
  LinkNotificationRelay,
  verifyLinkNotification,
  type LinkNotificationKey,
  type LinkNotificationListenerOptions,
  type LinkNotificationRelayOptions,
  type LinkNotificationProblem,
  type LinkNotificationRefusal,
  type LinkPaymentNotification,
} from './link-notifications.js';
