import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { CustomerView } from './api.js';
import { spokenScreen } from './speech.js';
import { SpeechOutput } from './speech-output.js';
import type { Speaker, SpeechEnd, Utterance } from './speech-speakers.js';

/** A terminal voice that keeps what it was asked to say (each `speak` cuts off the one before, as espeak-ng does). */
class RecordingSpeaker implements Speaker {
  readonly engine = 'espeak-ng' as const;
  readonly by = 'terminal' as const;
  readonly error = undefined;
  readonly said: string[] = [];
  speak(utterance: Utterance): Promise<SpeechEnd> {
    this.said.push(utterance.text);
    return Promise.resolve('done');
  }
  stop(): void {}
}

const AMOUNT = { minor: 600, currency: 'GBP', text: '£6.00' };

const APPROVED: CustomerView = {
  screen: 'approved',
  title: 'Approved',
  message: 'Paid: have a good journey',
  amount: AMOUNT,
  maskedPan: '476173******0119',
  receipt: {
    title: 'Parking',
    lines: [
      { label: 'Amount', value: '£6.00' },
      { label: 'Card', value: '**** **** **** 0119' },
      { label: 'Transaction', value: 'PT-000001-42' },
    ],
    locale: 'en_GB',
    lang: 'en-GB',
    direction: 'ltr',
    qr: { svg: '<svg/>', alt: 'QR code holding this receipt', url: 'https://pay.example/r/abc' },
  },
  actions: ['DONE'],
};

function output(): { speech: SpeechOutput; speaker: RecordingSpeaker } {
  const speaker = new RecordingSpeaker();
  const config = parseConfig({ customer: { speech: { engine: 'espeak-ng' } } });
  return { speech: new SpeechOutput(config.customer.speech, silentLogger(), speaker), speaker };
}

describe('speech output of the result screen', () => {
  it('reads the result and the receipt to the end when the receipt’s QR code is drawn a moment later', () => {
    const { speech, speaker } = output();
    const { qr: _qr, ...withoutQr } = APPROVED.receipt!;
    // The result comes first; the QR code (made asynchronously) follows some milliseconds later.
    speech.observe({ ...APPROVED, receipt: withoutQr }, true);
    speech.observe(APPROVED, true);
    // One utterance, the whole screen: a second one would cut off "Approved …" for "QR code holding this receipt."
    expect(speaker.said).toHaveLength(1);
    expect(speaker.said[0]).toContain('Approved. Paid: have a good journey.');
    // The repeat key says the screen as it is now, with its QR code.
    expect(speech.command('repeat')).toBe(true);
    expect(speaker.said.at(-1)).toBe(spokenScreen(APPROVED));
    expect(speech.view()?.screen).toBe(spokenScreen(APPROVED));
  });
});
