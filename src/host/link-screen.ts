import QRCode from 'qrcode';
import { QR_ERROR_CORRECTION } from '../../devices/printer/index.js';
import type { LinkShown } from '../flows/index.js';
import type { Translator } from '../i18n/index.js';
import type { AltPendingView, PayByPhoneView } from './api.js';

/**
 * The pay-by-phone screen's payment link (issue 14; reference/kiosk.md §4): the QR code of the link's URL drawn by the
 * terminal — error correction M, a quiet zone of 4 modules, dark on light — with the URL and its domain as text and
 * the time left. The renderer scales it to whole CSS pixels per module (at least 4) and about 4.5 cm.
 */

/** Quiet zone, modules on each side (ISO/IEC 18004). */
export const QUIET_ZONE = 4;

export interface LinkQr {
  svg: string;
  /** Width in modules, quiet zone included. */
  modules: number;
}

/**
 * The QR code of `text` as SVG: one path of the dark modules over a light square, crisp edges.
 * @throws Error (qrcode's) when `text` cannot be drawn at error correction M: empty, or too long for the largest code.
 *   The screens draw through {@link linkQr}, which never throws.
 */
export function drawQr(text: string): LinkQr {
  const code = QRCode.create(text, { errorCorrectionLevel: QR_ERROR_CORRECTION });
  const size = code.modules.size;
  const total = size + 2 * QUIET_ZONE;
  let path = '';
  for (let row = 0; row < size; row += 1) {
    let col = 0;
    while (col < size) {
      if (!code.modules.get(row, col)) {
        col += 1;
        continue;
      }
      // One run of dark modules in the row as one rectangle.
      const start = col;
      while (col < size && code.modules.get(row, col)) col += 1;
      path += `M${start + QUIET_ZONE} ${row + QUIET_ZONE}h${col - start}v1h${start - col}z`;
    }
  }
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">` +
    `<rect width="${total}" height="${total}" fill="#ffffff"/><path fill="#000000" d="${path}"/></svg>`;
  return { svg, modules: total };
}

/** The last codes drawn, and texts found too long for one (a link's screen is drawn again with every snapshot). */
const drawn = new Map<string, LinkQr | undefined>();
const KEEP = 8;

/**
 * The QR code of a payment page's URL as the screens and the pay-later slip show it, or undefined when it cannot be
 * drawn (too long for a QR code at error correction M): then the URL is shown, and printed, as text alone. Never
 * throws, so that no answer of the gateway can break a snapshot or a print.
 */
export function linkQr(url: string): LinkQr | undefined {
  if (drawn.has(url)) return drawn.get(url);
  let qr: LinkQr | undefined;
  try {
    qr = drawQr(url);
  } catch {
    qr = undefined;
  }
  drawn.set(url, qr);
  while (drawn.size > KEEP) drawn.delete(drawn.keys().next().value as string);
  return qr;
}

/** The customer view's part of a payment link on screen, in the customer's language. */
export function payByPhoneView(
  link: LinkShown & { purpose: 'fee' | 'pay-later' },
  tr: Translator,
  nowMs: number = Date.now(),
): PayByPhoneView {
  const qr = linkQr(link.url);
  return {
    linkId: link.linkId,
    url: link.url,
    ...(link.domain !== undefined ? { domain: link.domain } : {}),
    ...(qr !== undefined ? { qr: { ...qr, alt: tr.t('label.payByPhone.qr') } } : {}),
    expiresAt: new Date(link.expiresAtMs).toISOString(),
    seconds: Math.max(0, Math.ceil((link.expiresAtMs - nowMs) / 1000)),
    purpose: link.purpose,
  };
}

/**
 * The alternative-method sale left pending (issue 14 item 5): its payment page drawn exactly as a payment link's QR
 * code, the URL as text, and the ticket's reference under which the sale is recorded.
 */
export function altPendingView(
  sale: { saleId: number; label: string; paymentUrl: string; reference: string },
  tr: Translator,
): AltPendingView {
  const qr = linkQr(sale.paymentUrl);
  return {
    saleId: sale.saleId,
    method: sale.label,
    url: sale.paymentUrl,
    ...(qr !== undefined ? { qr: { ...qr, alt: tr.t('label.alt.qr') } } : {}),
    reference: tr.t('label.alt.reference', { reference: sale.reference }),
    note: tr.t('label.alt.receipt'),
  };
}

/**
 * The screen's link with the notice of a payment on the phone that was declined (the link stays open for another):
 * `declinedPayments`, the desk's count of them while the last one was declined, is the notice's event, so that a
 * second card declined is told again in the same words.
 */
export function withDeclinedNotice(
  view: PayByPhoneView,
  declinedPayments: number | undefined,
  tr: Translator,
): PayByPhoneView {
  return declinedPayments !== undefined
    ? { ...view, notice: tr.t('payByPhone.declined'), noticeEvent: declinedPayments }
    : view;
}
