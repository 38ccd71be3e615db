import jsQRModule from 'jsqr';
import { describe, expect, it } from 'vitest';
import { translator } from '../i18n/index.js';
import type { CustomerView, PayByPhoneView } from './api.js';
import {
  altPendingView,
  drawQr,
  linkQr,
  payByPhoneView,
  QUIET_ZONE,
  withDeclinedNotice,
} from './link-screen.js';
import { speechFor, spokenScreen } from './speech.js';

const jsQR = jsQRModule as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

/** The SVG's dark rectangles painted into an RGBA bitmap, `scale` pixels per module, as a camera would see them. */
function rasterize(svg: string, scale: number): { data: Uint8ClampedArray; size: number } {
  const total = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const size = total * scale;
  const data = new Uint8ClampedArray(size * size * 4).fill(255);
  const path = /<path[^>]* d="([^"]*)"/.exec(svg)?.[1] ?? '';
  for (const m of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    const [x, y, w] = [Number(m[1]), Number(m[2]), Number(m[3])];
    for (let py = y * scale; py < (y + 1) * scale; py += 1)
      for (let px = x * scale; px < (x + w) * scale; px += 1) {
        const i = (py * size + px) * 4;
        data[i] = data[i + 1] = data[i + 2] = 0;
      }
  }
  return { data, size };
}

describe('the payment link on screen', () => {
  it('draws a QR code that reads back as the URL: dark on light, with a quiet zone of 4 modules', () => {
    const url = 'http://127.0.0.1:41234/pay/202611241305N0042';
    const qr = drawQr(url);
    expect(qr.svg).toContain('fill="#ffffff"');
    expect(qr.svg).toContain('fill="#000000"');
    const image = rasterize(qr.svg, 4);
    expect(jsQR(image.data, image.size, image.size)?.data).toBe(url);
    // Nothing dark in the quiet zone.
    const starts = [...qr.svg.matchAll(/M(\d+) (\d+)h(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(Math.min(...starts.map(([x]) => x!))).toBe(QUIET_ZONE);
    expect(Math.min(...starts.map(([, y]) => y!))).toBe(QUIET_ZONE);
    expect(qr.modules % 4).toBe(1); // 21 + 4k modules of a QR code, plus 2 × 4 of quiet zone
  });

  it('gives the time left, the URL and the QR code its name in the customer language', () => {
    const view = payByPhoneView(
      {
        linkId: 'T1',
        url: 'http://127.0.0.1:1/pay/T1',
        domain: '127.0.0.1:1',
        expiresAtMs: 1_000_000 + 90_500,
        purpose: 'fee',
      },
      translator('de_DE'),
      1_000_000,
    );
    expect(view).toMatchObject({ seconds: 91, domain: '127.0.0.1:1', purpose: 'fee' });
    expect(view.qr?.alt).toBe('QR-Code des Zahlungslinks');
  });

  it('shows a URL too long for any QR code as text alone, never throwing out of the snapshot', () => {
    // qrcode throws "The amount of data is too big to be stored in a QR Code" for it.
    const url = `https://pay.example/L1?pad=${'x'.repeat(4_000)}`;
    expect(() => drawQr(url)).toThrow();
    expect(linkQr(url)).toBeUndefined();
    const tr = translator('en_GB');
    const view = payByPhoneView({ linkId: 'L1', url, expiresAtMs: Date.now() + 60_000, purpose: 'fee' }, tr);
    expect(view).toMatchObject({ linkId: 'L1', url });
    expect(view.qr).toBeUndefined();
    const pending = altPendingView(
      { saleId: 1, label: 'Bank transfer', paymentUrl: url, reference: 'R1' },
      tr,
    );
    expect(pending).toMatchObject({ url });
    expect(pending.qr).toBeUndefined();
    expect(linkQr('https://pay.example/L1')?.modules).toBeGreaterThan(0);
  });

  it('reads the address out in accessibility mode, with the time left', () => {
    const url = 'http://127.0.0.1:1/pay/T1';
    const screen: CustomerView = {
      screen: 'pay-by-phone',
      title: 'Pay by phone',
      message: 'Scan the QR code with your phone and pay on the page that opens.',
      actions: ['CANCEL'],
      payByPhone: {
        linkId: 'T1',
        url,
        qr: { svg: '', modules: 33, alt: 'QR code of the payment link' },
        expiresAt: new Date(Date.now() + 300_000).toISOString(),
        seconds: 300,
        purpose: 'fee',
      },
    };
    const said = spokenScreen(screen, 'en_GB');
    expect(said).toContain(url);
    expect(said).toContain('Time left: 5 minutes');
  });
});

describe('a payment on the phone that was declined', () => {
  const DECLINED = 'The payment on your phone was declined. You can try again with another card.';

  it('is told on the screen (and spoken) while the link stays open for another card', () => {
    const tr = translator('en_GB');
    const view = payByPhoneView(
      { linkId: 'T1', url: 'http://127.0.0.1:1/pay/T1', expiresAtMs: Date.now() + 60_000, purpose: 'fee' },
      tr,
    );
    expect(withDeclinedNotice(view, undefined, tr).notice).toBeUndefined();
    const told = withDeclinedNotice(view, 1, tr);
    expect(told.notice).toBe(DECLINED);
    const said = spokenScreen(
      { screen: 'pay-by-phone', title: 'Pay by phone', message: '', actions: ['CANCEL'], payByPhone: told },
      'en_GB',
    );
    expect(said).toContain('was declined');
  });

  it('is told again for a payment declined again, never for the same decline shown again', () => {
    const tr = translator('en_GB');
    const link = payByPhoneView(
      { linkId: 'T1', url: 'http://127.0.0.1:1/pay/T1', expiresAtMs: Date.now() + 60_000, purpose: 'fee' },
      tr,
    );
    const screen = (payByPhone: PayByPhoneView): CustomerView => ({
      screen: 'pay-by-phone',
      title: 'Pay by phone',
      message: 'Scan the code',
      actions: ['CANCEL'],
      payByPhone,
    });
    const waiting = screen(link);
    const once = screen(withDeclinedNotice(link, 1, tr));
    expect(once.payByPhone).toMatchObject({ notice: DECLINED, noticeEvent: 1 });
    expect(speechFor(once, waiting)?.text).toBe(DECLINED);
    // The same decline in a later snapshot: nothing new.
    expect(speechFor(screen(withDeclinedNotice(link, 1, tr)), once)).toBeUndefined();
    // Another card on the phone, declined too: the same words, said again.
    const twice = screen(withDeclinedNotice(link, 2, tr));
    expect(twice.payByPhone).toMatchObject({ notice: DECLINED, noticeEvent: 2 });
    expect(speechFor(twice, once)?.text).toBe(DECLINED);
    expect(speechFor(screen(withDeclinedNotice(link, 2, tr)), twice)).toBeUndefined();
  });
});
