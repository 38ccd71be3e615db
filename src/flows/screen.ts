/**
 * The customer screens a machine state stands for: the same names as `Screen` of src/host/api.ts (which src/flows may
 * not import), minus the host's own 'starting', 'recovering' and 'out-of-service'. Every state of every model
 * machine carries exactly one of them as a tag; `describeView` (src/flows/view.ts) reads it.
 */
export type FlowScreen =
  | 'idle'
  | 'enter-ticket'
  | 'choose-duration'
  | 'enter-amount'
  | 'confirm'
  | 'choose-currency'
  | 'present-card'
  | 'processing'
  | 'approved'
  | 'declined'
  | 'session'
  | 'pay-by-phone'
  | 'alt-details'
  | 'alt-pending'
  | 'error';

export const FLOW_SCREENS: readonly FlowScreen[] = [
  'idle',
  'enter-ticket',
  'choose-duration',
  'enter-amount',
  'confirm',
  'choose-currency',
  'present-card',
  'processing',
  'approved',
  'declined',
  'session',
  'pay-by-phone',
  'alt-details',
  'alt-pending',
  'error',
];
