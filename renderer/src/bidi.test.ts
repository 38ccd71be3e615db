import { describe, expect, it } from 'vitest';
import { valueDirection } from './bidi.js';

describe('the direction of a value in customer text', () => {
  it('is left to right for card numbers, rates, references, URLs and amounts with Latin currency signs', () => {
    for (const text of [
      '476173******0119',
      '**** **** **** 0119',
      '1 EUR = 167,01795 JPY',
      'T01M86WDBRSV3S2DWT4VRACS9BG',
      'https://pay.example/r/abc?x=1',
      '\u200f1,253\u00a0JP¥',
      '7,50\u00a0€',
      'I have been offered a choice of currencies. The conversion is provided by the merchant.',
      '13:37',
    ])
      expect(valueDirection(text), text).toBe('ltr');
  });

  it('follows its own text when it holds right-to-left letters', () => {
    for (const text of ['131 دقيقة', '\u200f1,253.00\u00a0د.إ.\u200f', 'لقد عُرض عليّ الاختيار.'])
      expect(valueDirection(text), text).toBe('auto');
  });
});
