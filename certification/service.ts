/**
 * Which gateway service a captured request is, from its method, path and body (gateway.md §2): the same table the
 * client's builders follow, written again here on purpose (DESIGN.md: a builder bug must not hide in the validator).
 */
import type { ServiceName } from '../src/vocabulary/services.js';

/** A parking service of the vocabulary, or a request of another module that the parking rules do not judge. */
export type CertifiedService =
  ServiceName | 'dcc-offer' | 'payment-link' | 'payment-status' | 'oauth-token' | 'unknown';

export interface IdentifiedService {
  service: CertifiedService;
  /** The gateway id in the path (`/pts/v2/payments/{id}/captures`), for follow-ons. */
  targetId?: string;
}

const VOID_BY_BASE: Readonly<Record<string, ServiceName>> = {
  payments: 'void-payment',
  captures: 'void-capture',
  refunds: 'void-refund',
  credits: 'void-credit',
};

function isZeroAmount(value: unknown): boolean {
  return typeof value === 'string' && /^0+(\.0+)?$/.test(value.trim());
}

/**
 * Identifies one request. `isRefundId` tells a void of a refund sent to `/pts/v2/credits/{id}/voids` (the refund
 * answer's `_links.void`, gateway.md §7) from a void of a standalone credit.
 */
export function identifyService(
  method: string,
  rawPath: string,
  body: Record<string, unknown>,
  isRefundId: (id: string) => boolean = () => false,
): IdentifiedService {
  const path = rawPath.split('?')[0] ?? rawPath;
  const parts = path.split('/').filter((p) => p !== '');
  if (parts[0] === 'vas' && parts[2] === 'currencyconversion') return { service: 'dcc-offer' };
  if (parts[0] === 'ipl') return { service: 'payment-link' };
  if (parts[0] === 'oauth2') return { service: 'oauth-token' };
  if (parts[0] !== 'pts' || parts[1] !== 'v2') return { service: 'unknown' };
  const [, , base, id, action] = parts;
  if (base === 'refresh-payment-status')
    return { service: 'payment-status', ...(id ? { targetId: id } : {}) };
  if (method === 'PATCH' && base === 'payments' && id !== undefined && action === undefined)
    return { service: 'incremental', targetId: id };
  if (method !== 'POST') return { service: 'unknown' };
  if (id === undefined) {
    if (base === 'payments') {
      const order = body.orderInformation as { amountDetails?: { totalAmount?: unknown } } | undefined;
      const processing = body.processingInformation as { capture?: unknown } | undefined;
      if (isZeroAmount(order?.amountDetails?.totalAmount) && processing?.capture !== true)
        return { service: 'avr' };
      return { service: processing?.capture === true ? 'sale' : 'preauth' };
    }
    if (base === 'reversals') return { service: 'timeout-reversal' };
    if (base === 'voids') return { service: 'timeout-void' };
    if (base === 'credits') return { service: 'credit' };
    return { service: 'unknown' };
  }
  if (parts.length !== 5) return { service: 'unknown' };
  if (base === 'payments' && action === 'reversals') return { service: 'reversal', targetId: id };
  if (base === 'payments' && action === 'captures') return { service: 'capture', targetId: id };
  if (base === 'payments' && action === 'refunds') return { service: 'refund-payment', targetId: id };
  if (base === 'captures' && action === 'refunds') return { service: 'refund-capture', targetId: id };
  if (action === 'voids' && base !== undefined) {
    const service = VOID_BY_BASE[base];
    if (service === undefined) return { service: 'unknown' };
    if (service === 'void-credit' && isRefundId(id)) return { service: 'void-refund', targetId: id };
    return { service, targetId: id };
  }
  return { service: 'unknown' };
}
