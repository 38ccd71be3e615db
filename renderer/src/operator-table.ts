import { button, h } from './dom.js';

/**
 * The operator panel's lists (transactions, audit log, stored payments not collected, fee shortfalls, payment links,
 * alternative sales) as one kind of table, named by `label` (a visible caption with `options.caption`, for a list no
 * heading of the panel names). A window narrower than the panel's full width (1,100 px, say) wraps the long values — transaction ids, gateway references, card numbers (`code` cells) — and the row's
 * controls inside their cells; a window too narrow even for that scrolls the table in its own region, which takes
 * keyboard focus (arrow keys scroll it, the focus ring shows it), never the whole panel sideways with the last
 * columns' buttons out of sight.
 */
export function operatorTable(
  label: string,
  testid: string,
  head: string[],
  rows: HTMLElement[],
  options: { caption?: boolean } = {},
): HTMLElement {
  return h(
    'div',
    { class: 'table-region', attrs: { role: 'region', 'aria-label': label, tabindex: '0' } },
    h(
      'table',
      { class: 'transactions', testid, attrs: { 'aria-label': label } },
      // Shown where no heading of the panel names the list already: lists opened one under another read apart.
      ...(options.caption ? [h('caption', { class: 'table-caption', text: label })] : []),
      h('thead', {}, h('tr', {}, ...head.map((t) => h('th', { text: t, attrs: { scope: 'col' } })))),
      h('tbody', {}, ...rows),
    ),
  );
}

/** A cell of one long value without spaces (an id, a reference, a masked card number) that may break anywhere. */
export function codeCell(text: string): HTMLElement {
  return h('td', { class: 'code', text });
}

/**
 * A cell of an ISO 8601 time (`2030-01-01T08:00:00.000Z`) that wraps, when it must, between the date and the time of
 * day — never at the date's hyphens, never inside a number. The text is the time as the terminal sent it.
 */
export function timeCell(iso: string): HTMLElement {
  const at = iso.indexOf('T');
  if (at <= 0) return h('td', { class: 'nowrap', text: iso });
  return h(
    'td',
    {},
    h('span', { class: 'nowrap', text: iso.slice(0, at) }),
    h('wbr'),
    h('span', { class: 'nowrap', text: iso.slice(at) }),
  );
}

/**
 * A cell of a stable code (`PARTIAL_APPROVAL`, `EXPIRED_CARD`) that wraps, when it must, after its underscores only.
 */
export function reasonCell(code: string): HTMLElement {
  const parts = code.split(/(?<=_)/);
  return h('td', {}, ...parts.flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part])));
}

/** The cell of a row's controls (a refund amount, its buttons), which wrap onto more lines when the cell is narrow. */
export function actionsCell(...controls: HTMLElement[]): HTMLElement {
  return h('td', {}, h('div', { class: 'txn-actions' }, ...controls));
}

/**
 * The question the panel asks before an action that moves money or releases a hold (a refund, a void, a release): one
 * press arms the action, this block confirms it — `confirm` carries it out, Back (`back`) disarms it. `testid` names
 * the block, each button's `testid` the button.
 */
export function operatorConfirm(
  testid: string,
  question: string,
  confirm: { label: string; testid: string; onClick: () => void },
  back: { testid: string; onClick: () => void },
): HTMLElement {
  return h(
    'div',
    { class: 'operator-confirm', testid },
    h('p', { text: question }),
    button(confirm.label, confirm.testid, confirm.onClick, 'btn btn-primary'),
    button('Back', back.testid, back.onClick, 'btn btn-secondary'),
  );
}

/** A section of the operator panel under its own heading (`headingId` names it for assistive technology). */
export function operatorSection(
  headingId: string,
  title: string,
  ...children: (HTMLElement | null)[]
): HTMLElement {
  return h(
    'section',
    { class: 'operator-section', attrs: { 'aria-labelledby': headingId } },
    h('h3', { text: title, attrs: { id: headingId } }),
    ...children,
  );
}
