/**
 * Functions that run inside the browser page (passed to Playwright's evaluate). The root tsconfig has no DOM library
 * on purpose (src/ is Node code), so the few DOM shapes used here are declared in this module's scope only.
 */

interface PageStyle {
  backgroundColor: string;
  color: string;
  borderColor: string;
  fontSize: string;
  fontWeight: string;
  whiteSpace: string;
  direction: string;
}

interface PageElement {
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  readonly nextElementSibling: PageElement | null;
  textContent: string | null;
  append(child: PageElement): void;
}

interface PageImage extends PageElement {
  readonly complete: boolean;
  readonly naturalWidth: number;
}

interface PageDocument {
  readonly activeElement: PageElement | null;
  readonly body: PageElement;
  readonly head: PageElement;
  querySelector(selector: string): PageElement | null;
  createElement(tag: string): PageElement;
  addEventListener(
    type: 'securitypolicyviolation',
    listener: (e: { violatedDirective: string }) => void,
  ): void;
}

interface PageSocket {
  onopen: (() => void) | null;
  onerror: (() => void) | null;
}

interface OpenedSocket {
  close(): void;
}

declare const document: PageDocument;
declare const window: {
  screens: string[];
  violations: string[];
  sockets?: OpenedSocket[];
  WebSocket: new (url: string) => OpenedSocket;
};
declare function getComputedStyle(el: PageElement): PageStyle;
declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: PageDocument, options: { subtree: boolean; childList: boolean; attributes: boolean }): void;
}
declare class WebSocket implements PageSocket {
  constructor(url: string);
  onopen: (() => void) | null;
  onerror: (() => void) | null;
}

/** Init script: records every customer screen shown (data-screen) and every CSP violation. */
export function installWatchers(): void {
  window.screens = [];
  window.violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective));
  new MutationObserver(() => {
    const screen = document.querySelector('[data-testid="customer"]')?.getAttribute('data-screen');
    if (screen && window.screens[window.screens.length - 1] !== screen) window.screens.push(screen);
  }).observe(document, { subtree: true, childList: true, attributes: true });
}

export function screensSeen(): string[] {
  return window.screens;
}

export function violationsSeen(): string[] {
  return window.violations;
}

/** Natural width of a loaded image, 0 when it did not load. */
export function imageWidth(el: PageElement): number {
  const img = el as PageImage;
  return img.complete ? img.naturalWidth : 0;
}

/** The style properties that must be identical on both DCC options. */
export function dccOptionStyle(el: PageElement): string[] {
  const s = getComputedStyle(el);
  const amount = el.querySelector('.dcc-amount');
  const currency = el.querySelector('.dcc-currency');
  if (!amount || !currency) return ['missing parts'];
  const a = getComputedStyle(amount);
  const c = getComputedStyle(currency);
  return [
    s.backgroundColor,
    s.color,
    s.borderColor,
    s.fontWeight,
    a.fontSize,
    a.fontWeight,
    c.fontSize,
    c.fontWeight,
  ];
}

/** Font sizes of an option's amount and currency. */
export function amountAndCurrencySizes(el: PageElement): string[] {
  const amount = el.querySelector('.dcc-amount');
  const currency = el.querySelector('.dcc-currency');
  return [
    amount ? getComputedStyle(amount).fontSize : '',
    currency ? getComputedStyle(currency).fontSize : '',
  ];
}

export function nothingFocused(): boolean {
  return document.activeElement === null || document.activeElement === document.body;
}

export function nextTestId(el: PageElement): string | null {
  return el.nextElementSibling?.getAttribute('data-testid') ?? null;
}

export function whiteSpace(el: PageElement): string {
  return getComputedStyle(el).whiteSpace;
}

/** The element's writing direction as laid out (`ltr` or `rtl`). */
export function direction(el: PageElement): string {
  return getComputedStyle(el).direction;
}

/** Adds an inline <style>: the CSP must refuse it. */
export function injectInlineStyle(): void {
  const style = document.createElement('style');
  style.textContent = 'body { background: red; }';
  document.head.append(style);
}

/** Tries to open the bridge's WebSocket from the current page: "open" or "refused". */
export function tryWebSocket(port: number): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    ws.onopen = () => resolve('open');
    ws.onerror = () => resolve('refused');
  });
}

/** Init script: keeps every WebSocket the page opens, so that a test can drop its connection ({@link dropSockets}). */
export function recordSockets(): void {
  const sockets: OpenedSocket[] = [];
  window.sockets = sockets;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  };
}

/** Closes every WebSocket the page opened (after {@link recordSockets}): the connection to the terminal drops. */
export function dropSockets(): number {
  const sockets = window.sockets ?? [];
  for (const s of sockets) s.close();
  return sockets.length;
}
