import { describe, expect, it } from 'vitest';
import { CATALOGUES, SUPPORTED_LOCALES } from '../i18n/index.js';
import type { CustomerView, DccChoice } from './api.js';
import { speakable, speechFor, spokenScreen } from './speech.js';
import { translator } from '../i18n/index.js';

const AMOUNT = { minor: 1250, currency: 'EUR', text: '€12.50' };
const PAN = '4761739001010119';

const DCC: DccChoice = {
  title: 'Select currency',
  local: AMOUNT,
  card: { minor: 1091, currency: 'GBP', text: '£10.91' },
  rate: '1 EUR = 0.8728 GBP',
  markup: 'includes 3.50% margin over the wholesale rate',
  disclaimer: 'I have been offered a choice of currencies and agree to pay in GBP.',
  expiresAt: '2030-01-01T00:00:00Z',
};

const IDLE: CustomerView = {
  screen: 'idle',
  title: 'Welcome',
  message: 'Pay for your parking here',
  actions: ['START'],
};

const TICKET: CustomerView = {
  screen: 'enter-ticket',
  title: 'Your ticket',
  message: 'Insert your ticket or enter your plate',
  actions: ['ENTER_TICKET', 'LOST_TICKET', 'CANCEL'],
};

const DURATIONS: CustomerView = {
  screen: 'choose-duration',
  title: 'How long will you stay?',
  message: 'Choose how long to park',
  durations: [
    { minutes: 30, label: '30 min', amount: { minor: 150, currency: 'EUR', text: '€1.50' } },
    { minutes: 90, label: '1 h 30 min', amount: { minor: 450, currency: 'EUR', text: '€4.50' } },
  ],
  actions: ['CHOOSE_DURATION', 'CANCEL'],
};

const CURRENCY: CustomerView = {
  screen: 'choose-currency',
  title: 'Select currency',
  message: '',
  amount: AMOUNT,
  dcc: DCC,
  maskedPan: '476173******0119',
  actions: ['CHOOSE_CURRENCY', 'CANCEL'],
};

const APPROVED: CustomerView = {
  screen: 'approved',
  title: 'Approved',
  message: 'Paid: have a good journey',
  amount: AMOUNT,
  maskedPan: '476173******0119',
  receipt: {
    title: 'Parking',
    lines: [
      { label: 'Amount', value: '€12.50' },
      { label: 'Card', value: '476173******0119' },
      { label: 'Transaction', value: 'PT-000001-42' },
    ],
    locale: 'en_GB',
    lang: 'en-GB',
    direction: 'ltr',
    qr: { svg: '<svg/>', alt: 'QR code of your receipt', url: 'https://pay.example/r/abc' },
  },
  actions: ['DONE'],
};

function inLanguage(view: CustomerView, locale: string): CustomerView {
  return {
    ...view,
    language: {
      current: locale,
      lang: locale.replace('_', '-'),
      direction: locale === 'ar_AE' ? 'rtl' : 'ltr',
      available: [],
    },
  };
}

/** Every run of digits of a text, spaces between digits ignored ("0 1 1 9" is 0119). */
function digitRuns(text: string): string[] {
  return (text.match(/\d(?:[\d ]*\d)?/g) ?? []).map((run) => run.replace(/ /g, ''));
}

describe('what the terminal says of a screen', () => {
  it('says the title, the message and which key does what', () => {
    const said = spokenScreen(TICKET);
    expect(said).toBe(
      'Your ticket. Insert your ticket or enter your plate. Type on the keypad; the back key deletes the last ' +
        'character. Enter key: Continue. Cancel key: Cancel. Also on the screen: Lost ticket. With the field empty, ' +
        'the back key leaves it: then the 4 and 6 keys move between the buttons, Enter chooses, and any other ' +
        'digit types again.',
    );
  });

  it('starts a customer’s speech with the speech keys', () => {
    expect(speechFor(IDLE, undefined)?.text).toBe(
      'Speech is on. Star repeats, hash stops the speech, plus and minus change the volume. ' +
        'Welcome. Pay for your parking here. Enter key: Pay for parking.',
    );
    // …but the repeat key says the screen alone.
    expect(speechFor(IDLE, undefined)?.screen).toBe(
      'Welcome. Pay for your parking here. Enter key: Pay for parking.',
    );
  });

  it('says each duration with its price, and how to choose', () => {
    const said = spokenScreen(DURATIONS);
    expect(said).toContain('Choices: 30 minutes for 1.50 euros or 1 hour and 30 minutes for 4.50 euros.');
    expect(said).toContain('The 4 and 6 keys move between the choices and buttons, and Enter chooses.');
    expect(said).toContain('Cancel key: Cancel.');
    expect(said).not.toContain('Enter key');
  });

  it('says the extension choices of an open session with its times', () => {
    const said = spokenScreen({
      screen: 'session',
      title: 'Your parking',
      message: 'Parking session open',
      session: { id: 'S-1042', startedAt: '14:05', paidUntil: '15:05', held: AMOUNT },
      durations: [{ minutes: 30, label: '+30 min', amount: { minor: 150, currency: 'EUR', text: '€1.50' } }],
      actions: ['EXTEND', 'END_SESSION'],
    });
    expect(said).toContain('Choices: Extend 30 minutes for 1.50 euros.');
    expect(said).toContain('Session: S-1042. Since: 14:05. Paid until: 15:05. Held on card: 12.50 euros.');
    expect(said).toContain('Also on the screen: End parking.');
  });

  it('says the currency choice with both amounts, the rate, the markup and the disclaimer as sent', () => {
    const said = spokenScreen(CURRENCY);
    expect(said).toBe(
      'Select currency. Pay 12.50 euros, or pay 10.91 British pounds. Exchange rate: 1 EUR = 0.8728 GBP. ' +
        'includes 3.50% margin over the wholesale rate. ' +
        'I have been offered a choice of currencies and agree to pay in GBP. Card ending 0 1 1 9. ' +
        'Cancel key: Cancel. The 4 and 6 keys move between the choices and buttons, and Enter chooses.',
    );
  });

  it('reads the receipt on the approved screen, the card by its last four digits', () => {
    const said = spokenScreen(APPROVED);
    expect(said).toBe(
      'Approved. Paid: have a good journey. Amount: 12.50 euros. Receipt. Parking. Amount: €12.50. ' +
        'Card ending 0 1 1 9. Transaction: PT-0 0 0 0 0 1-42. QR code of your receipt. Enter key: Done.',
    );
  });

  it("says a receipt issued in the terminal's language in that language, the rest in the customer's", () => {
    // An ar_AE customer's receipt is in en_GB: the printer has no table for Arabic (receipts.ts issuedReceipt).
    const spoken = speechFor(inLanguage(APPROVED, 'ar_AE'), undefined);
    const runs = spoken?.runs ?? [];
    const english = runs.filter((r) => r.locale === 'en_GB').map((r) => r.text);
    expect(english).toEqual([
      'Parking. Amount: €12.50. Card ending 0 1 1 9. Transaction: PT-0 0 0 0 0 1-42.',
    ]);
    // The screen's own words (its title, the receipt's heading, the QR code's alternative) stay the customer's.
    expect(runs.map((r) => r.locale)).toEqual(['ar_AE', 'en_GB', 'ar_AE']);
    expect(runs[0]?.text).toContain(translator('ar_AE').t('speech.receipt'));
    expect(spoken?.screenRuns.map((r) => r.locale)).toEqual(['ar_AE', 'en_GB', 'ar_AE']);
    // One language, one run.
    expect(speechFor(APPROVED, undefined)?.runs.map((r) => r.locale)).toEqual(['en_GB']);
  });

  it('asks "Do you need more time?" with the time left and the answers’ keys', () => {
    const asked: CustomerView = {
      ...TICKET,
      prompt: { kind: 'more-time', expiresAt: '2030-01-01T00:00:40Z', seconds: 40 },
      actions: [...TICKET.actions, 'MORE_TIME'],
    };
    expect(speechFor(asked, TICKET)?.text).toBe(
      'Do you need more time? Time left: 40 seconds. Enter key: Yes, I need more time. Cancel key: No, cancel. ' +
        'Also on the screen: Continue and Lost ticket.',
    );
    // The countdown alone is no change: nothing is said again while it runs.
    expect(speechFor({ ...asked, prompt: { ...asked.prompt!, seconds: 31 } }, asked)).toBeUndefined();
  });

  it('says a new screen in full and a change on the same screen by itself', () => {
    expect(speechFor(TICKET, IDLE)?.text).toBe(spokenScreen(TICKET));
    const unknown = { ...TICKET, message: 'Ticket not found: try again or choose lost ticket' };
    expect(speechFor(unknown, TICKET)).toEqual({
      text: 'Ticket not found: try again or choose lost ticket.',
      screen: spokenScreen(unknown),
      runs: [{ text: 'Ticket not found: try again or choose lost ticket.', locale: 'en_GB' }],
      screenRuns: [{ text: spokenScreen(unknown), locale: 'en_GB' }],
    });
    expect(speechFor(TICKET, TICKET)).toBeUndefined();
  });

  it('says the same message again when a new event put it there, never for the same event shown again', () => {
    const present: CustomerView = {
      screen: 'present-card',
      title: 'Present your card',
      message: 'Insert, tap or swipe your card',
      amount: AMOUNT,
      actions: ['CANCEL'],
    };
    const useChip = CATALOGUES.en_GB['result.useChip'];
    const refused: CustomerView = { ...present, message: useChip, messageEvent: 1 };
    expect(speechFor(refused, present)?.text).toBe(`${useChip}.`);
    // The same refusal in a later snapshot (a status refresh): nothing new.
    expect(speechFor({ ...refused }, refused)).toBeUndefined();
    // The card swiped again and refused again, in the same words: said again.
    const again: CustomerView = { ...refused, messageEvent: 2 };
    expect(speechFor(again, refused)?.text).toBe(`${useChip}.`);
    expect(speechFor(again, again)).toBeUndefined();
    // The screen in another language is a new screen, said in full once, and not again for the same event.
    const german: CustomerView = {
      ...again,
      message: CATALOGUES.de_DE['result.useChip'],
      language: { current: 'de_DE', lang: 'de-DE', direction: 'ltr', available: [] },
    };
    expect(speechFor(german, again)?.text).toBe(spokenScreen(german));
    expect(speechFor({ ...german }, german)).toBeUndefined();
  });

  it('says a failed tap, and a card the gate cannot take by a tap, as the screen words it, in its language', () => {
    for (const locale of ['en_GB', 'ar_AE'] as const)
      for (const key of [
        'result.tapFailed',
        'result.tapFailedTapOnly',
        'result.useAnotherCardTapOnly',
      ] as const) {
        const message = CATALOGUES[locale][key];
        const view: CustomerView = {
          screen: 'error',
          title: 'Error',
          message,
          actions: ['DONE'],
          language: {
            current: locale,
            lang: locale.replace('_', '-'),
            direction: locale === 'ar_AE' ? 'rtl' : 'ltr',
            available: [],
          },
        };
        expect(spokenScreen(view)).toContain(message);
      }
  });

  it('says an error screen', () => {
    const said = spokenScreen({
      screen: 'declined',
      title: 'Declined',
      message: 'Card declined',
      amount: AMOUNT,
      actions: ['DONE'],
    });
    expect(said).toBe('Declined. Card declined. Amount: 12.50 euros. Enter key: Done.');
  });
});

describe('card data in speech', () => {
  it('never says more of a card number than its last four digits, even when a view carries the full number', () => {
    const careless: CustomerView = {
      ...APPROVED,
      message: `Paid with ${PAN}`,
      title: `Card 4761 7390 0101 0119`,
      maskedPan: PAN,
      receipt: {
        title: 'Parking',
        locale: 'en_GB',
        lang: 'en-GB',
        direction: 'ltr',
        lines: [
          { label: 'Card', value: PAN },
          { label: 'Note', value: `;${PAN}=30122011234567?` },
        ],
      },
    };
    for (const view of [careless, { ...careless, receipt: undefined }, { ...CURRENCY, maskedPan: PAN }]) {
      const said = spokenScreen(view);
      for (const run of digitRuns(said)) expect(run.length, said).toBeLessThan(5);
      expect(said).not.toContain('476173');
      expect(said).not.toContain('3012');
    }
  });

  it('says a masked card number as "card ending", and any other masked entry (a PIN) not at all', () => {
    const tr = translator('en_GB');
    expect(speakable('Card 476173******0119 read', tr)).toBe('Card Card ending 0 1 1 9 read');
    expect(speakable('PIN ****', tr)).toBe('PIN hidden');
    expect(speakable('PIN ••••', tr)).toBe('PIN hidden');
    // Ticket numbers stay, said one digit at a time; amounts, rates and short numbers as they are.
    expect(speakable('Ticket 2026112413050001: €12.50', tr)).toBe(
      'Ticket 2 0 2 6 1 1 2 4 1 3 0 5 0 0 0 1: €12.50',
    );
    expect(speakable('€12,500.00 at 1 EUR = 1.08765 USD, 2026, 12345.5', tr)).toBe(
      '€12,500.00 at 1 EUR = 1.08765 USD, 2026, 12345.5',
    );
  });
});

describe('the language of speech', () => {
  it('speaks in the screen’s language from the catalogue', () => {
    const de = spokenScreen(inLanguage(CURRENCY, 'de_DE'));
    expect(de).toContain('Zahlen Sie 12,50 Euro oder 10,91 Britische Pfund.');
    expect(de).toContain('Wechselkurs: 1 EUR = 0.8728 GBP.');
    expect(de).toContain('Karte mit den Endziffern 0 1 1 9.');
    expect(de).toContain('Abbruch-Taste: Abbrechen.');
    const ar = spokenScreen(inLanguage(DURATIONS, 'ar_AE'));
    expect(ar).toContain(CATALOGUES.ar_AE['speech.chooseKeys']);
    expect(ar).toContain('الخيارات:');
  });

  it('has every speech sentence in every language (no English left in another catalogue)', () => {
    for (const locale of SUPPORTED_LOCALES.filter((l) => !l.startsWith('en'))) {
      const keys = Object.keys(CATALOGUES.en_GB).filter(
        (k) => k.startsWith('speech.') && k !== 'speech.volume',
      );
      for (const key of keys)
        expect(CATALOGUES[locale][key as keyof typeof CATALOGUES.en_GB], `${locale} ${key}`).not.toBe(
          CATALOGUES.en_GB[key as keyof typeof CATALOGUES.en_GB],
        );
    }
  });

  it('names the tactile keys that move between choices and buttons, 4 and 6 (the keypad has no Tab), in the language’s own words', () => {
    const confirm: CustomerView = {
      screen: 'confirm',
      title: 'Parking fee',
      message: 'Ticket 42007',
      amount: AMOUNT,
      actions: ['CONFIRM', 'PAY_BY_LINK', 'CANCEL'],
    };
    for (const locale of SUPPORTED_LOCALES) {
      const moving = CATALOGUES[locale]['speech.chooseKeys'];
      expect(moving, locale).toMatch(/4.*6/);
      expect(moving, locale).not.toMatch(/\bTab/i);
      // Another button than Enter's is reached the same way.
      expect(spokenScreen(inLanguage(confirm, locale)), locale).toContain(moving);
      expect(spokenScreen(inLanguage(DURATIONS, locale)), locale).toContain(moving);
      // Where the digits type (a ticket), 4 and 6 do not move: not said.
      expect(spokenScreen(inLanguage(TICKET, locale)), locale).not.toContain(moving);
    }
    // No English key names in the Arabic voice.
    expect(CATALOGUES.ar_AE['speech.chooseKeys']).not.toMatch(/[A-Za-z]/);
  });

  it('says on every typing screen how to leave the field for the other buttons (the back key on it empty), in every language', () => {
    const details: CustomerView = {
      screen: 'alt-details',
      title: 'Your details',
      message: 'Enter your e-mail address.',
      altField: {
        method: 'Bank transfer',
        field: 'email',
        label: 'Enter your e-mail address.',
        step: 1,
        steps: 3,
        stepText: 'Step 1 of 3',
        inputMode: 'email',
      },
      actions: ['ALT_FIELD', 'CANCEL'],
    };
    for (const locale of SUPPORTED_LOCALES) {
      const ticket = spokenScreen(inLanguage(TICKET, locale));
      const leaving = ticket.slice(ticket.lastIndexOf(CATALOGUES[locale]['label.action.LOST_TICKET']));
      // Said after the buttons it reaches, with the keys that then move.
      expect(leaving, locale).toMatch(/4.*6/);
      expect(leaving, locale).not.toMatch(/\bTab/i);
      expect(spokenScreen(inLanguage(details, locale)), locale).toContain(
        leaving.slice(leaving.indexOf('.') + 1).trim(),
      );
    }
  });

  it('tells a customer who has just turned speech on of the other languages, each name in its own voice', () => {
    const view: CustomerView = {
      ...IDLE,
      language: {
        current: 'en_GB',
        lang: 'en-GB',
        direction: 'ltr',
        available: [
          { locale: 'en_GB', name: 'English', lang: 'en-GB' },
          { locale: 'de_DE', name: 'Deutsch', lang: 'de-DE' },
          { locale: 'ar_AE', name: 'العربية', lang: 'ar-AE' },
        ],
      },
    };
    const first = speechFor(view, undefined);
    expect(first?.text).toContain('Other languages with the Language button: Deutsch. العربية.');
    // Each name with its own language's voice: "العربية" is never handed to the English voice.
    expect(first?.runs).toEqual(
      expect.arrayContaining([
        { text: 'Deutsch.', locale: 'de_DE' },
        { text: 'العربية.', locale: 'ar_AE' },
      ]),
    );
    expect(
      first?.runs
        .filter((r) => r.locale === 'en_GB')
        .map((r) => r.text)
        .join(' '),
    ).not.toContain('العربية');
    // …and how to reach it where the digits do not type (the idle screen has no other button to mention it).
    const moving = CATALOGUES.en_GB['speech.chooseKeys'];
    expect(first?.text.endsWith(`العربية. ${moving}`)).toBe(true);
    const typing = speechFor({ ...TICKET, language: view.language }, undefined)?.text ?? '';
    expect(typing).toContain('Other languages with the Language button:');
    expect(typing).not.toContain(moving);
    // Said with the speech keys, once: the repeat key says the screen.
    expect(first?.screen).not.toContain('Other languages');
    // No other language on offer: nothing to say.
    expect(speechFor(IDLE, undefined)?.text).not.toContain('Other languages');
  });

  it('speaks a new language as a new screen', () => {
    const de = inLanguage(TICKET, 'de_DE');
    expect(speechFor(de, inLanguage(TICKET, 'en_GB'))?.text).toBe(spokenScreen(de));
  });
});
