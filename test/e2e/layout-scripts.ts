/**
 * Functions that run inside the browser page for the layout checks of the customer screens (passed to Playwright's
 * evaluate). The root tsconfig has no DOM library on purpose, so the few DOM shapes used here are declared in this
 * module's scope only.
 */

interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

interface TextNode {
  readonly nodeType: number;
  readonly data: string;
}

interface LayoutElement {
  readonly scrollWidth: number;
  readonly clientWidth: number;
  readonly textContent: string | null;
  readonly firstChild: TextNode | null;
  getAttribute(name: string): string | null;
  getClientRects(): { length: number };
  getBoundingClientRect(): Rect;
  scrollIntoView(options: { block: 'nearest'; inline: 'nearest' }): void;
}

interface TextRange {
  setStart(node: TextNode, offset: number): void;
  setEnd(node: TextNode, offset: number): void;
  getBoundingClientRect(): Rect;
}

declare const document: {
  querySelectorAll(selector: string): ArrayLike<LayoutElement>;
  createRange(): TextRange;
};
declare const window: { readonly innerHeight: number; readonly innerWidth: number };
declare function getComputedStyle(el: LayoutElement): { direction: string; unicodeBidi: string };

/** Every shown button whose text is wider than the button (clipped or spilling out): testid, text and widths. */
export function overflowingButtons(): string[] {
  const found: string[] = [];
  for (const b of Array.from(document.querySelectorAll('button'))) {
    // A button not rendered (the closed language list) has no boxes.
    if (b.getClientRects().length === 0) continue;
    if (b.scrollWidth > b.clientWidth + 1)
      found.push(
        `${b.getAttribute('data-testid') ?? 'button'} "${(b.textContent ?? '').trim()}": ${b.scrollWidth} px of text in ${b.clientWidth} px`,
      );
  }
  return found;
}

/**
 * Each shown element of `selectors` (every match) whose text does not fit: wider than its own box (clipped or spilling
 * out) or reaching past a side of the window. Selector, text and widths.
 */
export function spillingText(selectors: string[]): string[] {
  const found: string[] = [];
  for (const selector of selectors)
    for (const el of Array.from(document.querySelectorAll(selector))) {
      if (el.getClientRects().length === 0) continue;
      const r = el.getBoundingClientRect();
      const text = (el.textContent ?? '').trim();
      if (el.scrollWidth > el.clientWidth + 1)
        found.push(`${selector} "${text}": ${el.scrollWidth} px of text in ${el.clientWidth} px`);
      else if (r.left < -0.5 || r.left + r.width > window.innerWidth + 0.5)
        found.push(
          `${selector} "${text}": from ${Math.round(r.left)} to ${Math.round(r.left + r.width)} px of a ${window.innerWidth} px window`,
        );
    }
  return found;
}

/** Every shown button of the customer area smaller than `min` CSS px in width or height: testid and size. */
export function smallTargets(min: number): string[] {
  const found: string[] = [];
  for (const b of Array.from(document.querySelectorAll('[data-testid="customer-slot"] button'))) {
    if (b.getClientRects().length === 0) continue;
    const { width, height } = b.getBoundingClientRect();
    if (width < min - 0.5 || height < min - 0.5)
      found.push(
        `${b.getAttribute('data-testid') ?? 'button'}: ${Math.round(width)} × ${Math.round(height)} px`,
      );
  }
  return found;
}

/**
 * Each element of `selectors` (the first match) that cannot be brought whole into the window: scrolled to as a
 * customer would scroll (the nearest scrollable box), it still lies partly outside. Selector and where it lies.
 */
export function outOfReach(selectors: string[]): string[] {
  const found: string[] = [];
  for (const selector of selectors) {
    const el = document.querySelectorAll(selector)[0];
    if (el === undefined) {
      found.push(`${selector}: not on the page`);
      continue;
    }
    el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    const r = el.getBoundingClientRect();
    if (r.top < -0.5 || r.left < -0.5 || r.top + r.height > window.innerHeight + 0.5)
      found.push(
        `${selector}: ${Math.round(r.top)} to ${Math.round(r.top + r.height)} px of a ${window.innerHeight} px window`,
      );
  }
  return found;
}

/**
 * How far each element of `selectors` (the first match) scrolls sideways: its scrollWidth less its clientWidth, 0
 * when its content fits its width; -1 for a selector that matches nothing.
 */
export function sidewaysScroll(selectors: string[]): Record<string, number> {
  const found: Record<string, number> = {};
  for (const selector of selectors) {
    const el = document.querySelectorAll(selector)[0];
    found[selector] = el === undefined ? -1 : el.scrollWidth - el.clientWidth;
  }
  return found;
}

/** A value the renderer isolated (renderer/src/bidi.ts) as the browser lays it out. */
export interface LaidOutValue {
  testid: string | null;
  text: string;
  /** The `dir` the renderer gave it: `ltr` or `auto`. */
  dir: string | null;
  direction: string;
  unicodeBidi: string;
  /**
   * Where the value's first visible character is drawn against its last one, when both are on one line: `ltr` (left
   * of it), `rtl` (right of it); `n/a` for one character, several lines, or no text node.
   */
  visualOrder: 'ltr' | 'rtl' | 'n/a';
}

/** Every shown value the renderer isolated, with its computed direction and the order its characters are drawn in. */
export function laidOutValues(): LaidOutValue[] {
  const invisible = /[\s\u200e\u200f\u061c\u2066-\u2069]/;
  const values: LaidOutValue[] = [];
  for (const el of Array.from(document.querySelectorAll('.bidi-value'))) {
    if (el.getClientRects().length === 0) continue;
    const style = getComputedStyle(el);
    const node = el.firstChild;
    let visualOrder: LaidOutValue['visualOrder'] = 'n/a';
    if (node !== null && node.nodeType === 3) {
      const chars = node.data;
      let first = 0;
      while (first < chars.length && invisible.test(chars.charAt(first))) first += 1;
      let last = chars.length - 1;
      while (last > first && invisible.test(chars.charAt(last))) last -= 1;
      if (last > first) {
        // No nested function: the page runs this as its source, without the helpers a bundler may add around one.
        const range = document.createRange();
        range.setStart(node, first);
        range.setEnd(node, first + 1);
        const a = range.getBoundingClientRect();
        range.setStart(node, last);
        range.setEnd(node, last + 1);
        const b = range.getBoundingClientRect();
        if (Math.abs(a.top - b.top) < a.height / 2) visualOrder = a.left < b.left ? 'ltr' : 'rtl';
      }
    }
    values.push({
      testid: el.getAttribute('data-testid'),
      text: el.textContent ?? '',
      dir: el.getAttribute('dir'),
      direction: style.direction,
      unicodeBidi: style.unicodeBidi,
      visualOrder,
    });
  }
  return values;
}
