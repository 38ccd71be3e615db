/**
 * What the terminal says of a customer screen in accessibility mode (EN 301 549 5.1.3; ADA §707.5; kiosk.md §2):
 * every instruction, prompt, error and all displayed information — title, message, amounts, the choices on screen
 * (durations with their prices; the currency choice with both amounts, the rate, the markup and the disclaimer), the
 * buttons and which key of the tactile keypad does what, the question "Do you need more time?" and the receipt — in
 * the screen's language, from the `speech.*` and `label.*` messages of the catalogues.
 *
 * Card data and masked entries: a card is spoken as "card ending 0 1 1 9" and never with more digits; a masked entry
 * (`****`, `••••`: a PIN, the hidden middle of a card number) is never spoken, not even its length; and every sentence
 * goes through {@link withoutCardData} (the receipts' guard), so that a card number a view carries by mistake is not
 * spoken either. Only the fields read below are spoken; what the customer presses is echoed by name only (a key of
 * the screen keypad, a control: `SpeechOutput.echo` in speech-output.ts), never what a field holds.
 *
 * Pure: no I/O, no clock.
 */
import {
  intlLocale,
  MESSAGE_KEYS,
  supportedLocale,
  translator,
  type MessageKey,
  type SupportedLocale,
  type Translator,
} from '../i18n/index.js';
import { currencyByAlpha, toDecimalString } from '../money/index.js';
import {
  eventKey,
  KEYPAD_MAIN_EVENTS,
  type CustomerView,
  type DisplayAmount,
  type UserEvent,
} from './api.js';
import { withoutCardData } from './receipts.js';

/**
 * One sentence of a screen; `id` tells a change from a restatement (a countdown's seconds are not a change). `locale`:
 * the language it is in, when not the screen's (a receipt issued in the terminal's language).
 */
interface Part {
  readonly id: string;
  readonly text: string;
  readonly locale?: SupportedLocale;
}

/** A stretch of speech in one language: said with that language's voice. */
export interface SpeechRun {
  readonly text: string;
  readonly locale: SupportedLocale;
}

/**
 * What to say: `text` now, `screen` (the whole screen) when the customer asks for it again; each also as its runs by
 * language (`runs`, `screenRuns`), in order — one run unless part of the screen is in another language than the
 * screen's (the receipt's lines, in the language it was issued in). `text` is empty (and `runs` none) when nothing is
 * to be said now but the screen the repeat key says has grown ({@link SILENT_PARTS}).
 */
export interface Spoken {
  readonly text: string;
  readonly screen: string;
  readonly runs: readonly SpeechRun[];
  readonly screenRuns: readonly SpeechRun[];
}

const KNOWN_KEYS: ReadonlySet<string> = new Set(MESSAGE_KEYS);

// A masked card number ("476173******0119", "**** **** **** 0119"): only its last four digits are spoken.
const MASKED_PAN = /(?:\d[\d ]*)?[*•●]+[*•● ]*(\d{4})(?!\d)/g;
// Any other masked run (a PIN as dots, the guard's own `****`): never spoken, not even its length.
const MASKED_RUN = /[*•●]{2,}/g;

/** Whether `text` holds a masked run (a PIN's dots, a card number's stars): an echo of it is not said at all. */
export function hasMaskedRun(text: string): boolean {
  MASKED_RUN.lastIndex = 0;
  return MASKED_RUN.test(text);
}

function message(tr: Translator, key: string, params?: Record<string, string | number>): string | undefined {
  return KNOWN_KEYS.has(key) ? tr.t(key as MessageKey, params) : undefined;
}

/** Digits one by one ("0 1 1 9"), so that no engine reads them as a number. */
function digitByDigit(digits: string): string {
  return digits.split('').join(' ');
}

/** "Card ending 0 1 1 9": the last four digits of a masked (or, by mistake, full) card number, nothing else. */
export function spokenCard(pan: string, tr: Translator): string | undefined {
  const digits = pan.replace(/\D/g, '');
  if (digits.length < 4) return undefined;
  return tr.t('speech.card', { digits: digitByDigit(digits.slice(-4)) });
}

/**
 * A run of five or more digits that is not part of a decimal number (a ticket number, a reference): an engine would
 * read "2026112413050001" as one number in the quadrillions.
 */
const LONG_DIGIT_RUN = /(?<![\d.,])\d{5,}(?![.,]\d)/g;

/**
 * A text as it may be spoken: card numbers (track data, any Luhn-valid number of a card network) removed by the
 * receipts' guard, masked card numbers reduced to their last four digits, any other masked run said as "hidden",
 * and long numbers (a ticket's) said one digit at a time.
 */
export function speakable(text: string, tr: Translator): string {
  const hidden = tr.t('speech.hidden');
  return withoutCardData(text)
    .replace(MASKED_PAN, (_, last: string) => (spokenCard(last, tr) ?? hidden).replace(/\.$/, ''))
    .replace(MASKED_RUN, hidden)
    .replace(LONG_DIGIT_RUN, digitByDigit)
    .replace(/\s+/g, ' ')
    .trim();
}

/** A sentence: ends with a stop, so that the engine pauses between parts. */
function sentence(text: string): string {
  const t = text.trim();
  return t.length === 0 || /[.!?;:؟。…]$/.test(t) ? t : `${t}.`;
}

/** "12.50 euros", "12,50 Euro": the amount with its currency named, which reads better than a symbol. */
export function spokenAmount(amount: DisplayAmount, tr: Translator): string {
  try {
    if (!currencyByAlpha(amount.currency)) return amount.text;
    return new Intl.NumberFormat(intlLocale(tr.locale), {
      style: 'currency',
      currency: amount.currency,
      currencyDisplay: 'name',
      minimumFractionDigits: currencyByAlpha(amount.currency)?.exponent,
    }).format(toDecimalString(amount.minor, amount.currency) as unknown as number);
  } catch {
    return amount.text;
  }
}

/** "1 hour and 30 minutes": the long units of the language, with its plural rules. */
export function spokenDuration(minutes: number, tr: Translator): string {
  const locale = intlLocale(tr.locale);
  const unit = (n: number, u: 'hour' | 'minute'): string =>
    new Intl.NumberFormat(locale, { style: 'unit', unit: u, unitDisplay: 'long' }).format(n);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  const units = [
    ...(hours > 0 ? [unit(hours, 'hour')] : []),
    ...(rest > 0 || hours === 0 ? [unit(rest, 'minute')] : []),
  ];
  return list(units, tr, 'conjunction');
}

function list(items: string[], tr: Translator, type: 'conjunction' | 'disjunction'): string {
  return new Intl.ListFormat(intlLocale(tr.locale), { style: 'long', type }).format(items);
}

/** The label of a plain button in the screen's language. */
function actionName(type: UserEvent['type'], tr: Translator): string | undefined {
  if (type === 'ENTER_TICKET' || type === 'ENTER_AMOUNT') return tr.t('label.continue');
  if (type === 'MORE_TIME') return tr.t('label.moreTime.yes');
  if (type === 'ALT_FIELD') return tr.t('label.alt.next');
  // The alternative methods are named one by one, by their labels (screenParts).
  if (type === 'ALT_METHOD') return undefined;
  return message(tr, `label.action.${type}`);
}

/** Events answered by a widget of their own (a keypad, a list of choices), not by a plain button. */
const CHOICE_EVENTS: ReadonlySet<UserEvent['type']> = new Set([
  'CHOOSE_DURATION',
  'CHOOSE_CURRENCY',
  'EXTEND',
]);
const NOT_BUTTONS: ReadonlySet<UserEvent['type']> = new Set([
  ...CHOICE_EVENTS,
  'SET_ACCESSIBILITY',
  'SET_LANGUAGE',
  'SPEECH',
  'MORE_TIME',
  'CANCEL',
]);

/** The keys: Enter (the main action, as renderer/src/keypad.ts maps it), Cancel, the other buttons, the choices. */
function keyParts(view: CustomerView, tr: Translator): Part[] {
  const parts: Part[] = [];
  const offered = (type: UserEvent['type']): boolean => view.actions.includes(type);
  const main = KEYPAD_MAIN_EVENTS.find((type) => offered(type) && (type !== 'MORE_TIME' || view.prompt));
  if (offered('ENTER_TICKET') || offered('ENTER_AMOUNT')) parts.push(part('typing', tr.t('speech.typing')));
  if (main) {
    const name = actionName(main, tr);
    if (name) parts.push(part(`enter:${main}`, tr.t('speech.enterKey', { action: name })));
  }
  if (offered('CANCEL')) {
    const name = view.prompt ? tr.t('label.moreTime.no') : tr.t('label.action.CANCEL');
    parts.push(part(`cancel:${Boolean(view.prompt)}`, tr.t('speech.cancelKey', { action: name })));
  }
  const others = view.actions
    .filter((type) => type !== main && !NOT_BUTTONS.has(type))
    .map((type) => actionName(type, tr))
    .filter((name): name is string => name !== undefined);
  if (others.length > 0)
    parts.push(part('buttons', tr.t('speech.buttons', { buttons: list(others, tr, 'conjunction') })));
  const choosing =
    (view.durations !== undefined &&
      view.durations.length > 0 &&
      (offered('CHOOSE_DURATION') || offered('EXTEND'))) ||
    (view.dcc !== undefined && offered('CHOOSE_CURRENCY'));
  const methods = view.altMethods !== undefined && view.altMethods.length > 0 && offered('ALT_METHOD');
  if (!typesDigits(view) && (choosing || methods || others.length > 0))
    parts.push(part('choose', tr.t('speech.chooseKeys')));
  // The digits type: Clear ← on the empty field leaves it, and 4 and 6 then move (renderer/src/keypad.ts).
  if (typesDigits(view)) parts.push(part('leave', tr.t('speech.leaveField')));
  return parts;
}

/**
 * Whether the screen's digits type into a field. Elsewhere the tactile keypad, which has no Tab, moves between the
 * controls with 4 and 6 (renderer/src/keypad.ts), which speech then names.
 */
function typesDigits(view: CustomerView): boolean {
  return ['ENTER_TICKET', 'ENTER_AMOUNT', 'ALT_FIELD'].some((type) =>
    view.actions.includes(type as UserEvent['type']),
  );
}

function part(id: string, text: string, locale?: SupportedLocale): Part {
  return locale === undefined ? { id, text } : { id, text, locale };
}

/**
 * The other languages on offer, with the speech keys (`speech-keys…`: not part of the screen the repeat key says): a
 * customer who cannot read the screen, nor perhaps this language, hears the name of their own said by its own voice,
 * then how to move to the Language button where the screen has not said it (`moving`: it has).
 */
function languageParts(view: CustomerView, tr: Translator, moving: boolean): Part[] {
  const others = (view.language?.available ?? []).flatMap((option) => {
    const locale = supportedLocale(option.locale);
    return locale === undefined || locale === tr.locale ? [] : [{ locale, name: option.name }];
  });
  if (others.length === 0) return [];
  const intro = sentence(speakable(tr.t('speech.languages', { button: tr.t('label.language') }), tr));
  return [
    part('speech-keys-languages', intro),
    ...others.map(({ locale, name }) =>
      part(`speech-keys-language:${locale}`, sentence(speakable(name, translator(locale))), locale),
    ),
    ...(moving || typesDigits(view) ? [] : [part('speech-keys-moving', tr.t('speech.chooseKeys'))]),
  ];
}

/** Every sentence of the screen, in reading order, each already {@link speakable}. */
function screenParts(view: CustomerView, tr: Translator, first: boolean): Part[] {
  const parts: Part[] = [];
  const add = (id: string, text: string | undefined): void => {
    if (text === undefined) return;
    const said = sentence(speakable(text, tr));
    if (said.length > 0) parts.push(part(id, said));
  };
  if (first) add('speech-keys', tr.t('speech.keys'));
  add('title', view.title);
  // The same words from a new event (a card refused again, a value refused again, a payment on the phone declined
  // again) are a new sentence: said again (eventKey).
  add(eventKey('message', view.messageEvent), view.message);
  if (view.dcc) {
    const { dcc } = view;
    if (dcc.title !== view.title) add('dcc-title', dcc.title);
    add(
      'dcc',
      // Both alike, each with its currency named, neither first as a default (gateway.md §5).
      tr.t('speech.dcc', { local: spokenAmount(dcc.local, tr), card: spokenAmount(dcc.card, tr) }),
    );
    add('dcc-rate', tr.t('speech.rate', { rate: dcc.rate }));
    add('dcc-markup', dcc.markup);
    // gateway.md §5: the disclaimer as the gateway wrote it.
    add('dcc-disclaimer', dcc.disclaimer);
  } else if (view.amount) add('amount', tr.t('speech.amount', { amount: spokenAmount(view.amount, tr) }));
  if (view.maskedPan !== undefined && !view.receipt) add('card', spokenCard(view.maskedPan, tr));
  if (view.durations && view.durations.length > 0) {
    const extending = view.screen === 'session';
    const options = view.durations.map((d) =>
      tr.t('speech.option', {
        choice: extending
          ? `${tr.t('label.extend')} ${spokenDuration(d.minutes, tr)}`
          : spokenDuration(d.minutes, tr),
        price: spokenAmount(d.amount, tr),
      }),
    );
    add('durations', tr.t('speech.choices', { choices: list(options, tr, 'disjunction') }));
  }
  if (view.session) {
    const { session } = view;
    add('session-id', `${tr.t('label.session.id')}: ${session.id}`);
    add('session-since', `${tr.t('label.session.since')}: ${session.startedAt}`);
    if (session.paidUntil !== undefined)
      add('session-until', `${tr.t('label.session.paidUntil')}: ${session.paidUntil}`);
    if (session.endedAt !== undefined)
      add('session-ended', `${tr.t('label.session.ended')}: ${session.endedAt}`);
    if (session.held) add('session-held', `${tr.t('label.session.held')}: ${spokenAmount(session.held, tr)}`);
  }
  if (view.payByPhone) {
    // The QR code's non-visual alternative (kiosk.md §4): the address read out, and the time left to pay.
    const link = view.payByPhone;
    add('link', tr.t('speech.payByPhone', { url: link.url }));
    if (link.notice !== undefined) add(eventKey('link-notice', link.noticeEvent), link.notice);
    add(
      `link-time:${link.expiresAt}`,
      tr.t('label.payByPhone.timeLeft', {
        time: spokenDuration(Math.max(1, Math.ceil(link.seconds / 60)), tr),
      }),
    );
  }
  if (view.altMethods && view.actions.includes('ALT_METHOD'))
    add(
      'alt-methods',
      tr.t('speech.buttons', {
        buttons: list(
          view.altMethods.map((m) => m.label),
          tr,
          'conjunction',
        ),
      }),
    );
  if (view.altField) {
    // The field and why its value was refused; never what was typed — the terminal does not have it
    // before Next, and an e-mail address or a name read out would be heard by whoever stands near.
    add('alt-step', `${view.altField.method}: ${view.altField.stepText}`);
    add(eventKey('alt-problem', view.altField.problemEvent), view.altField.problem);
  }
  if (view.altPending) {
    // The QR code's non-visual alternative, as for a payment link: the address read out; then the reference.
    add('alt-link', tr.t('speech.payByPhone', { url: view.altPending.url }));
    add('alt-reference', view.altPending.reference);
    add('alt-note', view.altPending.note);
  }
  if (view.receipt) {
    const { receipt } = view;
    // The receipt is in the language it was issued in, which may differ from the screen's (the terminal's, when the
    // printer cannot print the customer's script): its title and lines are said in that language, with its voice,
    // the card too ("Card ending …"), as the rest of the screen is said in the screen's.
    const own = translator(receipt.locale ?? tr.locale);
    const addReceipt = (id: string, text: string | undefined): void => {
      if (text === undefined) return;
      const said = sentence(speakable(text, own));
      if (said.length > 0) parts.push(part(id, said, own.locale === tr.locale ? undefined : own.locale));
    };
    const cardLabel = own.t('receipt.card');
    add('receipt', tr.t('speech.receipt'));
    if (receipt.title.trim().length > 0) addReceipt('receipt-title', receipt.title);
    receipt.lines.forEach((line, i) => {
      // The card line by its last four digits, whatever the line carries.
      if (line.label === cardLabel) addReceipt(`receipt-${i}`, spokenCard(line.value, own));
      else addReceipt(`receipt-${i}`, `${line.label}: ${line.value}`);
    });
    if (receipt.notice !== undefined) add('receipt-notice', receipt.notice);
    if (receipt.qr) add('receipt-qr', receipt.qr.alt);
  }
  if (view.prompt) {
    add(`prompt:${view.prompt.expiresAt}`, tr.t('label.moreTime.title'));
    const time = new Intl.NumberFormat(intlLocale(tr.locale), {
      style: 'unit',
      unit: 'second',
      unitDisplay: 'long',
    }).format(view.prompt.seconds);
    add(`prompt-time:${view.prompt.expiresAt}`, tr.t('label.moreTime.remaining', { time }));
  }
  for (const p of keyParts(view, tr)) add(p.id, p.text);
  // Last, not to hold the screen back: the other languages, with the speech keys of a customer's first screen.
  if (first)
    parts.push(
      ...languageParts(
        view,
        tr,
        parts.some((p) => p.id === 'choose'),
      ),
    );
  return parts;
}

function localeOf(view: CustomerView, locale: string | undefined): Translator {
  return translator(view.language?.current ?? locale ?? 'en_GB');
}

function joined(parts: readonly Part[], tr: Translator): string {
  // Once more over the whole: a card number split across two sentences is still caught.
  return speakable(parts.map((p) => p.text).join(' '), tr);
}

/**
 * `parts` as runs by language, in order: each run's sentences joined and guarded once more, as {@link joined} does
 * the whole. Should the guard of the whole find what the runs' guards do not (a card number split across a change of
 * language), the whole is one run in the screen's language: nothing is said that the whole would not say.
 */
function runsOf(parts: readonly Part[], tr: Translator): SpeechRun[] {
  const groups: { locale: SupportedLocale; parts: Part[] }[] = [];
  for (const p of parts) {
    const locale = p.locale ?? tr.locale;
    const last = groups.at(-1);
    if (last?.locale === locale) last.parts.push(p);
    else groups.push({ locale, parts: [p] });
  }
  const runs = groups
    .map((g) => ({ text: joined(g.parts, translator(g.locale)), locale: g.locale }))
    .filter((r) => r.text.length > 0);
  const whole = joined(parts, tr);
  if (runs.map((r) => r.text).join(' ') !== whole)
    return whole.length > 0 ? [{ text: whole, locale: tr.locale }] : [];
  return runs;
}

/**
 * The whole screen as spoken, in the view's language (`view.language.current`, else `locale`, else en_GB). `first`:
 * the first screen of this customer's accessibility mode, which starts with the speech keys.
 */
export function spokenScreen(view: CustomerView, locale?: string, first = false): string {
  const tr = localeOf(view, locale);
  return joined(screenParts(view, tr, first), tr);
}

/**
 * Parts that complete a screen already being said, never said by themselves when they appear: the receipt's QR code
 * is drawn some milliseconds after the result screen (its SVG is made asynchronously), and an utterance of its own
 * would cut off the result and the receipt being read ("Approved …") for "QR code holding this receipt". The repeat
 * key says the screen with it.
 */
const SILENT_PARTS: ReadonlySet<string> = new Set(['receipt-qr']);

/**
 * What to say for `view` when `previous` was the last screen spoken (undefined: nothing was said to this customer
 * yet): the whole screen when it is a new one or in another language, else only the sentences that are new (a new
 * message, the question, an error); nothing to say now, with the grown screen, when only {@link SILENT_PARTS} are new;
 * undefined when nothing new is on the screen.
 */
export function speechFor(
  view: CustomerView,
  previous: CustomerView | undefined,
  locale?: string,
): Spoken | undefined {
  const tr = localeOf(view, locale);
  const first = previous === undefined;
  const parts = screenParts(view, tr, first);
  const screenOnly = parts.filter((p) => !p.id.startsWith('speech-keys'));
  const screen = joined(screenOnly, tr);
  const screenRuns = runsOf(screenOnly, tr);
  const sameScreen =
    previous !== undefined &&
    previous.screen === view.screen &&
    localeOf(previous, locale).locale === tr.locale;
  if (!sameScreen) return { text: joined(parts, tr), screen, runs: runsOf(parts, tr), screenRuns };
  const before = new Set(screenParts(previous, tr, false).map((p) => `${p.id}\u0000${p.text}`));
  const fresh = parts.filter(
    (p) =>
      !before.has(`${p.id}\u0000${p.text}`) &&
      !p.id.startsWith('prompt-time:') &&
      !p.id.startsWith('link-time:'),
  );
  if (fresh.length > 0 && fresh.every((p) => SILENT_PARTS.has(p.id)))
    return { text: '', screen, runs: [], screenRuns };
  // The countdown is said with its question, never alone: its seconds change with every snapshot.
  const question = fresh.some((p) => p.id.startsWith('prompt:'));
  const said = question ? parts.filter((p) => fresh.includes(p) || p.id.startsWith('prompt-time:')) : fresh;
  if (said.length === 0) return undefined;
  return { text: joined(said, tr), screen, runs: runsOf(said, tr), screenRuns };
}
