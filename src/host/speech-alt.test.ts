import { describe, expect, it } from 'vitest';
import type { CustomerView } from './api.js';
import { speechFor, spokenScreen } from './speech.js';

const base = { title: 'Your details', actions: ['ALT_FIELD', 'CANCEL'] } as const;

/** The first of three steps of a bank transfer's details: the e-mail address, nothing refused yet. */
const emailStep: CustomerView = {
  ...base,
  screen: 'alt-details',
  actions: [...base.actions],
  message: 'Enter your e-mail address. The receipt is sent there.',
  altField: {
    method: 'Bank transfer',
    field: 'email',
    label: 'Enter your e-mail address. The receipt is sent there.',
    step: 1,
    steps: 3,
    stepText: 'Step 1 of 3',
    inputMode: 'email',
  },
};

describe('speech of the alternative methods', () => {
  it('names the methods beside the card by their labels', () => {
    const view: CustomerView = {
      screen: 'confirm',
      title: 'Please confirm',
      message: 'Parking fee',
      actions: ['CONFIRM', 'ALT_METHOD', 'CANCEL'],
      altMethods: [
        { profile: 1, label: 'Bank transfer' },
        { profile: 3, label: 'Online banking' },
      ],
    };
    expect(spokenScreen(view, 'en_GB')).toContain('Bank transfer and Online banking');
  });

  it('says the field, the step and the problem, and Enter as Next; never a typed value (the view has none)', () => {
    const view: CustomerView = {
      ...emailStep,
      altField: { ...emailStep.altField!, problem: 'This is not an e-mail address.' },
    };
    const said = spokenScreen(view, 'en_GB');
    expect(said).toContain('Bank transfer: Step 1 of 3.');
    expect(said).toContain('This is not an e-mail address.');
    expect(said).toContain('Next');
  });

  it('says the same problem again for a value refused again, never for the same refusal shown again', () => {
    const asked = emailStep;
    const problem = 'This is not an e-mail address.';
    const refused: CustomerView = { ...asked, altField: { ...asked.altField!, problem, problemEvent: 1 } };
    expect(speechFor(refused, asked)?.text).toBe(problem);
    // The same refusal in a later snapshot (a status refresh): nothing new.
    expect(speechFor({ ...refused }, refused)).toBeUndefined();
    // The same wrong value typed again: refused again, in the same words, and said again.
    const again: CustomerView = { ...refused, altField: { ...refused.altField!, problemEvent: 2 } };
    expect(speechFor(again, refused)?.text).toBe(problem);
    expect(speechFor({ ...again }, again)).toBeUndefined();
  });

  it('reads out the pending sale’s address and reference: the QR code’s non-visual alternative', () => {
    const view: CustomerView = {
      screen: 'alt-pending',
      title: 'Payment pending',
      message: 'Payment by Bank transfer pending.',
      actions: ['DONE'],
      altPending: {
        saleId: 1,
        method: 'Bank transfer',
        url: 'https://pay.example/ap/1',
        qr: { svg: '<svg/>', modules: 33, alt: 'QR code of the payment page' },
        reference: 'Reference: 2026112413050001',
        note: 'The receipt is sent by e-mail once the payment is confirmed.',
      },
    };
    const said = spokenScreen(view, 'en_GB');
    expect(said).toContain('https://pay.example/ap/1');
    // Said one digit at a time, as the customer will type or quote it.
    expect(said).toContain('Reference: 2 0 2 6 1 1 2 4 1 3 0 5 0 0 0 1.');
  });
});
