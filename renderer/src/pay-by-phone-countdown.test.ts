import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CustomerView } from '../../src/host/api.js';
import { renderCustomer, type CustomerContext } from './customer.js';

/**
 * The little of a document the pay-by-phone screen is built with, in Node: elements that know their parent, so that
 * `isConnected` says whether one hangs under the page (`root`) as a browser's does.
 */
class FakeElement {
  parent: FakeElement | undefined;
  readonly children: FakeElement[] = [];
  readonly dataset: Record<string, string> = {};
  readonly attributes: Record<string, string> = {};
  className = '';
  textContent: string | null = '';
  constructor(
    readonly tagName: string,
    private readonly page = false,
  ) {}
  get isConnected(): boolean {
    return this.page || (this.parent?.isConnected ?? false);
  }
  setAttribute(name: string, value: string): void {
    this.attributes[name] = value;
  }
  addEventListener(): void {}
  append(...nodes: Array<FakeElement | string>): void {
    for (const node of nodes)
      if (typeof node !== 'string') {
        node.parent = this;
        this.children.push(node);
      }
  }
  replaceChildren(...nodes: FakeElement[]): void {
    for (const child of this.children.splice(0)) child.parent = undefined;
    this.append(...nodes);
  }
}

const root = new FakeElement('main', true);

const view = (seconds: number): CustomerView => ({
  screen: 'pay-by-phone',
  title: 'Pay by phone',
  message: 'Scan the code',
  actions: ['CANCEL'],
  payByPhone: {
    linkId: 'PT000001_T-1',
    url: 'https://pay.example/PT000001_T-1',
    expiresAt: new Date(Date.now() + seconds * 1000).toISOString(),
    seconds,
    purpose: 'fee',
  },
});

const ctx: CustomerContext = {
  send: () => undefined,
  locale: 'en_GB',
  drafts: { ticket: '', amountDigits: '', alt: '', altField: '', pin: '' },
};

describe('the time left of a payment link on screen', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('document', { createElement: (tag: string) => new FakeElement(tag) });
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('stops ticking once its screen is drawn again, even within its first second', () => {
    // The screen is drawn again at each snapshot (the link created, a payment declined, a status change): two within
    // a second are common on entering pay by phone.
    for (let seconds = 300; seconds > 290; seconds--) {
      root.replaceChildren(renderCustomer(view(seconds), ctx) as unknown as FakeElement);
      vi.advanceTimersByTime(400);
    }
    vi.advanceTimersByTime(5_000);
    // Only the countdown on the page ticks: every one drawn before it has stopped.
    expect(vi.getTimerCount()).toBe(1);
    root.replaceChildren();
    vi.advanceTimersByTime(2_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});
