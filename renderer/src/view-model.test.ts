import { describe, expect, it } from 'vitest';
import type { UserEvent } from '../../src/host/api.js';
import { SAMPLE_DCC } from '../../test/e2e/fake-terminal.js';
import {
  actionLabel,
  connectionText,
  dccComplete,
  formatKeyed,
  keyedMinor,
  MAX_KEYED_DIGITS,
  pressKey,
  problemText,
  svgDataUrl,
} from './view-model.js';

describe('view model', () => {
  it('labels every event without data and leaves events with data to their widgets', () => {
    const plain: UserEvent['type'][] = [
      'START',
      'LOST_TICKET',
      'CONFIRM',
      'END_SESSION',
      'TAP_ENTRY',
      'TAP_EXIT',
      'CANCEL',
      'DONE',
    ];
    for (const t of plain) expect(actionLabel(t)).toMatch(/\w/);
    for (const t of ['ENTER_TICKET', 'CHOOSE_DURATION', 'ENTER_AMOUNT', 'CHOOSE_CURRENCY', 'EXTEND'] as const)
      expect(actionLabel(t)).toBeNull();
  });

  it('accepts a complete DCC offer', () => {
    expect(dccComplete(SAMPLE_DCC)).toBe(true);
  });

  it.each([
    ['rate', { rate: '' }],
    ['markup', { markup: '  ' }],
    ['disclaimer', { disclaimer: '' }],
    ['card amount', { card: { ...SAMPLE_DCC.card, text: '' } }],
    ['same currency on both sides', { card: { ...SAMPLE_DCC.card, currency: 'EUR' } }],
  ])('refuses to offer conversion without the %s', (_name, change) => {
    expect(dccComplete({ ...SAMPLE_DCC, ...change })).toBe(false);
  });

  it('keys amounts as minor units, without leading zeros and within the digit bound', () => {
    let digits = '';
    for (const k of ['0', '1', '2', '5', '0']) digits = pressKey(digits, k);
    expect(digits).toBe('1250');
    expect(keyedMinor(digits)).toBe(1250);
    expect(formatKeyed(digits, 'EUR', 'en-GB')).toBe('€12.50');
    expect(formatKeyed(digits, undefined, 'en-GB')).toBe('12.50');
    expect(formatKeyed('5', undefined, 'en-GB')).toBe('0.05');
    expect(pressKey('1250', 'back')).toBe('125');
    expect(pressKey('1250', 'clear')).toBe('');
    expect(pressKey('12', 'x')).toBe('12');
    const full = '9'.repeat(MAX_KEYED_DIGITS);
    expect(pressKey(full, '9')).toBe(full);
  });

  it('turns the QR SVG into a data URL with markup characters encoded', () => {
    const url = svgDataUrl('<svg onload="x()">"\'</svg>');
    expect(url.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true);
    expect(url).not.toMatch(/["<> ]/);
  });

  it('tells the customer why, in their language, and never shows a developer message', () => {
    const labels = {
      refused: 'Das hat nicht funktioniert. Bitte versuchen Sie es erneut.',
      'connection.lost': 'Verbindung zum Automaten unterbrochen – neuer Verbindungsversuch…',
      'connection.timeout': 'Der Automat hat nicht geantwortet. Bitte versuchen Sie es erneut.',
      'connection.connecting': 'Verbindung zum Automaten wird hergestellt…',
    };
    const refused = { code: 'NOT_ALLOWED_NOW', message: 'CONFIRM is not possible on this screen' };
    expect(problemText({ ...refused, customerText: 'Das ist gerade nicht möglich.' }, labels)).toBe(
      'Das ist gerade nicht möglich.',
    );
    expect(problemText(refused, labels)).toBe(labels.refused);
    expect(problemText({ code: 'BAD_EVENT', message: 'event.type must be a string' }, undefined)).toBe(
      'That did not work. Please try again.',
    );
    expect(problemText({ code: 'DISCONNECTED', message: 'not connected to the terminal' }, labels)).toBe(
      labels['connection.lost'],
    );
    expect(problemText({ code: 'TIMEOUT', message: 'the terminal did not answer' }, undefined)).toBe(
      'The machine did not answer. Please try again.',
    );
    expect(connectionText('connecting', labels)).toBe(labels['connection.connecting']);
    expect(connectionText('lost', undefined)).toBe('Connection to the machine lost — reconnecting…');
  });
});
