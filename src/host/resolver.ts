import type { Config } from '../config/index.js';
import type { GatewayClient } from '../gateway/index.js';
import type { ResolutionBuilder, ResolutionRequest, ResolutionTarget } from '../journal/index.js';

/**
 * The timeout requests of journal recovery, built by the gateway client (gateway.md §7). Recovery journals and sends
 * them through the journal's one sender.
 */
export class GatewayResolutionBuilder implements ResolutionBuilder {
  private sequence = 0;

  constructor(
    private readonly gateway: GatewayClient,
    private readonly config: Config,
    private readonly now: () => Date,
  ) {}

  private code(): string {
    this.sequence += 1;
    return `${this.config.terminal.id}-R${this.now().getTime().toString(36)}-${this.sequence}`;
  }

  /** Its amount is the amount the original requested, in the currency it requested it in (gateway.md §2). */
  timeoutReversal(target: ResolutionTarget): ResolutionRequest {
    const amountMinor = target.amountMinor ?? target.entry.amountMinor;
    const currency = target.currency ?? target.entry.currency ?? this.config.terminal.currency;
    if (amountMinor === undefined) throw new Error(`entry ${target.entry.id} has no amount to reverse`);
    return this.gateway.prepare({
      service: 'timeout-reversal',
      code: this.code(),
      partner: this.config.terminal.partner,
      originalTransactionId: target.transactionId,
      amountMinor,
      currency,
    });
  }

  timeoutVoid(target: ResolutionTarget): ResolutionRequest {
    return this.gateway.prepare({
      service: 'timeout-void',
      code: this.code(),
      partner: this.config.terminal.partner,
      originalTransactionId: target.transactionId,
    });
  }
}
