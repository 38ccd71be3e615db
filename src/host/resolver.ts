import type { Config } from '../config/index.js';
import type { GatewayClient } from '../gateway/index.js';
import { failpoint } from './failpoints.js';
import { toSendOutcome } from './gateway-adapters.js';
import type { ResolutionRequest, ResolutionTarget, Resolver, SendOutcome } from '../journal/index.js';

/**
 * The gateway side of journal recovery: timeout reversals and timeout voids built by the gateway client and sent
 * once per attempt (recovery journals each attempt before it calls `send`).
 */
export class GatewayResolver implements Resolver {
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

  async send(request: ResolutionRequest): Promise<SendOutcome> {
    const outcome = await this.gateway.send({
      service: request.service as 'timeout-void',
      method: request.method as 'POST',
      path: request.path,
      body: request.body,
      comments: request.comments,
      ...(request.referencedTransactionId
        ? { referencedTransactionId: request.referencedTransactionId }
        : {}),
      ...(request.amountMinor !== undefined ? { amountMinor: request.amountMinor } : {}),
      ...(request.currency ? { currency: request.currency } : {}),
      moneyMoving: request.moneyMoving,
    });
    failpoint('recovery.sent');
    const result = toSendOutcome(outcome);
    // A timeout request that never left is simply not answered yet: recovery retries it.
    return result.kind === 'not-sent' ? { kind: 'unknown', error: { code: result.reason } } : result;
  }
}
