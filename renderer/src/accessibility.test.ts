import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { announcesSecond, ScreenAnnouncer, secondsLeft, secondsText } from './accessibility.js';

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

/** A rendered customer screen as the announcer reads it: its title and message. */
function screen(title: string, message: string): HTMLElement {
  const texts: Record<string, string> = { 'customer-title': title, 'customer-message': message };
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

  const present = screen('Present your card', 'Insert, tap or swipe your card');
  const useChip = screen('Present your card', 'This card has a chip: insert it in the reader, or tap it');

  it('reads out a new screen, and a new message on the same screen', () => {
    const announcer = new ScreenAnnouncer();
    announcer.announce(present, true);
    announcer.announce(useChip, false, 1);
    expect(announced(announcer)).toEqual([
      'Present your card. Insert, tap or swipe your card',
      'Present your card. This card has a chip: insert it in the reader, or tap it',
    ]);
  });

  it('reads out the same message again for a new event (a card refused twice), never for the same event redrawn', () => {
    const announcer = new ScreenAnnouncer();
    announcer.announce(present, true);
    announcer.announce(useChip, false, 1);
    // A refreshed snapshot of the same refusal: nothing new to say.
    announcer.announce(useChip, false, 1);
    // The card swiped again and refused again, in the same words.
    announcer.announce(useChip, false, 2);
    announcer.announce(useChip, false, 2);
    const refusal = 'Present your card. This card has a chip: insert it in the reader, or tap it';
    expect(announced(announcer)).toEqual([
      'Present your card. Insert, tap or swipe your card',
      refusal,
      refusal,
    ]);
  });

  it('says nothing again for a redraw of an unchanged screen without events', () => {
    const announcer = new ScreenAnnouncer();
    announcer.announce(present, true);
    announcer.announce(present, false);
    expect(announced(announcer)).toEqual(['Present your card. Insert, tap or swipe your card']);
  });
});
