import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CustomerView } from '../../src/host/api.js';
import { announcesSecond, ScreenAnnouncer, secondsLeft, secondsText } from './accessibility.js';

const ALT_DETAILS: CustomerView = {
  screen: 'alt-details',
  title: 'Your details',
  message: 'Enter your e-mail address',
  actions: ['ALT_FIELD', 'CANCEL'],
  altField: {
    method: 'Bank transfer',
    field: 'email',
    label: 'E-mail address',
    step: 1,
    steps: 3,
    stepText: 'Step 1 of 3',
    inputMode: 'email',
  },
};

const PAY_BY_PHONE: CustomerView = {
  screen: 'pay-by-phone',
  title: 'Pay by phone',
  message: 'Scan the code',
  actions: ['CANCEL'],
  payByPhone: {
    linkId: 'T1',
    url: 'https://pay.example/T1',
    expiresAt: '2026-11-30T12:00:00.000Z',
    seconds: 42,
    purpose: 'fee',
  },
};

describe('the "more time" countdown', () => {
  it('counts whole seconds up to the expiry, never below zero', () => {
    const now = Date.parse('2030-01-01T10:00:00Z');
    expect(secondsLeft('2030-01-01T10:00:20Z', 99, now)).toBe(20);
    expect(secondsLeft('2030-01-01T10:00:19.200Z', 99, now)).toBe(20);
    expect(secondsLeft('2030-01-01T09:59:00Z', 99, now)).toBe(0);
  });

  it('falls back to the seconds the terminal sent when the expiry cannot be read', () => {
    expect(secondsLeft('not a time', 25)).toBe(25);
  });

  it('speaks at the start, every ten seconds and each of the last five', () => {
    const spoken = [30, 29, 21, 20, 11, 10, 6, 5, 4, 1, 0].filter((n) => announcesSecond(n, false));
    expect(spoken).toEqual([30, 20, 10, 5, 4, 1, 0]);
    expect(announcesSecond(27, true)).toBe(true);
  });

  it('says the seconds with the plural rule of the language', () => {
    expect(secondsText(1, 'en-GB')).toBe('1 second');
    expect(secondsText(20, 'en-GB')).toBe('20 seconds');
    expect(secondsText(20, 'de-DE')).toBe('20 Sekunden');
  });
});

/** The few DOM calls the announcer makes (node has no DOM): an element that records what its text is set to. */
class FakeElement {
  className = '';
  readonly dataset: Record<string, string> = {};
  readonly attributes = new Map<string, string>();
  /** Every text set, in order: an empty one, then the announcement. */
  readonly texts: string[] = [];
  #text = '';
  get textContent(): string {
    return this.#text;
  }
  set textContent(text: string) {
    this.#text = text;
    this.texts.push(text);
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  addEventListener(): void {}
  append(): void {}
}

/** A rendered customer screen as the announcer reads it: its title and message, and the texts events put there. */
function screen(title: string, message: string, more: Record<string, string> = {}): HTMLElement {
  const texts: Record<string, string> = { 'customer-title': title, 'customer-message': message, ...more };
  return {
    querySelector: (selector: string) => {
      const id = /data-testid="([^"]+)"/.exec(selector)?.[1] ?? '';
      return id in texts ? { textContent: texts[id] } : null;
    },
  } as unknown as HTMLElement;
}

describe('the announcement of each screen', () => {
  const frames: FrameRequestCallback[] = [];
  beforeEach(() => {
    frames.length = 0;
    vi.stubGlobal('document', { createElement: () => new FakeElement() });
    vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => frames.push(f));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  /** What the live region said: each text it was given after a frame, the empty ones (its reset) left out. */
  function announced(announcer: ScreenAnnouncer): string[] {
    for (const f of frames.splice(0)) f(0);
    return (announcer.element as unknown as FakeElement).texts.filter((t) => t.length > 0);
  }

  /** `announcer` given a screen, then a frame drawn: each screen is on the page for a moment at least. */
  function shown(announcer: ScreenAnnouncer, ...args: Parameters<ScreenAnnouncer['announce']>): void {
    announcer.announce(...args);
    for (const f of frames.splice(0)) f(0);
  }

  const present = screen('Present your card', 'Insert, tap or swipe your card');
  const useChip = screen('Present your card', 'This card has a chip: insert it in the reader, or tap it');

  it('reads out a new screen, and a new message on the same screen', () => {
    const announcer = new ScreenAnnouncer();
    shown(announcer, present, true);
    shown(announcer, useChip, false, { messageEvent: 1 });
    expect(announced(announcer)).toEqual([
      'Present your card. Insert, tap or swipe your card',
      'Present your card. This card has a chip: insert it in the reader, or tap it',
    ]);
  });

  it('reads out the same message again for a new event (a card refused twice), never for the same event redrawn', () => {
    const announcer = new ScreenAnnouncer();
    shown(announcer, present, true);
    shown(announcer, useChip, false, { messageEvent: 1 });
    // A refreshed snapshot of the same refusal: nothing new to say.
    shown(announcer, useChip, false, { messageEvent: 1 });
    // The card swiped again and refused again, in the same words.
    shown(announcer, useChip, false, { messageEvent: 2 });
    shown(announcer, useChip, false, { messageEvent: 2 });
    const refusal = 'Present your card. This card has a chip: insert it in the reader, or tap it';
    expect(announced(announcer)).toEqual([
      'Present your card. Insert, tap or swipe your card',
      refusal,
      refusal,
    ]);
  });

  it('reads out a value refused again in the same words (alt-problem), never the same refusal redrawn', () => {
    const announcer = new ScreenAnnouncer();
    const problem = 'This is not an e-mail address.';
    const asked = screen('Your details', 'Enter your e-mail address');
    const refused = screen('Your details', 'Enter your e-mail address', { 'alt-problem': problem });
    const field = (problemEvent?: number): CustomerView => ({
      ...ALT_DETAILS,
      altField: {
        ...ALT_DETAILS.altField!,
        ...(problemEvent !== undefined ? { problem, problemEvent } : {}),
      },
    });
    shown(announcer, asked, true, field());
    shown(announcer, refused, false, field(1));
    // A refreshed snapshot of the same refusal.
    shown(announcer, refused, false, field(1));
    // The same wrong value again.
    shown(announcer, refused, false, field(2));
    shown(announcer, refused, false, field(2));
    expect(announced(announcer)).toEqual([
      'Your details. Enter your e-mail address',
      `Your details. Enter your e-mail address. ${problem}`,
      `Your details. Enter your e-mail address. ${problem}`,
    ]);
  });

  it('reads out a payment on the phone declined again (pay-by-phone-notice), never the same decline redrawn', () => {
    const announcer = new ScreenAnnouncer();
    const notice = 'The payment on your phone was declined.';
    const waiting = screen('Pay by phone', 'Scan the code');
    const declined = screen('Pay by phone', 'Scan the code', { 'pay-by-phone-notice': notice });
    const link = (noticeEvent?: number): CustomerView => ({
      ...PAY_BY_PHONE,
      payByPhone: {
        ...PAY_BY_PHONE.payByPhone!,
        ...(noticeEvent !== undefined ? { notice, noticeEvent } : {}),
      },
    });
    shown(announcer, waiting, true, link());
    shown(announcer, declined, false, link(1));
    shown(announcer, declined, false, { ...link(1), payByPhone: { ...link(1).payByPhone!, seconds: 41 } });
    shown(announcer, declined, false, link(2));
    shown(announcer, declined, false, link(2));
    expect(announced(announcer)).toEqual([
      'Pay by phone. Scan the code',
      `Pay by phone. Scan the code. ${notice}`,
      `Pay by phone. Scan the code. ${notice}`,
    ]);
  });

  it('says nothing again for a redraw of an unchanged screen without events', () => {
    const announcer = new ScreenAnnouncer();
    shown(announcer, present, true);
    shown(announcer, present, false);
    expect(announced(announcer)).toEqual(['Present your card. Insert, tap or swipe your card']);
  });
  it('reads out only the last of two screens given before a frame is drawn', () => {
    const announcer = new ScreenAnnouncer();
    announcer.announce(present, true);
    announcer.announce(useChip, false, { messageEvent: 1 });
    expect(announced(announcer)).toEqual([
      'Present your card. This card has a chip: insert it in the reader, or tap it',
    ]);
  });
});
