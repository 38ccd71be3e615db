import type {
  CustomerView,
  SpeechCommand,
  SpeechRunView,
  SpeechView,
  UserEvent,
} from '../../src/host/api.js';
import { button, h } from './dom.js';
import { labelFor } from './view-model.js';

/**
 * Speech output in the browser (EN 301 549 5.1.3): when the terminal's view carries `speech` spoken `by: 'renderer'`
 * (`customer.speech.engine: platform`), the page says it through the platform's speech synthesis (Web Speech API:
 * Electron and Chromium use the system's synthesiser), each utterance id once, a new one cutting off the one before.
 * The terminal decides what is said and when (only in accessibility mode; never a PIN, never more of a card than its
 * last four digits); the renderer only says it, repeats it, stops it. When the terminal speaks itself (espeak-ng),
 * the speech keys go to it as SPEECH events and the input echo as ECHO events.
 *
 * The page tells the terminal when it starts and stops saying (SPEECH_STATE, with the utterance id it was given): a
 * result screen stays while it is being said (src/host/result-screen.ts). Only what is said last counts: the end of
 * an utterance cut off by the next one (a new screen, the repeat key, an echo) is not told; the next one's is.
 */

/** The part of `window.speechSynthesis` used here (tests stub it). */
export type Synthesis = Pick<SpeechSynthesis, 'speak' | 'cancel' | 'getVoices'>;

/** The voice for a BCP 47 tag: the exact language and region, else the language alone, else the platform's choice. */
export function voiceFor(
  voices: readonly SpeechSynthesisVoice[],
  lang: string,
): SpeechSynthesisVoice | undefined {
  const wanted = lang.toLowerCase().replace('_', '-');
  const language = wanted.split('-')[0] ?? wanted;
  return (
    voices.find((v) => v.lang.toLowerCase().replace('_', '-') === wanted) ??
    voices.find((v) => v.lang.toLowerCase().split(/[-_]/)[0] === language)
  );
}

export class ScreenSpeech {
  #speech: SpeechView | undefined;
  #spokenId: number | undefined;
  /** Counts what is said: only the last utterance's start and end are told. */
  #turn = 0;
  /** The utterance being said, as told to the terminal (its start told, its end not yet). */
  #saying: number | undefined;

  constructor(
    private readonly send: (event: UserEvent) => void,
    private readonly synthesis: Synthesis | undefined = globalThis.speechSynthesis,
  ) {}

  /** Called with every view shown: says a new utterance; stops talking when speech is off (the session is over). */
  update(view: CustomerView): void {
    const speech = view.accessibility === true ? view.speech : undefined;
    if (!speech) {
      // The session is over: the terminal has stopped listening for what was being said.
      this.#turn += 1;
      this.#saying = undefined;
      if (this.#speech?.by === 'renderer') this.synthesis?.cancel();
      this.#speech = undefined;
      this.#spokenId = undefined;
      return;
    }
    this.#speech = speech;
    if (speech.by !== 'renderer' || speech.id === this.#spokenId) return;
    this.#spokenId = speech.id;
    this.#say(speech.text, speech, speech.runs);
  }

  /** Whether the screen is spoken now (the speech keys act only then). */
  get on(): boolean {
    return this.#speech !== undefined;
  }

  /**
   * Connected to the terminal again (a new socket): the terminal took the lost connection as the end of the page's
   * speech, so the start of what is still being said is told again.
   */
  reconnected(): void {
    if (this.#saying !== undefined) this.send({ type: 'SPEECH_STATE', id: this.#saying, speaking: true });
  }

  /**
   * A speech key: `repeat` says the whole screen again and `stop` stops talking, here when the page speaks; `louder`
   * and `softer` (and everything when the terminal speaks) go to the terminal, which keeps the customer's volume and
   * resets it after the session. False when speech is off.
   */
  command(command: SpeechCommand): boolean {
    const speech = this.#speech;
    if (!speech) return false;
    if (speech.by === 'renderer' && command === 'repeat') this.#say(speech.screen, speech, speech.screenRuns);
    else if (speech.by === 'renderer' && command === 'stop') this.synthesis?.cancel();
    else this.send({ type: 'SPEECH', command });
    return true;
  }

  /**
   * Input echo (EN 301 549 5.1.3): says what the customer just pressed or moved to — a key of the screen keypad, the
   * control Tab reached — here when the page is the one speaking, else by the terminal (an ECHO event); with the
   * voice of `lang` when the control is in a language of its own (a language's name in the language list). A text
   * with a masked run (a PIN's dots) is never said, nor sent.
   */
  echo(text: string, lang?: string): void {
    const speech = this.#speech;
    const said = text.trim();
    if (!speech || said.length === 0 || /[*•●]{2,}/.test(said)) return;
    const own = lang !== undefined && lang.length > 0 && lang !== speech.lang ? lang : undefined;
    if (speech.by === 'renderer') this.#say(said, speech, own ? [{ text: said, lang: own }] : undefined);
    else this.send({ type: 'ECHO', text: said.slice(0, 200), ...(own ? { lang: own } : {}) });
  }

  /**
   * Says `text`, cutting off what is being said: by its `runs` when the terminal gives them (part of it in another
   * language than the screen's, a receipt issued in the terminal's language), each run an utterance of its own with
   * its language's voice, queued one after the other; else as one utterance in the screen's language. Tells the
   * terminal when the first run starts, and when the last one has been said or any run ends otherwise (stopped,
   * failed) — unless something else has been said since.
   */
  #say(text: string, speech: SpeechView, runs?: readonly SpeechRunView[]): void {
    const synthesis = this.synthesis;
    if (!synthesis || typeof SpeechSynthesisUtterance === 'undefined') return;
    const turn = ++this.#turn;
    this.#saying = undefined;
    synthesis.cancel();
    const voices = synthesis.getVoices();
    const parts = runs ?? [{ text, lang: speech.lang }];
    let ended = false;
    const tell = (speaking: boolean): void => {
      if (turn !== this.#turn || ended) return;
      ended = !speaking;
      this.#saying = speaking ? speech.id : undefined;
      this.send({ type: 'SPEECH_STATE', id: speech.id, speaking });
    };
    parts.forEach((run, i) => {
      const utterance = new SpeechSynthesisUtterance(run.text);
      utterance.lang = run.lang;
      utterance.volume = speech.volume;
      utterance.rate = speech.rate;
      const voice = voiceFor(voices, run.lang);
      if (voice) utterance.voice = voice;
      if (i === 0) utterance.onstart = () => tell(true);
      if (i === parts.length - 1) utterance.onend = () => tell(false);
      utterance.onerror = () => tell(false);
      synthesis.speak(utterance);
    });
  }
}

/**
 * What a control is called, as a screen reader would say it: its `aria-label`, its label element, else its text. A
 * password field (a masked entry) is never named by its content.
 */
export function spokenName(target: EventTarget | null): string {
  if (!(target instanceof HTMLElement)) return '';
  const label = target.getAttribute('aria-label');
  if (label) return label;
  if (target instanceof HTMLInputElement) return target.labels?.[0]?.textContent ?? '';
  return target.textContent ?? '';
}

/** The language a control is in (its nearest `lang`): a language's name in the language list is in its own. */
export function spokenLang(target: EventTarget | null): string | undefined {
  if (!(target instanceof HTMLElement)) return undefined;
  return target.closest('[lang]')?.getAttribute('lang') ?? undefined;
}

/**
 * The speech keys on screen, in accessibility mode while the screen is spoken: repeat (the keypad's `*`), stop (`#`),
 * louder (`+`) and softer (`-`). Null otherwise.
 */
export function speechButtons(view: CustomerView, command: (c: SpeechCommand) => void): HTMLElement | null {
  if (view.accessibility !== true || !view.speech) return null;
  const label = (key: string, fallback: string): string => labelFor(view.labels, key, fallback);
  const key = (c: SpeechCommand, fallback: string): HTMLButtonElement =>
    button(
      label(`speech.${c}`, fallback),
      `speech-${c}`,
      () => command(c),
      'btn btn-secondary speech-button',
    );
  return h(
    'div',
    { class: 'speech-keys', testid: 'speech-keys' },
    key('repeat', 'Repeat (star)'),
    key('stop', 'Stop speech (hash)'),
    key('louder', 'Louder (plus)'),
    key('softer', 'Softer (minus)'),
  );
}
