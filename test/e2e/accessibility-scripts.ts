/**
 * Functions that run inside the browser page for the accessibility tests (passed to Playwright's evaluate). The root
 * tsconfig has no DOM library on purpose, so the few DOM and axe-core shapes used here are declared in this module's
 * scope only.
 */

interface AxeNode {
  target: unknown[];
  failureSummary?: string;
}

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: AxeNode[];
}

interface AxeRunOptions {
  runOnly: { type: 'tag' | 'rule'; values: string[] };
  resultTypes?: string[];
}

declare const axe: {
  run(context: unknown, options: AxeRunOptions): Promise<{ violations: AxeViolation[] }>;
};

interface FocusStyle {
  outlineStyle: string;
  outlineWidth: string;
}

interface FocusElement {
  getAttribute(name: string): string | null;
  closest(selector: string): FocusElement | null;
}

declare const document: {
  readonly activeElement: FocusElement | null;
  readonly body: FocusElement;
  readonly documentElement: { classList: { contains(name: string): boolean } };
  querySelector(selector: string): {
    closest(selector: string): { getAttribute(name: string): string | null } | null;
  } | null;
};
declare function getComputedStyle(el: FocusElement): FocusStyle;

/** One violation per affected element: "rule-id (impact) at selector: what to fix". */
export interface AxeFinding {
  id: string;
  impact: string;
  target: string;
  summary: string;
}

/**
 * Runs axe-core on the whole document with the given `tags` (e.g. wcag2a, wcag2aa, wcag21aa, wcag22aa), or with the
 * given rule ids when `kind` is 'rule', and returns every violation by element.
 */
export async function runAxe(request: { kind: 'tag' | 'rule'; values: string[] }): Promise<AxeFinding[]> {
  const result = await axe.run(document, {
    runOnly: { type: request.kind, values: request.values },
    resultTypes: ['violations'],
  });
  return result.violations.flatMap((v) =>
    v.nodes.map((n) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      target: n.target.map(String).join(' '),
      summary: (n.failureSummary ?? v.help).replace(/\s+/g, ' '),
    })),
  );
}

/** Whether axe-core is loaded in the page. */
export function axeLoaded(): boolean {
  return typeof axe === 'object' && typeof axe.run === 'function';
}

/** The `data-testid` of the focused element, or null when nothing (the body) has focus. */
export function focusedTestId(): string | null {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  return el.getAttribute('data-testid');
}

/** The focused element's outline ("solid 5px"), to check that focus is visible. */
export function focusOutline(): string {
  const el = document.activeElement;
  if (!el || el === document.body) return 'none';
  const s = getComputedStyle(el);
  return `${s.outlineStyle} ${s.outlineWidth}`;
}

/** Whether the document is in accessibility mode (the class styles.css switches on). */
export function accessibleDocument(): boolean {
  return document.documentElement.classList.contains('accessible');
}

/** Marks an element as drawn before a redraw: a redraw that replaces it leaves no element with the mark. */
export function markDrawnBefore(el: { setAttribute(name: string, value: string): void }): void {
  el.setAttribute('data-drawn', 'before');
}

/**
 * The language a screen reader reads the element with `testid` in: the `lang` of its nearest element that has one.
 * Found and read in one step in the page: a redraw between finding the element and reading it would leave a detached
 * element, which no `lang` reaches.
 */
export function languageOfTestId(testid: string): string | null {
  const el = document.querySelector(`[data-testid="${testid}"]`);
  return el?.closest('[lang]')?.getAttribute('lang') ?? null;
}
