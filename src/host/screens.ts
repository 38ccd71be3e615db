import type { Config } from '../config/index.js';
import type { ReaderHealth } from '../../devices/index.js';
import type { ReceiptData } from '../flows/index.js';
import type { CustomerView } from './api.js';
import { customerView, type FlowRuntime } from './flow-runtime.js';

/** Where the terminal is in its life: a card is taken only when `ready` (money safety rule 3). */
export type HostPhase = 'starting' | 'recovering' | 'ready' | 'out-of-service' | 'closed';

/**
 * The customer's screen: the machine's view while the terminal can take a card, otherwise a plain screen saying why
 * not (starting, checking earlier payments, out of service) — never operator detail.
 */
export function customerScreen(input: {
  phase: HostPhase;
  runtime: FlowRuntime | undefined;
  config: Config;
  readerHealth: ReaderHealth;
  lastReceipt: ReceiptData | undefined;
}): CustomerView {
  const { phase, runtime, config, readerHealth } = input;
  if (phase === 'out-of-service' || phase === 'closed')
    return {
      screen: 'out-of-service',
      title: 'Out of service',
      message: 'This machine cannot take payments at the moment. Please use another machine.',
      actions: [],
    };
  if (phase !== 'ready' || !runtime)
    return {
      screen: phase === 'recovering' ? 'recovering' : 'starting',
      title: phase === 'recovering' ? 'One moment' : 'Starting',
      message:
        phase === 'recovering'
          ? 'Checking earlier payments before taking a new card'
          : 'The terminal is starting',
      actions: [],
    };
  const customer = customerView(runtime, config, input.lastReceipt);
  if (customer.screen === 'idle' && readerHealth === 'connecting')
    return {
      ...customer,
      screen: 'starting',
      title: 'Starting',
      message: 'Connecting to the card reader',
      actions: [],
    };
  if (customer.screen === 'idle' && (readerHealth === 'disconnected' || readerHealth === 'reconnecting'))
    return {
      ...customer,
      screen: 'out-of-service',
      title: 'Out of service',
      message: 'The card reader is not available. Please use another machine.',
      actions: [],
    };
  return customer;
}
