import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { CustomerView } from './api.js';
import { spokenScreen } from './speech.js';
import { SpeechOutput } from './speech-output.js';
import type { Speaker, SpeechEnd, Utterance } from './speech-speakers.js';

/** A speaker that records what it was asked to say. */
class RecordingSpeaker implements Speaker {
  readonly engine = 'espeak-ng' as const;
  readonly by = 'terminal' as const;
  readonly error = undefined;
  readonly said: Utterance[] = [];
  stops = 0;
  speak(utterance: Utterance): Promise<SpeechEnd> {
    this.said.push(utterance);
    return Promise.resolve('done');
  }
  stop(): void {
    this.stops += 1;
  }
}

const IDLE: CustomerView = { screen: 'idle', title: 'Welcome', message: 'Pay here', actions: ['START'] };
const TICKET: CustomerView = {
  screen: 'enter-ticket',
  title: 'Your ticket',
  message: 'Insert your ticket',
  actions: ['ENTER_TICKET', 'CANCEL'],
  language: { current: 'de_DE', lang: 'de-DE', direction: 'ltr', available: [] },
};

function output(speaker = new RecordingSpeaker()): { out: SpeechOutput; speaker: RecordingSpeaker } {
  const settings = parseConfig({ customer: { speech: { engine: 'espeak-ng', volume: 0.5 } } }).customer
    .speech;
  return { out: new SpeechOutput(settings, silentLogger(), speaker), speaker };
}

describe('speech output of the customer screens', () => {
  it('has its defaults in the configuration and rejects what it does not know', () => {
    expect(parseConfig({}).customer.speech).toEqual({
      engine: 'platform',
      volume: 0.6,
      rate: 1,
      espeakPath: 'espeak-ng',
    });
    expect(() => parseConfig({ customer: { speech: { engine: 'festival' } } })).toThrow();
    expect(() => parseConfig({ customer: { speech: { volume: 2 } } })).toThrow();
    expect(() => parseConfig({ customer: { speech: { loud: true } } })).toThrow();
  });

  it('says nothing while accessibility mode is off', () => {
    const { out, speaker } = output();
    out.observe(IDLE, false);
    out.observe(TICKET, false);
    expect(speaker.said).toEqual([]);
    expect(out.view()).toBeUndefined();
  });

  it('says each new screen in the customer’s language, and the view carries the utterance', () => {
    const { out, speaker } = output();
    out.observe(IDLE, true);
    expect(speaker.said[0]?.text).toMatch(/^Speech is on\..*Welcome\. Pay here\./);
    expect(out.view()).toMatchObject({ id: 1, lang: 'en-GB', volume: 0.5, rate: 1, by: 'terminal' });
    out.observe(IDLE, true);
    expect(speaker.said).toHaveLength(1);
    out.observe(TICKET, true);
    expect(speaker.said[1]).toMatchObject({ locale: 'de_DE', volume: 0.5 });
    expect(speaker.said[1]?.text).toContain('Abbruch-Taste');
    expect(out.view()).toMatchObject({ id: 2, lang: 'de-DE' });
  });

  it("says a receipt issued in the terminal's language with that language's voice, also when repeated", () => {
    const { out, speaker } = output();
    const approved: CustomerView = {
      screen: 'approved',
      title: 'تمت الموافقة',
      message: '',
      actions: ['DONE'],
      language: { current: 'ar_AE', lang: 'ar-AE', direction: 'rtl', available: [] },
      receipt: {
        title: 'City Car Park',
        lines: [{ label: 'Amount', value: '£6.00' }],
        locale: 'en_GB',
        lang: 'en-GB',
        direction: 'ltr',
      },
    };
    out.observe(approved, true);
    const english = { text: 'City Car Park. Amount: £6.00.', lang: 'en-GB' };
    expect(out.view()?.lang).toBe('ar-AE');
    expect(out.view()?.runs).toContainEqual(english);
    expect(out.view()?.runs?.map((r) => r.lang)).toEqual(['ar-AE', 'en-GB', 'ar-AE']);
    expect(speaker.said[0]?.runs).toContainEqual({ text: english.text, locale: 'en_GB' });
    out.command('repeat');
    expect(out.view()?.runs).toContainEqual(english);
    expect(speaker.said[1]?.runs).toContainEqual({ text: english.text, locale: 'en_GB' });
  });

  it('repeats the screen, stops, and changes the volume for this customer only', () => {
    const { out, speaker } = output();
    out.observe(TICKET, true);
    expect(out.command('repeat')).toBe(true);
    expect(speaker.said[1]?.text).toBe(out.view()?.screen);
    expect(out.command('stop')).toBe(true);
    expect(speaker.stops).toBeGreaterThan(0);
    out.command('louder');
    out.command('louder');
    expect(out.view()?.volume).toBe(0.7);
    expect(speaker.said.at(-1)).toMatchObject({ text: 'Lautstärke 70\u00a0%.', volume: 0.7 });
    for (let i = 0; i < 12; i++) out.command('softer');
    expect(out.view()?.volume).toBe(0.1);
  });

  it('says a refusal beside the screen in the screen’s language, and repeat says the screen again', () => {
    const { out, speaker } = output();
    expect(out.aside('Das ist gerade nicht möglich.')).toBe(false);
    expect(speaker.said).toEqual([]);
    out.observe(TICKET, true);
    const screen = out.view();
    expect(out.aside('Das ist gerade nicht möglich.')).toBe(true);
    expect(speaker.said.at(-1)).toMatchObject({ text: 'Das ist gerade nicht möglich.', locale: 'de_DE' });
    expect(out.view()).toMatchObject({ text: 'Das ist gerade nicht möglich.', screen: screen?.screen });
    out.command('repeat');
    expect(speaker.said.at(-1)?.text).toBe(screen?.screen);
  });

  it('echoes a key at once in the screen’s language, never a masked entry, and repeat still says the screen', () => {
    const { out, speaker } = output();
    expect(out.echo('5')).toBe(false);
    expect(speaker.said).toEqual([]);
    out.observe(TICKET, true);
    const view = out.view();
    expect(out.echo('5')).toBe(true);
    expect(speaker.said.at(-1)).toEqual({ text: '5', locale: 'de_DE', volume: 0.5, rate: 1 });
    // A PIN's dots are not said at all, not even as "hidden"; a card number a label carries by mistake is cut out.
    const count = speaker.said.length;
    expect(out.echo('••••')).toBe(false);
    expect(out.echo('PIN 12••')).toBe(false);
    expect(speaker.said).toHaveLength(count);
    expect(out.echo('Karte 4111 1111 1111 1111')).toBe(true);
    expect(speaker.said.at(-1)?.text).not.toMatch(/1111 1111/);
    // The echo is not the screen: the view the renderer receives is unchanged, and repeat says the screen.
    expect(out.view()).toEqual(view);
    out.command('repeat');
    expect(speaker.said.at(-1)?.text).toBe(view?.screen);
  });

  it('echoes a control in its own language with that language’s voice (a language’s name in the list)', () => {
    const { out, speaker } = output();
    out.observe(TICKET, true);
    // "العربية" in a German voice is a string of letter names: an Arabic speaker would not know their language.
    expect(out.echo('العربية', 'ar-AE')).toBe(true);
    expect(speaker.said.at(-1)).toMatchObject({ text: 'العربية', locale: 'ar_AE' });
    expect(out.echo('English', 'en-GB')).toBe(true);
    expect(speaker.said.at(-1)).toMatchObject({ text: 'English', locale: 'en_GB' });
    // A language the terminal has no voice for: the screen's.
    expect(out.echo('Português', 'pt-PT')).toBe(true);
    expect(speaker.said.at(-1)).toMatchObject({ text: 'Português', locale: 'de_DE' });
  });

  it('leaves the echo to the page when the page speaks', () => {
    const settings = parseConfig({}).customer.speech;
    const out = new SpeechOutput(settings, silentLogger());
    out.observe(IDLE, true);
    expect(out.view()?.by).toBe('renderer');
    expect(out.echo('5')).toBe(false);
  });

  it('stops and resets the volume at the end of the session', () => {
    const { out, speaker } = output();
    out.observe(TICKET, true);
    out.command('louder');
    const stops = speaker.stops;
    out.observe(IDLE, false);
    expect(speaker.stops).toBe(stops + 1);
    expect(out.view()).toBeUndefined();
    expect(out.command('repeat')).toBe(false);
    out.observe(IDLE, true);
    expect(out.view()?.volume).toBe(0.5);
  });

  it('says nothing with the engine `none`', () => {
    const settings = parseConfig({ customer: { speech: { engine: 'none' } } }).customer.speech;
    const out = new SpeechOutput(settings, silentLogger());
    out.observe(IDLE, true);
    expect(out.view()).toBeUndefined();
    expect(out.summary()).toEqual({ engine: 'none' });
  });

  it('reads the result and the receipt to the end when the receipt’s QR code is drawn a moment later', () => {
    const APPROVED: CustomerView = {
      screen: 'approved',
      title: 'Approved',
      message: 'Paid: have a good journey',
      amount: { minor: 600, currency: 'GBP', text: '£6.00' },
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
    const { out, speaker } = output();
    const { qr: _qr, ...withoutQr } = APPROVED.receipt!;
    // The result comes first; the QR code (made asynchronously) follows some milliseconds later.
    out.observe({ ...APPROVED, receipt: withoutQr }, true);
    out.observe(APPROVED, true);
    // One utterance, the whole screen: a second one would cut off "Approved …" for "QR code holding this receipt."
    expect(speaker.said.map((u) => u.text)).toHaveLength(1);
    expect(speaker.said[0]?.text).toContain('Approved. Paid: have a good journey.');
    // The repeat key says the screen as it is now, with its QR code.
    expect(out.command('repeat')).toBe(true);
    expect(speaker.said.at(-1)?.text).toBe(spokenScreen(APPROVED));
    expect(out.view()?.screen).toBe(spokenScreen(APPROVED));
  });

  it('tells when the speech ends: the last utterance said, stopped or failed, never one cut off by the next', async () => {
    /** A speaker whose utterances end only when the test ends them. */
    class HeldSpeaker extends RecordingSpeaker {
      readonly ends: ((how: SpeechEnd) => void)[] = [];
      override speak(utterance: Utterance): Promise<SpeechEnd> {
        this.said.push(utterance);
        return new Promise((resolve) => this.ends.push(resolve));
      }
    }
    const speaker = new HeldSpeaker();
    let quiet = 0;
    const settings = parseConfig({ customer: { speech: { engine: 'espeak-ng' } } }).customer.speech;
    const out = new SpeechOutput(settings, silentLogger(), speaker, () => (quiet += 1));
    const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
    expect(out.speaking).toBe(false);

    out.observe(IDLE, true);
    expect(out.speaking).toBe(true);
    out.command('repeat');
    // The first utterance, cut off by the repeat, ends: the repeat is still being said.
    speaker.ends[0]?.('interrupted');
    await settle();
    expect(out.speaking).toBe(true);
    expect(quiet).toBe(0);
    speaker.ends[1]?.('done');
    await settle();
    expect(out.speaking).toBe(false);
    expect(quiet).toBe(1);

    // An echo is speech too; a failed utterance has ended.
    expect(out.echo('5')).toBe(true);
    expect(out.speaking).toBe(true);
    speaker.ends[2]?.('failed');
    await settle();
    expect(out.speaking).toBe(false);
    expect(quiet).toBe(2);
  });

  it('knows from the page whether it says the screen when the page speaks; takes no report it cannot', async () => {
    let quiet = 0;
    const settings = parseConfig({}).customer.speech;
    const out = new SpeechOutput(settings, silentLogger(), undefined, () => (quiet += 1));
    const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
    // Nothing said to this customer: nothing to report on.
    expect(out.pageSpeaking(1, true)).toBe(false);

    out.observe(IDLE, true);
    await settle();
    const first = out.view()?.id ?? 0;
    // Said by the page: the terminal knows it is said only once the page says it has started.
    expect(out.speaking).toBe(false);
    expect(out.pageSpeaking(first, true)).toBe(true);
    expect(out.speaking).toBe(true);
    // An utterance the terminal never gave out: refused, nothing changes.
    expect(out.pageSpeaking(first + 1, true)).toBe(false);
    expect(out.pageSpeaking(first + 1, false)).toBe(false);
    expect(out.pageSpeaking(0, false)).toBe(false);
    expect(out.speaking).toBe(true);

    // A new screen: the page cuts off the first utterance and starts the next; a late start of the first is refused.
    out.observe(TICKET, true);
    await settle();
    const next = out.view()?.id ?? 0;
    expect(next).toBeGreaterThan(first);
    const before = quiet;
    expect(out.pageSpeaking(first, true)).toBe(false);
    expect(out.speaking).toBe(true);
    expect(out.pageSpeaking(next, true)).toBe(true);
    // The first one's end comes after the next one's start: the next one is still being said.
    expect(out.pageSpeaking(first, false)).toBe(true);
    expect(out.speaking).toBe(true);
    expect(quiet).toBe(before);
    expect(out.pageSpeaking(next, false)).toBe(true);
    expect(out.speaking).toBe(false);
    expect(quiet).toBe(before + 1);

    // A new screen whose utterance fails before it starts: its end ends the one it cut off too.
    expect(out.pageSpeaking(next, true)).toBe(true);
    out.observe(IDLE, true);
    await settle();
    const failed = out.view()?.id ?? 0;
    expect(failed).toBeGreaterThan(next);
    expect(out.pageSpeaking(failed, false)).toBe(true);
    expect(out.speaking).toBe(false);

    // The session ends while the page speaks: nothing is said any more.
    expect(out.pageSpeaking(failed, true)).toBe(true);
    out.end();
    expect(out.speaking).toBe(false);
    expect(out.pageSpeaking(failed, true)).toBe(false);
  });

  it('knows the screen is said while any page says it: one page’s end is its own', async () => {
    let quiet = 0;
    const settings = parseConfig({}).customer.speech;
    const out = new SpeechOutput(settings, silentLogger(), undefined, () => (quiet += 1));
    out.observe(IDLE, true);
    await new Promise((r) => setImmediate(r));
    const id = out.view()?.id ?? 0;
    const [kiosk, second] = [1, 2];
    const before = quiet;
    expect(out.pageSpeaking(id, true, kiosk)).toBe(true);
    expect(out.pageSpeaking(id, true, second)).toBe(true);
    expect(out.pageSpeaking(id, false, second)).toBe(true);
    expect(out.speaking).toBe(true);
    expect(quiet).toBe(before);
    // The end from a page that said nothing changes nothing either (a page gone that had stopped already).
    expect(out.pageSpeaking(id, false, 3)).toBe(true);
    expect(out.speaking).toBe(true);
    expect(out.pageSpeaking(id, false, kiosk)).toBe(true);
    expect(out.speaking).toBe(false);
    expect(quiet).toBe(before + 1);
  });

  it('takes no report from a page when the terminal speaks itself', () => {
    const { out } = output();
    out.observe(IDLE, true);
    expect(out.pageSpeaking(out.view()?.id ?? 0, true)).toBe(false);
  });
});
