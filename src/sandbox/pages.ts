/**
 * The HTML the sandbox serves to browsers: the hosted payment page of a payment link (spec 002 gives its locales)
 * and the OAuth consent page (spec 000). Plain server-rendered forms: no script, every value escaped.
 */
import { toDecimalString } from '../money/index.js';
import type { StoredLink } from './links.js';

/** Locales of the hosted checkout (spec 002, Supported locales). */
export const HOSTED_LOCALES: readonly string[] = (
  'ar_AE ar_JO ar_QA bg_BG ca_ES zh_CN zh_HK zh_MO zh_SG zh_TW hr_HR cs_CZ da_DK nl_NL en_AE en_AU en_CA en_GB en_IE ' +
  'en_NZ en_PK en_QA en_US fi_FI fr_CA fr_FR de_AT de_DE el_GR he_IL hu_HU id_ID it_IT ja_JP km_KH ko_KR lo_LA ms_MY ' +
  'nb_NO pl_PL pt_BR ro_RO ru_RU sk_SK sl_SI es_AR es_CL es_CO es_ES es_MX es_PE es_US sv_SE tl_PH th_TH tr_TR uk_UA ' +
  'ur_PK vi_VN'
).split(' ');

const RTL = new Set(['ar_AE', 'ar_JO', 'ar_QA']);

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, locale: string, body: string): string {
  const lang = locale.replace('_', '-');
  const dir = RTL.has(locale) ? 'rtl' : 'ltr';
  return `<!doctype html>
<html lang="${escapeHtml(lang)}" dir="${dir}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.6rem 0 .2rem}input{width:100%;padding:.4rem;font-size:1rem}button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}.note{color:#555;font-size:.9rem}</style>
</head>
<body>
${body}
</body>
</html>`;
}

/** The hosted payment page of an ACTIVE link. */
export function paymentPage(link: StoredLink, locale: string, error?: string): string {
  const money = (minor: number): string => `${toDecimalString(minor, link.currency)} ${link.currency}`;
  const items = link.lineItems
    .map(
      (i) => `<li>${escapeHtml(i.productName)} × ${i.quantity}: ${escapeHtml(money(i.unitPriceMinor))}</li>`,
    )
    .join('');
  const amountField =
    link.linkType === 'DONATION'
      ? `<label for="amount">Amount (${escapeHtml(link.currency)})</label><input id="amount" name="amount" inputmode="decimal" required>
<p class="note">From ${escapeHtml(money(link.minMinor ?? 0))}${link.maxMinor !== undefined ? ` to ${escapeHtml(money(link.maxMinor))}` : ''}</p>`
      : `<p id="total">Total: <strong>${escapeHtml(money(link.totalMinor ?? 0))}</strong></p>`;
  return page(
    'Pay',
    locale,
    `<h1>Payment ${escapeHtml(link.id)}</h1>
<ul>${items}</ul>
${error ? `<p role="alert" id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/pay/${encodeURIComponent(link.id)}?locale=${encodeURIComponent(locale)}" autocomplete="off">
${amountField}
<label for="cardNumber">Card number</label><input id="cardNumber" name="cardNumber" inputmode="numeric" required>
<label for="expiry">Expiry (MM/YY)</label><input id="expiry" name="expiry" required>
<label for="securityCode">Security code</label><input id="securityCode" name="securityCode" inputmode="numeric" required>
<button type="submit" id="pay">Pay</button>
</form>
<p class="note">Sandbox gateway: test cards only.</p>`,
  );
}

/** The page after a payment attempt. */
export function resultPage(
  locale: string,
  approved: boolean,
  maskedPan: string,
  amount: string,
  reason?: string,
): string {
  return page(
    approved ? 'Paid' : 'Declined',
    locale,
    `<h1 id="result">${approved ? 'Payment approved' : 'Payment declined'}</h1>
<p>Card ${escapeHtml(maskedPan)} — ${escapeHtml(amount)}</p>
${reason ? `<p id="reason">${escapeHtml(reason)}</p>` : ''}`,
  );
}

/** A page for a link that cannot be paid (unknown or INACTIVE), or a consent request that is not valid. */
export function messagePage(locale: string, title: string, message: string): string {
  return page(title, locale, `<h1>${escapeHtml(title)}</h1><p id="message">${escapeHtml(message)}</p>`);
}

/** The OAuth consent page: Allow and Deny post the same query back with the decision. */
export function consentPage(clientId: string, scope: string, query: URLSearchParams): string {
  const hidden = [...query.entries()]
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return page(
    'Authorize application',
    'en_US',
    `<h1>Authorize ${escapeHtml(clientId)}</h1>
<p>The application asks to act for your merchant account${scope ? ` (scope: ${escapeHtml(scope)})` : ''}.</p>
<form method="post" action="/ebc2/oauth/authorize">${hidden}
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>`,
  );
}
