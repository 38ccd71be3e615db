import type { CustomerView, DccChoice, DurationOption, Receipt, UserEvent } from '../../src/host/api.js';
import { showValue, value } from './bidi.js';
import { button, h, type Child } from './dom.js';
import {
  actionLabel,
  DCC_TITLE,
  dccComplete,
  defaultTitle,
  formatKeyed,
  isWaitScreen,
  keyedMinor,
  labelFor,
  linkQrPixels,
  timeLeftText,
  pressKey,
  svgDataUrl,
} from './view-model.js';

/** What the customer area needs from the app. */
export interface CustomerContext {
  /** Sends one user event; the app blocks the area until the answer comes. */
  send(event: UserEvent): void;
  locale: string;
  /** What the customer typed on this screen so far; kept by the app across re-renders of the same screen. */
  drafts: {
    ticket: string;
    amountDigits: string;
    /** The alternative method's field being typed (`altField`) and what was typed in it (never sent until Next). */
    alt: string;
    altField: string;
    /** The operator PIN typed for a standalone credit (attended), until sent or the screen changes. */
    pin: string;
  };
}

/** Longest ticket or plate the entry field takes. */
const MAX_TICKET = 32;

/** The customer area for one snapshot: title, message, amount, the screen's widget and its buttons. */
export function renderCustomer(view: CustomerView, ctx: CustomerContext): HTMLElement {
  const label = (key: string, fallback: string): string => labelFor(view.labels, key, fallback);
  if (view.language) {
    // The whole document speaks the customer's language: screen readers pick the voice, ar_AE lays out right to left.
    document.documentElement.lang = view.language.lang;
    document.documentElement.dir = view.language.direction;
  }
  const offered = new Set(view.actions);
  const dccScreen = view.screen === 'choose-currency';
  const title = dccScreen ? view.dcc?.title || DCC_TITLE : view.title || defaultTitle(view.screen);
  const body: Child[] = [];

  if (offered.has('ENTER_TICKET')) body.push(ticketEntry(ctx, label));
  if (offered.has('ENTER_AMOUNT')) body.push(amountEntry(view, ctx, label));
  if (offered.has('CHOOSE_DURATION') && view.durations)
    body.push(durationList(view.durations, 'CHOOSE_DURATION', ctx));
  if (offered.has('CHOOSE_CURRENCY')) body.push(currencyChoice(view, ctx));
  if (view.session) body.push(sessionPanel(view.session, label));
  if (offered.has('EXTEND') && view.durations) body.push(durationList(view.durations, 'EXTEND', ctx));
  if (view.screen === 'present-card') body.push(h('div', { class: 'card-slot', testid: 'card-slot' }));
  if (isWaitScreen(view.screen)) body.push(h('div', { class: 'spinner', testid: 'spinner' }));
  if (view.payByPhone) body.push(payByPhone(view.payByPhone, label));
  if (view.altField && offered.has('ALT_FIELD')) body.push(altFieldEntry(view.altField, ctx, label));
  if (view.altPending) body.push(altPending(view.altPending, label));
  if (view.receipt) body.push(receipt(view.receipt));
  if (offered.has('CREDIT')) body.push(creditStart(ctx, label));

  const buttons = view.actions
    .flatMap((type) => {
      // The alternative methods, each by its label, in the choice beside the card and pay by phone.
      if (type === 'ALT_METHOD') return altMethodButtons(view.altMethods ?? [], ctx);
      // "Do you need more time?" is asked, and answered, in its own dialog (accessibility.ts).
      if (type === 'MORE_TIME') return null;
      const fallback = actionLabel(type);
      if (fallback === null) return null;
      const kind = type === 'CANCEL' ? 'btn btn-secondary' : 'btn btn-primary';
      // `actionLabel` returned a label, so the event carries no data.
      return button(
        label(`action.${type}`, fallback),
        `action-${type}`,
        () => ctx.send({ type } as UserEvent),
        kind,
      );
    })
    .filter((b) => b !== null);

  return h(
    'section',
    { class: `customer screen-${view.screen}`, testid: 'customer', attrs: { 'data-screen': view.screen } },
    h('h1', { class: 'title', testid: 'customer-title', text: title }),
    view.message ? h('p', { class: 'message', testid: 'customer-message', text: view.message }) : null,
    // On the DCC screen the amounts appear only inside the two equal options (gateway.md §5).
    view.amount && !dccScreen
      ? h('p', { class: 'amount', testid: 'customer-amount' }, value(view.amount.text))
      : null,
    view.maskedPan && !dccScreen
      ? h(
          'p',
          { class: 'masked-pan', testid: 'masked-pan' },
          `${label('card', 'Card')} `,
          value(view.maskedPan, { testid: 'masked-pan-number' }),
        )
      : null,
    ...body,
    buttons.length > 0 ? h('div', { class: 'actions', testid: 'actions' }, ...buttons) : null,
    view.language ? languageChoice(view.language, ctx, label) : null,
  );
}

type Label = (key: string, fallback: string) => string;

/**
 * The language button, on every screen: opens the list of languages, each by its own name and in its own `lang`, and
 * sends SET_LANGUAGE; the terminal answers with the screen in that language.
 */
function languageChoice(
  language: NonNullable<CustomerView['language']>,
  ctx: CustomerContext,
  label: Label,
): HTMLElement {
  const list = h(
    'div',
    {
      class: 'language-list',
      testid: 'language-list',
      attrs: { role: 'group', hidden: '', id: 'language-list', 'aria-label': label('language', 'Language') },
    },
    ...language.available.map((option) => {
      const b = button(
        option.name,
        `language-${option.locale}`,
        () => ctx.send({ type: 'SET_LANGUAGE', locale: option.locale }),
        'btn btn-secondary language-option',
      );
      b.lang = option.lang;
      if (option.locale === language.current) b.setAttribute('aria-current', 'true');
      return b;
    }),
  );
  const toggle = button(
    label('language', 'Language'),
    'language-button',
    () => {
      list.hidden = !list.hidden;
      toggle.setAttribute('aria-expanded', String(!list.hidden));
    },
    'btn btn-secondary language-button',
  );
  toggle.setAttribute('aria-expanded', 'false');
  toggle.setAttribute('aria-controls', 'language-list');
  return h('nav', { class: 'language', testid: 'language' }, toggle, list);
}

/**
 * Attended: a standalone credit (money out to the card presented, linked to no sale) starts only with the operator
 * PIN, which the terminal checks as operator mode does. The field has a visible label (not only a name for screen
 * readers: the attendant must see what the box is for); what is typed survives a redraw of the idle screen as the
 * other drafts do, and is forgotten once sent or once the screen changes. Credit with the field empty sends nothing
 * and puts the attendant in the field.
 */
function creditStart(ctx: CustomerContext, label: Label): HTMLElement {
  const pin = h('input', {
    class: 'pin-input',
    testid: 'credit-pin',
    attrs: {
      id: 'credit-pin',
      type: 'password',
      inputmode: 'numeric',
      autocomplete: 'off',
      maxlength: '32',
    },
  });
  pin.value = ctx.drafts.pin;
  pin.addEventListener('input', () => {
    ctx.drafts.pin = pin.value;
  });
  const submit = (): void => {
    if (pin.value.length === 0) {
      pin.focus();
      return;
    }
    const typed = pin.value;
    pin.value = '';
    ctx.drafts.pin = '';
    ctx.send({ type: 'CREDIT', pin: typed });
  };
  pin.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') submit();
  });
  return h(
    'div',
    { class: 'entry credit-start', testid: 'credit-start' },
    h(
      'label',
      { class: 'field-label', attrs: { for: 'credit-pin' } },
      h('span', { text: label('creditPin', 'Operator PIN') }),
      pin,
    ),
    button(label('action.CREDIT', 'Credit a card'), 'action-CREDIT', submit, 'btn btn-secondary'),
  );
}

function ticketEntry(ctx: CustomerContext, label: Label): HTMLElement {
  const input = h('input', {
    class: 'ticket-input',
    testid: 'ticket-input',
    attrs: {
      type: 'text',
      inputmode: 'text',
      autocomplete: 'off',
      autocapitalize: 'characters',
      spellcheck: 'false',
      maxlength: String(MAX_TICKET),
      'aria-label': label('ticketInput', 'Ticket number or licence plate'),
    },
  });
  input.value = ctx.drafts.ticket;
  const submit = (): void => {
    const ticket = input.value.trim();
    if (ticket.length > 0) ctx.send({ type: 'ENTER_TICKET', ticket });
  };
  input.addEventListener('input', () => {
    ctx.drafts.ticket = input.value;
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') submit();
  });
  const keys = ['1', '2', '3', '4', '5', '6', '7', '8', '9', 'back', '0', 'clear'].map((key) =>
    keyButton(
      key,
      label,
      `ticket-key-${key}`,
      () => {
        if (key === 'back') input.value = input.value.slice(0, -1);
        else if (key === 'clear') input.value = '';
        else if (input.value.length < MAX_TICKET) input.value += key;
        ctx.drafts.ticket = input.value;
      },
      'btn key',
    ),
  );
  return h(
    'div',
    { class: 'entry', testid: 'ticket-entry' },
    input,
    keypad(keys, label),
    button(label('continue', 'Continue'), 'action-ENTER_TICKET', submit, 'btn btn-primary'),
  );
}

/** The on-screen keypad, one named group (the tactile keypad does the same through keypad.ts). */
function keypad(keys: HTMLElement[], label: Label): HTMLElement {
  return h(
    'div',
    { class: 'keypad', attrs: { role: 'group', 'aria-label': label('keypad', 'Keypad') } },
    ...keys,
  );
}

/** A keypad key: digits as themselves, `clear` by its label, `back` as ⌫ named by its label for screen readers. */
function keyButton(
  key: string,
  label: Label,
  testid: string,
  onClick: () => void,
  kind: string,
): HTMLElement {
  if (key === 'clear') return button(label('keypad.clear', 'Clear'), testid, onClick, kind);
  const b = button(key === 'back' ? '⌫' : key, testid, onClick, kind);
  if (key === 'back') b.setAttribute('aria-label', label('keypad.back', 'Delete last character'));
  return b;
}

function amountEntry(view: CustomerView, ctx: CustomerContext, label: Label): HTMLElement {
  const currency = view.amount?.currency;
  const display = showValue(
    h('output', { class: 'keyed-amount', testid: 'amount-display' }),
    formatKeyed(ctx.drafts.amountDigits, currency, ctx.locale),
  );
  // It shows 0.00 when nothing is keyed: the tactile keypad's Clear leaves the field only then (keypad.ts).
  const markEmpty = (): void => {
    display.dataset.empty = String(keyedMinor(ctx.drafts.amountDigits) === 0);
  };
  markEmpty();
  const keys = ['1', '2', '3', '4', '5', '6', '7', '8', '9', 'clear', '0', 'back'].map((key) =>
    keyButton(
      key,
      label,
      `amount-key-${key}`,
      () => {
        ctx.drafts.amountDigits = pressKey(ctx.drafts.amountDigits, key);
        showValue(display, formatKeyed(ctx.drafts.amountDigits, currency, ctx.locale));
        markEmpty();
      },
      'btn key',
    ),
  );
  return h(
    'div',
    { class: 'entry', testid: 'amount-entry' },
    display,
    keypad(keys, label),
    button(
      label('continue', 'Continue'),
      'action-ENTER_AMOUNT',
      () => {
        const minor = keyedMinor(ctx.drafts.amountDigits);
        if (minor > 0) ctx.send({ type: 'ENTER_AMOUNT', minor });
      },
      'btn btn-primary',
    ),
  );
}

function durationList(
  options: DurationOption[],
  type: 'CHOOSE_DURATION' | 'EXTEND',
  ctx: CustomerContext,
): HTMLElement {
  const prefix = type === 'EXTEND' ? 'extend' : 'duration';
  return h(
    'div',
    { class: 'choices', testid: `${prefix}-list` },
    ...options.map((o) =>
      h(
        'button',
        {
          class: 'btn choice',
          testid: `${prefix}-${o.minutes}`,
          attrs: { type: 'button' },
          onClick: () => ctx.send({ type, minutes: o.minutes }),
        },
        value(o.label, { class: 'choice-label' }),
        value(o.amount.text, { class: 'choice-amount' }),
      ),
    ),
  );
}

/**
 * The DCC choice (gateway.md §5): two options of equal size and identical style, neither pre-selected nor
 * highlighted, each showing its amount and currency; no yes/no wording; the rate with the markup directly under it;
 * the gateway's disclaimer exactly as sent. When the terminal's offer lacks any of these, conversion is not offered:
 * the local currency is the only option.
 */
function currencyChoice(view: CustomerView, ctx: CustomerContext): HTMLElement {
  const dcc = view.dcc;
  const option = (amount: DccChoice['local']): HTMLElement =>
    h(
      'button',
      {
        class: 'btn dcc-option',
        testid: `dcc-option-${amount.currency}`,
        attrs: { type: 'button' },
        onClick: () => ctx.send({ type: 'CHOOSE_CURRENCY', currency: amount.currency }),
      },
      value(amount.text, { class: 'dcc-amount' }),
      value(amount.currency, { class: 'dcc-currency' }),
    );
  if (!dcc || !dccComplete(dcc)) {
    const local = dcc?.local ?? view.amount;
    return h('div', { class: 'dcc dcc-local-only', testid: 'dcc-screen' }, local ? option(local) : null);
  }
  return h(
    'div',
    { class: 'dcc', testid: 'dcc-screen' },
    h('div', { class: 'dcc-options', testid: 'dcc-options' }, option(dcc.local), option(dcc.card)),
    h(
      'div',
      { class: 'dcc-rate-block' },
      showValue(h('p', { class: 'dcc-rate', testid: 'dcc-rate' }), dcc.rate),
      h('p', { class: 'dcc-markup', testid: 'dcc-markup', text: dcc.markup }),
    ),
    // The gateway's words as it sent them, in their own language and direction.
    showValue(h('p', { class: 'dcc-disclaimer', testid: 'dcc-disclaimer' }), dcc.disclaimer),
  );
}

function sessionPanel(session: NonNullable<CustomerView['session']>, label: Label): HTMLElement {
  const row = (name: string, text: string | undefined, testid: string): Child =>
    text === undefined
      ? null
      : h('div', { class: 'row', testid }, h('dt', { text: name }), h('dd', {}, value(text)));
  return h(
    'dl',
    { class: 'session', testid: 'session' },
    row(label('session.id', 'Session'), session.id, 'session-id'),
    row(label('session.since', 'Since'), session.startedAt, 'session-started'),
    row(label('session.paidUntil', 'Paid until'), session.paidUntil, 'session-paid-until'),
    row(label('session.ended', 'Ended'), session.endedAt, 'session-ended'),
    row(label('session.held', 'Held on card'), session.held?.text, 'session-held'),
  );
}

/** Receipt values up to this many characters are kept on one line. */
const SHORT_VALUE = 16;

/**
 * The receipt as printed (same fields, same order, in the receipt's own language and direction, which may differ from
 * the screen's), the notice when no paper receipt comes, and the e-receipt QR code with its text alternative: its
 * description and, when it carries a link, the link as text.
 */
function receipt(r: Receipt): HTMLElement {
  return h(
    'div',
    { class: 'receipt', testid: 'receipt', attrs: { lang: r.lang, dir: r.direction } },
    h('h2', { text: r.title }),
    r.notice !== undefined
      ? h('p', {
          class: 'receipt-notice',
          testid: 'receipt-notice',
          attrs: { role: 'status' },
          text: r.notice,
        })
      : null,
    r.lines.length > 0
      ? h(
          'dl',
          {},
          ...r.lines.map((l) =>
            h(
              'div',
              { class: 'row', testid: 'receipt-line' },
              h('dt', { text: l.label }),
              // A short value (an amount, a date, a time) never breaks; a long reference wraps anywhere.
              h('dd', l.value.length <= SHORT_VALUE ? { class: 'short' } : {}, value(l.value)),
            ),
          ),
        )
      : null,
    r.qr
      ? h(
          'figure',
          { class: 'qr', testid: 'receipt-link' },
          h('img', {
            testid: 'receipt-qr',
            attrs: { src: svgDataUrl(r.qr.svg), alt: r.qr.alt, width: '220', height: '220' },
          }),
          r.qr.url !== undefined ? showValue(h('figcaption'), r.qr.url) : null,
        )
      : null,
  );
}

/**
 * Pay by phone (reference/kiosk.md §4): the payment link's QR code as the terminal drew it (dark on light, its quiet
 * zone inside), in whole CSS pixels per module — at least 4, about 4.5 cm in all — the URL as text under it, left to
 * right in every language (it is an address, not a sentence), and the time left, ticking every second.
 */
function payByPhone(link: NonNullable<CustomerView['payByPhone']>, label: Label): HTMLElement {
  const expiresAt = Date.parse(link.expiresAt);
  const left = (): number =>
    Number.isNaN(expiresAt) ? link.seconds : Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000));
  const remaining = (): string =>
    label('payByPhone.timeLeft', 'Time left: {time}').replace('{time}', timeLeftText(left()));
  const timer = h('p', {
    class: 'link-countdown',
    testid: 'pay-by-phone-countdown',
    text: remaining(),
    attrs: { role: 'timer' },
  });
  // The screen is put on the page as soon as it is drawn (main.ts), and drawn again at every snapshot: a countdown no
  // longer on the page at its tick — replaced within its first second too — stops, or each redraw would leave one
  // ticking for the life of the page.
  const tick = setInterval(() => {
    if (!timer.isConnected) {
      clearInterval(tick);
      return;
    }
    timer.textContent = remaining();
  }, 1000);
  return h(
    'div',
    { class: 'pay-by-phone', testid: 'pay-by-phone' },
    qrFigure(
      link.qr,
      link.url,
      label('payByPhone.url', 'Or open this address on your phone'),
      'pay-by-phone',
    ),
    // Read out by the screen announcer, once for each payment declined (`noticeEvent`), not at every redraw.
    link.notice !== undefined
      ? h('p', { class: 'link-notice', testid: 'pay-by-phone-notice', text: link.notice })
      : null,
    timer,
  );
}

/**
 * A payment page's QR code as the terminal drew it (dark on light, its quiet zone inside) in whole CSS pixels per
 * module — at least 4, about 4.5 cm in all — with the URL as text under it, left to right in every language (it is an
 * address, not a sentence). Pay by phone and the alternative methods' pending sale show it alike. Without a code (the
 * host could not draw one for this URL) the URL is shown alone.
 */
function qrFigure(
  qr: { svg: string; modules: number; alt: string } | undefined,
  url: string,
  urlLabel: string,
  testPrefix: string,
): HTMLElement {
  const size = qr === undefined ? '' : String(linkQrPixels(qr.modules));
  return h(
    'figure',
    { class: 'link-qr', testid: `${testPrefix}-link` },
    qr !== undefined &&
      h('img', {
        testid: `${testPrefix}-qr`,
        attrs: { src: svgDataUrl(qr.svg), alt: qr.alt, width: size, height: size },
      }),
    h(
      'figcaption',
      {},
      h('span', { class: 'link-url-label', text: urlLabel }),
      h('span', {
        class: 'link-url',
        testid: `${testPrefix}-url`,
        text: url,
        attrs: { dir: 'ltr', lang: 'en' },
      }),
    ),
  );
}

/** The alternative methods beside the card and pay by phone, each a button by its label. */
function altMethodButtons(
  methods: NonNullable<CustomerView['altMethods']>,
  ctx: CustomerContext,
): HTMLElement[] {
  return methods.map((m) =>
    button(
      m.label,
      `alt-method-${m.profile}`,
      () => ctx.send({ type: 'ALT_METHOD', profile: m.profile }),
      'btn btn-primary',
    ),
  );
}

/** Longest value the on-screen keyboard takes (spec 001 e-mail: 254). */
const MAX_ALT_VALUE = 254;

/**
 * One field an alternative method asks for, on an on-screen keyboard (letters, digits, the characters of e-mail
 * addresses and names; Shift for capitals) operable by touch, by Tab and Enter from the tactile keypad, and by typing
 * on a physical keyboard into the field. Nothing is autocompleted or remembered: the value is personal data, sent
 * only with Next, and the terminal checks it (its problem comes back in the customer's language).
 */
function altFieldEntry(
  field: NonNullable<CustomerView['altField']>,
  ctx: CustomerContext,
  label: Label,
): HTMLElement {
  if (ctx.drafts.altField !== field.field) {
    ctx.drafts.altField = field.field;
    ctx.drafts.alt = '';
  }
  const problemId = 'alt-field-problem';
  const input = h('input', {
    class: 'alt-input',
    testid: 'alt-input',
    attrs: {
      type: 'text',
      inputmode: field.inputMode,
      autocomplete: 'off',
      autocapitalize: field.inputMode === 'text' ? 'words' : 'off',
      spellcheck: 'false',
      maxlength: String(MAX_ALT_VALUE),
      'aria-label': field.label,
      ...(field.problem !== undefined ? { 'aria-invalid': 'true', 'aria-describedby': problemId } : {}),
    },
  });
  input.value = ctx.drafts.alt;
  let shift = false;
  const letterKeys: HTMLElement[] = [];
  const type = (text: string): void => {
    if (input.value.length + text.length > MAX_ALT_VALUE) return;
    input.value += text;
    ctx.drafts.alt = input.value;
  };
  const submit = (): void => ctx.send({ type: 'ALT_FIELD', value: input.value });
  input.addEventListener('input', () => {
    ctx.drafts.alt = input.value;
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') submit();
  });
  const key = (text: string, testid: string): HTMLElement =>
    button(text, testid, () => type(shift ? text.toUpperCase() : text), 'btn key alt-key');
  const rows = [
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'],
    ['q', 'w', 'e', 'r', 't', 'y', 'u', 'i', 'o', 'p'],
    ['a', 's', 'd', 'f', 'g', 'h', 'j', 'k', 'l', '@'],
    ['z', 'x', 'c', 'v', 'b', 'n', 'm', '.', '-', '_'],
  ].map((row) =>
    h(
      'div',
      { class: 'alt-keyboard-row' },
      ...row.map((k) => {
        const b = key(k, `alt-key-${k}`);
        if (/^[a-z]$/.test(k)) letterKeys.push(b);
        return b;
      }),
    ),
  );
  const shiftKey = button(
    '⇧',
    'alt-key-shift',
    () => {
      shift = !shift;
      shiftKey.setAttribute('aria-pressed', String(shift));
      for (const b of letterKeys)
        b.textContent = shift ? (b.textContent ?? '').toUpperCase() : (b.textContent ?? '').toLowerCase();
    },
    'btn key alt-key',
  );
  shiftKey.setAttribute('aria-pressed', 'false');
  shiftKey.setAttribute('aria-label', label('alt.shift', 'Capital letters'));
  const back = keyButton(
    'back',
    label,
    'alt-key-back',
    () => {
      input.value = input.value.slice(0, -1);
      ctx.drafts.alt = input.value;
    },
    'btn key alt-key',
  );
  const clear = keyButton(
    'clear',
    label,
    'alt-key-clear',
    () => {
      input.value = '';
      ctx.drafts.alt = '';
    },
    'btn key alt-key',
  );
  const space = button(
    label('alt.space', 'Space'),
    'alt-key-space',
    () => type(' '),
    'btn key alt-key alt-key-space',
  );
  const extra = h(
    'div',
    { class: 'alt-keyboard-row' },
    shiftKey,
    key("'", 'alt-key-apostrophe'),
    key('+', 'alt-key-plus'),
    space,
    back,
    clear,
  );
  return h(
    'div',
    { class: 'entry alt-entry', testid: 'alt-entry' },
    h('p', { class: 'alt-step', testid: 'alt-step' }, `${field.method} · ${field.stepText}`),
    input,
    // Read out by the screen announcer, once for each value refused (`problemEvent`), not at every redraw.
    field.problem !== undefined
      ? h('p', { class: 'alt-problem', testid: 'alt-problem', attrs: { id: problemId }, text: field.problem })
      : null,
    h(
      'div',
      {
        class: 'alt-keyboard',
        testid: 'alt-keyboard',
        attrs: { role: 'group', 'aria-label': label('alt.keyboard', 'Keyboard') },
      },
      ...rows,
      extra,
    ),
    button(label('alt.next', 'Next'), 'action-ALT_FIELD', submit, 'btn btn-primary'),
  );
}

/**
 * An alternative-method sale left pending: its payment page as a QR code (drawn like a payment link's) with the URL as
 * text, the ticket's reference, and where the receipt goes; the customer may leave (Done).
 */
function altPending(pending: NonNullable<CustomerView['altPending']>, label: Label): HTMLElement {
  return h(
    'div',
    { class: 'pay-by-phone alt-pending', testid: 'alt-pending' },
    qrFigure(pending.qr, pending.url, label('alt.url', 'Or open this address on your phone'), 'alt-pending'),
    h('p', { class: 'alt-reference', testid: 'alt-reference' }, value(pending.reference)),
    h('p', { class: 'alt-note', testid: 'alt-note', text: pending.note }),
  );
}
