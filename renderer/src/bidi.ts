import { h, type Props } from './dom.js';

/**
 * Values inside customer text, isolated from the text's direction (Unicode bidi; W3C "Inline markup and bidirectional
 * text in HTML"). In a right-to-left screen (ar_AE) a card number `476173******0119`, a rate `1 EUR = 167,01795 JPY`,
 * a reference, a URL, an amount with a Latin currency code (`1,253 JP¥`) or the gateway's English disclaimer would
 * otherwise be reordered by the Arabic around it: the digit groups swapped, `JP¥` turned into `¥JP`, a final full
 * stop moved to the start. Every such value is shown through here, in its own isolate, in the direction of its own
 * text: left to right unless it holds right-to-left letters (an Arabic duration, an Arabic currency symbol, a
 * disclaimer the gateway sent in Arabic), which then keep their natural direction. The text itself is never changed.
 */

/** Letters of the right-to-left scripts. */
const RTL_LETTER = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

/**
 * The direction of a value: `ltr` for one without right-to-left letters (digits, Latin letters, symbols: whatever
 * bidi marks `Intl` put around them), `auto` (its first strong character decides) for one with them.
 */
export function valueDirection(text: string): 'ltr' | 'auto' {
  return RTL_LETTER.test(text) ? 'auto' : 'ltr';
}

/** Shows `text` in `el` as an isolated value (see above); also for an element whose text changes later. */
export function showValue<E extends HTMLElement>(el: E, text: string): E {
  el.textContent = text;
  el.dir = valueDirection(text);
  el.classList.add('bidi-value');
  return el;
}

/** A value inside a line of text (`<bdi>`): the line keeps its own direction and alignment. */
export function value(text: string, props: Omit<Props, 'text'> = {}): HTMLElement {
  return showValue(h('bdi', props), text);
}
