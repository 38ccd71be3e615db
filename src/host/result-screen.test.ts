import { afterEach, describe, expect, it, vi } from 'vitest';
import { RESULT_SPEECH_LIMIT, ResultScreenHold } from './result-screen.js';

afterEach(() => {
  vi.useRealTimers();
});

function hold(heard = true) {
  const terminal = { heard, speaking: false, state: '"paying"', left: 0 };
  const h = new ResultScreenHold({
    heard: () => terminal.heard,
    speaking: () => terminal.speaking,
    state: () => terminal.state,
    leave: () => (terminal.left += 1),
  });
  return { h, terminal };
}

describe('a result screen read out in accessibility mode', () => {
  it('keeps its time when nobody hears it from the terminal', () => {
    const { h } = hold(false);
    expect(h.delayMs(20_000)).toBe(20_000);
  });

  it('stays while it is said, then for its time; the machine’s own timer bounds it', () => {
    vi.useFakeTimers();
    const { h, terminal } = hold();
    expect(h.delayMs(20_000)).toBe(20_000 * RESULT_SPEECH_LIMIT);
    // A child actor's change while the machine is still in the state it was asked from: not the result screen yet.
    h.update();
    terminal.state = '"paid"';
    terminal.speaking = true;
    h.update();
    vi.advanceTimersByTime(100_000);
    expect(terminal.left).toBe(0);
    terminal.speaking = false;
    h.update();
    vi.advanceTimersByTime(19_999);
    expect(terminal.left).toBe(0);
    // The repeat key: said again, the time starts afresh after it.
    terminal.speaking = true;
    h.update();
    terminal.speaking = false;
    h.update();
    vi.advanceTimersByTime(19_999);
    expect(terminal.left).toBe(0);
    vi.advanceTimersByTime(1);
    expect(terminal.left).toBe(1);
  });

  it('lets go of a screen the customer has left', () => {
    vi.useFakeTimers();
    const { h, terminal } = hold();
    h.delayMs(20_000);
    terminal.state = '"paid"';
    h.update();
    terminal.state = '"idle"';
    h.update();
    terminal.state = '"paid"';
    h.update();
    vi.advanceTimersByTime(60_000);
    expect(terminal.left).toBe(0);
  });
});
