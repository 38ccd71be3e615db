import { describe, expect, it } from 'vitest';
import { cardAnswerByMs, cardWaitSeconds, MAX_ACTIVATE_SECONDS } from './card-wait.js';
import { parseConfig } from './load.js';

describe('the wait for a card', () => {
  // Embedded defaults: reader.activateTimeoutSeconds 60, customer.moreTimeSeconds 20, accessibilityFactor 2.
  const config = parseConfig({});

  it('gives every customer the configured wait, then "Do you need more time?" while the reader still waits', () => {
    // WCAG 2.2.1 applies to every customer: the question's answer time follows the configured wait in the normal
    // mode too (factor 1), and the unanswered question ends the sale before the reader gives up.
    expect(cardWaitSeconds(config, false)).toBe(60 + 20 + 2);
    expect(cardAnswerByMs(config, false)).toBe((60 + 20) * 1000);
  });

  it('multiplies both by the accessibility factor in accessibility mode', () => {
    expect(cardWaitSeconds(config, true)).toBe((60 + 20) * 2 + 2);
    expect(cardAnswerByMs(config, true)).toBe((60 + 20) * 2 * 1000);
  });

  it('never asks the reader for more than one Activate can wait', () => {
    const long = parseConfig({
      reader: { activateTimeoutSeconds: 200 },
      customer: { moreTimeSeconds: 60, accessibilityFactor: 3 },
    });
    expect(cardWaitSeconds(long, false)).toBe(MAX_ACTIVATE_SECONDS);
    expect(cardWaitSeconds(long, true)).toBe(MAX_ACTIVATE_SECONDS);
    expect(cardAnswerByMs(long, false)).toBeLessThan(MAX_ACTIVATE_SECONDS * 1000);
  });
});
