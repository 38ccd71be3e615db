import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TIMED_SCREENS } from './api.js';
import { InactivityWatch } from './inactivity.js';

describe('InactivityWatch', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  interface Watched {
    w: InactivityWatch;
    prompts: number;
    expiries: number;
  }

  function watch(): Watched {
    const state: Watched = { w: undefined as unknown as InactivityWatch, prompts: 0, expiries: 0 };
    state.w = new InactivityWatch({
      timeoutMs: 30_000,
      promptMs: 20_000,
      accessibilityFactor: 2,
      cardAnswerByMs: (accessible) => (accessible ? 160_000 : 80_000),
      onPrompt: () => state.prompts++,
      onExpire: () => state.expiries++,
      now: () => Date.now(),
    });
    return state;
  }

  it('asks after the timeout on an input screen, then leaves it when nobody answers', () => {
    const s = watch();
    s.w.observe('enter-ticket', false);
    vi.advanceTimersByTime(29_999);
    expect(s.prompts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.prompts).toBe(1);
    expect(s.w.prompt).toEqual({ kind: 'more-time', expiresAtMs: Date.now() + 20_000 });
    vi.advanceTimersByTime(20_000);
    expect(s.expiries).toBe(1);
    expect(s.w.prompt).toBeUndefined();
  });

  it('gives more time when the customer answers or acts', () => {
    const s = watch();
    s.w.observe('confirm', false);
    vi.advanceTimersByTime(30_000);
    expect(s.w.prompt).toBeDefined();
    s.w.activity();
    expect(s.w.prompt).toBeUndefined();
    vi.advanceTimersByTime(29_000);
    expect(s.prompts).toBe(1);
    expect(s.expiries).toBe(0);
  });

  it('doubles both limits in accessibility mode', () => {
    const s = watch();
    s.w.observe('choose-duration', true);
    vi.advanceTimersByTime(59_999);
    expect(s.prompts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.prompts).toBe(1);
    vi.advanceTimersByTime(39_999);
    expect(s.expiries).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.expiries).toBe(1);
  });

  it('times the card presentation in accessibility mode with its longer answer time, asking while the reader still waits', () => {
    const s = watch();
    s.w.observe('present-card', true);
    // The reader waits 160 s; the question's 40 s of accessibility mode end with it.
    vi.advanceTimersByTime(119_999);
    expect(s.prompts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.prompts).toBe(1);
    expect(s.w.prompt).toEqual({ kind: 'more-time', expiresAtMs: Date.now() + 40_000 });
    // Other activity does not move the end: the reader's wait is not longer for it.
    s.w.activity();
    expect(s.w.prompt).toBeDefined();
    // A yes: the whole wait again (the host activates the reader afresh).
    s.w.cardRead();
    vi.advanceTimersByTime(119_999);
    expect(s.prompts).toBe(1);
    vi.advanceTimersByTime(40_001);
    expect(s.prompts).toBe(2);
    expect(s.expiries).toBe(1);
  });

  it('times the card presentation without accessibility mode too, with the normal answer time', () => {
    const s = watch();
    s.w.observe('present-card', false);
    // The reader waits 80 s here; the question's 20 s end with it.
    vi.advanceTimersByTime(59_999);
    expect(s.prompts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.prompts).toBe(1);
    expect(s.w.prompt).toEqual({ kind: 'more-time', expiresAtMs: Date.now() + 20_000 });
    // A yes: the whole wait again (the host activates the reader afresh).
    s.w.cardRead();
    vi.advanceTimersByTime(59_999);
    expect(s.prompts).toBe(1);
    vi.advanceTimersByTime(20_001);
    expect(s.prompts).toBe(2);
    expect(s.expiries).toBe(1);
  });

  it('asks nothing while a card detected just before the question is being read, whatever the mode', () => {
    for (const accessible of [false, true]) {
      const s = watch();
      s.w.observe('present-card', false);
      // The reader detects a card a second before the question is due (60 s of the 80 s wait).
      vi.advanceTimersByTime(59_000);
      s.w.cardDetected();
      // A read that takes long, and accessibility mode turned on meanwhile: no question, and nothing ends the sale.
      if (accessible) s.w.observe('present-card', true);
      vi.advanceTimersByTime(10 * 60_000);
      expect(s.prompts).toBe(0);
      expect(s.expiries).toBe(0);
      expect(s.w.prompt).toBeUndefined();
      // Read: the payment goes on, untimed.
      s.w.observe('processing', accessible);
      vi.advanceTimersByTime(10 * 60_000);
      expect(s.prompts).toBe(0);
      expect(s.expiries).toBe(0);
    }
  });

  it('takes the question away when a card comes while it is asked: the read is not cancelled under the customer', () => {
    const s = watch();
    s.w.observe('present-card', false);
    vi.advanceTimersByTime(60_000);
    expect(s.w.prompt).toBeDefined();
    s.w.cardDetected();
    // The view changes (onPrompt): the question is gone from the screen.
    expect(s.w.prompt).toBeUndefined();
    expect(s.prompts).toBe(2);
    vi.advanceTimersByTime(10 * 60_000);
    expect(s.expiries).toBe(0);
  });

  it('times the card screen afresh after a read that ended in an error the customer can put right', () => {
    const s = watch();
    s.w.observe('present-card', false);
    vi.advanceTimersByTime(59_000);
    s.w.cardDetected();
    // The card was taken away too soon: the error screen (not timed), then the card asked for again (CONFIRM).
    s.w.observe('error', false);
    vi.advanceTimersByTime(5_000);
    s.w.observe('present-card', false);
    vi.advanceTimersByTime(59_999);
    expect(s.prompts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(s.prompts).toBe(1);
    vi.advanceTimersByTime(20_000);
    expect(s.expiries).toBe(1);
  });

  it('never times a screen where a card is being read or a payment is in progress', () => {
    // The currency choice is timed (an input screen, nothing sent before it): test/integration/host-inactivity.test.ts.
    // The card presentation is timed by the reader's wait (above), not as an input screen.
    for (const screen of ['processing', 'approved', 'idle', 'session']) {
      expect(TIMED_SCREENS.has(screen)).toBe(false);
      const s = watch();
      s.w.observe('enter-amount', false);
      vi.advanceTimersByTime(10_000);
      s.w.observe(screen, false);
      vi.advanceTimersByTime(10 * 60_000);
      expect(s.prompts).toBe(0);
      expect(s.expiries).toBe(0);
    }
  });
});
