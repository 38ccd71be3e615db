import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomerView, SpeechView, UserEvent } from '../../src/host/api.js';
import { ScreenSpeech, voiceFor, type Synthesis } from './speech.js';

/** The Web Speech API's utterance as far as the renderer uses it (node has none). */
class FakeUtterance {
  lang = '';
  volume = 1;
  rate = 1;
  voice: SpeechSynthesisVoice | null = null;
  onstart: (() => void) | null = null;
  onend: (() => void) | null = null;
  onerror: ((e: { error: string }) => void) | null = null;
  constructor(readonly text: string) {}
}

const original = (globalThis as { SpeechSynthesisUtterance?: unknown }).SpeechSynthesisUtterance;
beforeAll(() => {
  (globalThis as { SpeechSynthesisUtterance?: unknown }).SpeechSynthesisUtterance = FakeUtterance;
});
afterAll(() => {
  (globalThis as { SpeechSynthesisUtterance?: unknown }).SpeechSynthesisUtterance = original;
});

const voice = (lang: string): SpeechSynthesisVoice => ({ lang, name: lang }) as SpeechSynthesisVoice;

function synthesis(): Synthesis & { spoken: FakeUtterance[]; cancels: number } {
  const s = {
    spoken: [] as FakeUtterance[],
    cancels: 0,
    // The page's utterances are FakeUtterance here (beforeAll): its handlers are called with no event.
    speak: (u: SpeechSynthesisUtterance) => void s.spoken.push(u as unknown as FakeUtterance),
    cancel: () => void (s.cancels += 1),
    getVoices: () => [voice('en-US'), voice('de-DE'), voice('ar')],
  };
  return s;
}

const SPEECH: SpeechView = {
  id: 1,
  text: 'Welcome. Pay here.',
  screen: 'Welcome. Pay here.',
  lang: 'de-DE',
  volume: 0.6,
  rate: 1,
  by: 'renderer',
};
const VIEW: CustomerView = {
  screen: 'idle',
  title: 'Welcome',
  message: 'Pay here',
  actions: ['START'],
  accessibility: true,
  speech: SPEECH,
};

describe('ScreenSpeech', () => {
  it('says each utterance once, with its language, volume and rate, cutting off the one before', () => {
    const s = synthesis();
    const speech = new ScreenSpeech(() => undefined, s);
    speech.update(VIEW);
    speech.update(VIEW);
    expect(s.spoken.map((u) => u.text)).toEqual(['Welcome. Pay here.']);
    expect(s.spoken[0]).toMatchObject({ lang: 'de-DE', volume: 0.6, rate: 1 });
    expect(s.spoken[0]?.voice?.lang).toBe('de-DE');
    speech.update({ ...VIEW, speech: { ...SPEECH, id: 2, text: 'Card declined.' } });
    expect(s.spoken.map((u) => u.text)).toEqual(['Welcome. Pay here.', 'Card declined.']);
    expect(s.cancels).toBe(2);
  });

  it('says each run in its own language with its voice: a receipt in the terminal’s language on an Arabic screen', () => {
    const s = synthesis();
    const speech = new ScreenSpeech(() => undefined, s);
    const runs = [
      { text: 'تمت الموافقة. الإيصال.', lang: 'ar-AE' },
      { text: 'Amount: £6.00.', lang: 'en-US' },
    ];
    const text = runs.map((r) => r.text).join(' ');
    speech.update({
      ...VIEW,
      speech: { ...SPEECH, text, screen: text, lang: 'ar-AE', runs, screenRuns: runs },
    });
    expect(s.spoken.map((u) => [u.text, u.lang, u.voice?.lang])).toEqual([
      ['تمت الموافقة. الإيصال.', 'ar-AE', 'ar'],
      ['Amount: £6.00.', 'en-US', 'en-US'],
    ]);
    // The repeat key says the screen's runs the same way; one cancel before each utterance, none between its runs.
    const cancels = s.cancels;
    speech.command('repeat');
    expect(s.spoken.slice(2).map((u) => u.lang)).toEqual(['ar-AE', 'en-US']);
    expect(s.cancels).toBe(cancels + 1);
  });

  it('repeats and stops by itself, and leaves the volume to the terminal', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    expect(speech.command('repeat')).toBe(false);
    speech.update({ ...VIEW, speech: { ...SPEECH, text: 'Volume 70%.' } });
    expect(speech.command('repeat')).toBe(true);
    expect(s.spoken.at(-1)?.text).toBe('Welcome. Pay here.');
    const cancels = s.cancels;
    speech.command('stop');
    expect(s.cancels).toBe(cancels + 1);
    speech.command('louder');
    expect(sent).toEqual([{ type: 'SPEECH', command: 'louder' }]);
  });

  it('says nothing in normal mode, and stops when the mode ends', () => {
    const s = synthesis();
    const speech = new ScreenSpeech(() => undefined, s);
    speech.update({ ...VIEW, accessibility: undefined });
    expect(s.spoken).toEqual([]);
    speech.update(VIEW);
    const cancels = s.cancels;
    speech.update({ ...VIEW, accessibility: undefined, speech: undefined });
    expect(s.cancels).toBe(cancels + 1);
    expect(speech.on).toBe(false);
  });

  it('sends every key to the terminal when the terminal speaks itself', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    speech.update({ ...VIEW, speech: { ...SPEECH, by: 'terminal' } });
    speech.command('repeat');
    speech.command('stop');
    expect(s.spoken).toEqual([]);
    expect(sent.map((e) => e.type === 'SPEECH' && e.command)).toEqual(['repeat', 'stop']);
  });

  it('echoes a key or control when the page speaks, never a masked entry', () => {
    const s = synthesis();
    const speech = new ScreenSpeech(() => undefined, s);
    speech.echo('5');
    expect(s.spoken).toEqual([]);
    speech.update(VIEW);
    speech.echo('5');
    speech.echo('••••');
    speech.echo('  ');
    expect(s.spoken.map((u) => u.text)).toEqual(['Welcome. Pay here.', '5']);
  });

  it('sends the echo to the terminal when the terminal speaks, never a masked entry', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    speech.echo('5');
    expect(sent).toEqual([]);
    speech.update({ ...VIEW, speech: { ...SPEECH, by: 'terminal' } });
    speech.echo(' 5 ');
    speech.echo('••••');
    speech.echo('  ');
    speech.echo('x'.repeat(300));
    expect(s.spoken).toEqual([]);
    expect(sent).toEqual([
      { type: 'ECHO', text: '5' },
      { type: 'ECHO', text: 'x'.repeat(200) },
    ]);
  });

  it('tells the terminal when it starts and stops saying an utterance, never of one cut off by the next', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    const state = (id: number, speaking: boolean): UserEvent => ({ type: 'SPEECH_STATE', id, speaking });
    speech.update(VIEW);
    const [first] = s.spoken;
    expect(sent).toEqual([]);
    first?.onstart?.();
    expect(sent).toEqual([state(1, true)]);

    // A new screen in two languages cuts the first off: its end is not the speech's end, the new one's is.
    const runs = [
      { text: 'تم الرفض.', lang: 'ar-AE' },
      { text: 'Card declined.', lang: 'en-US' },
    ];
    speech.update({ ...VIEW, speech: { ...SPEECH, id: 2, text: 'تم الرفض. Card declined.', runs } });
    first?.onerror?.({ error: 'interrupted' });
    first?.onend?.();
    const [ar, en] = s.spoken.slice(1);
    ar?.onstart?.();
    ar?.onend?.();
    en?.onstart?.();
    expect(sent).toEqual([state(1, true), state(2, true)]);
    en?.onend?.();
    expect(sent).toEqual([state(1, true), state(2, true), state(2, false)]);

    // The repeat key says it again; the stop key ends it; an utterance that fails has ended too.
    sent.length = 0;
    speech.command('repeat');
    const again = s.spoken.at(-1);
    again?.onstart?.();
    speech.command('stop');
    again?.onerror?.({ error: 'interrupted' });
    speech.echo('5');
    const echo = s.spoken.at(-1);
    echo?.onerror?.({ error: 'synthesis-failed' });
    expect(sent).toEqual([state(2, true), state(2, false), state(2, false)]);

    // Speech off: nothing more is told of what was being said.
    sent.length = 0;
    speech.command('repeat');
    const last = s.spoken.at(-1);
    last?.onstart?.();
    speech.update({ ...VIEW, accessibility: undefined, speech: undefined });
    last?.onerror?.({ error: 'interrupted' });
    expect(sent).toEqual([state(2, true)]);
  });

  it('tells the terminal again, once connected again, what it is still saying', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    speech.update(VIEW);
    speech.reconnected();
    expect(sent).toEqual([]);
    const [first] = s.spoken;
    first?.onstart?.();
    // The connection was lost meanwhile (the terminal took it as the end): the start is told again.
    speech.reconnected();
    const start: UserEvent = { type: 'SPEECH_STATE', id: 1, speaking: true };
    expect(sent).toEqual([start, start]);
    first?.onend?.();
    speech.reconnected();
    expect(sent).toEqual([start, start, { type: 'SPEECH_STATE', id: 1, speaking: false }]);
  });

  it('tells the terminal nothing of speech when the terminal speaks itself', () => {
    const s = synthesis();
    const sent: UserEvent[] = [];
    const speech = new ScreenSpeech((e) => sent.push(e), s);
    speech.update({ ...VIEW, speech: { ...SPEECH, by: 'terminal' } });
    expect(s.spoken).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('picks the voice of the language and region, else of the language', () => {
    const voices = [voice('en-US'), voice('en-GB'), voice('ar')];
    expect(voiceFor(voices, 'en-GB')?.lang).toBe('en-GB');
    expect(voiceFor(voices, 'ar-AE')?.lang).toBe('ar');
    expect(voiceFor(voices, 'pl-PL')).toBeUndefined();
  });
});
