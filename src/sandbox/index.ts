/** The embedded sandbox gateway (DESIGN.md "Sandbox gateway"): the public surface of src/sandbox. */
export { startSandbox, DEMO_MERCHANT, type Sandbox, type SandboxOptions } from './server.js';
export type { MerchantKey } from './auth.js';
export type {
  Ledger,
  Consistency,
  ConsistencyOptions,
  ConsistencyProblem,
  MerchantStanding,
} from './ledger.js';
export type { LedgerTransaction, LedgerRequest, TxKind, TxAmounts } from './store.js';
export type { DecodedTag } from './emv-rules.js';
export {
  FAULT_KINDS,
  DECLINE_TRIGGERS,
  FAULT_TRIGGERS,
  PARTIAL_TRIGGER,
  DECLINING_CARDS,
  type Fault,
  type FaultKind,
} from './triggers.js';
export { DEFAULT_DCC_TABLE, type DccTable } from './dcc.js';
export { DEFAULT_OAUTH_CLIENT, type OAuthClient } from './oauth.js';
export { SandboxError } from './errors.js';
