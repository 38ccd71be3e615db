/**
 * The renderer's only way to build DOM. Text always goes through `textContent` and attributes through
 * `setAttribute`: nothing from a snapshot is ever parsed as HTML, so no value the terminal sends can inject markup or
 * script (and the CSP forbids inline script and style anyway).
 */

export type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  /** Stable hook for tests: `data-testid`. */
  testid?: string;
  text?: string;
  attrs?: Record<string, string>;
  onClick?: (event: Event) => void;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.testid) el.dataset.testid = props.testid;
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value);
  if (props.text !== undefined) el.textContent = props.text;
  if (props.onClick) el.addEventListener('click', props.onClick);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

/** A large touch button. `type="button"` so that it never submits anything. */
export function button(
  label: string,
  testid: string,
  onClick: () => void,
  className = 'btn',
): HTMLButtonElement {
  return h('button', {
    class: className,
    testid,
    text: label,
    attrs: { type: 'button' },
    onClick: () => onClick(),
  });
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(
    ...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false),
  );
}

/**
 * A polite, atomic live region kept while the page is drawn again (a region made anew at each redraw would read out
 * again each time, or never): `say` reads `text` out. It empties the region first and fills it at the next frame, so
 * that the same words twice in a row are read out again; a later `say` before that frame wins.
 */
export class LiveRegion {
  readonly element: HTMLElement;
  #said = 0;

  constructor(testid: string) {
    this.element = h('div', {
      class: 'visually-hidden',
      testid,
      attrs: { 'aria-live': 'polite', 'aria-atomic': 'true' },
    });
  }

  /** Reads out `text`; undefined only empties the region. */
  say(text: string | undefined): void {
    const turn = ++this.#said;
    this.element.textContent = '';
    if (text === undefined) return;
    requestAnimationFrame(() => {
      if (turn === this.#said) this.element.textContent = text;
    });
  }
}
