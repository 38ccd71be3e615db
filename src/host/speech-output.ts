/**
 * Speech output of the customer's screens (EN 301 549 5.1.3; ADA §707.5; kiosk.md §2), the host's side: only while
 * the customer has accessibility mode on, each new screen is said in full and each change on a screen (a new
 * message, the question "Do you need more time?", an error) by itself, in the customer's language; the speech keys
 * repeat, stop, and make it louder or softer; at the end of the session speech stops and the volume goes back to
 * `customer.speech.volume`. What is said comes from src/host/speech.ts (never a PIN, never more of a card number than
 * its last four digits); who says it from the {@link Speaker} of `customer.speech.engine`.
 */
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { intlLocale, resolveLocale, translator } from '../i18n/index.js';
import type { CustomerView, SpeechCommand, SpeechView } from './api.js';
import { hasMaskedRun, speakable, speechFor, type SpeechRun } from './speech.js';
import { createSpeaker, type Speaker, type SpeechError, type Utterance } from './speech-speakers.js';

/** How much one press of the louder or softer key changes the volume. */
export const VOLUME_STEP = 0.1;
const MIN_VOLUME = 0.1;

/** What the operator status says of speech output. */
export interface SpeechSummary {
  engine: string;
  lastError?: string;
}

export class SpeechOutput {
  readonly speaker: Speaker;
  private nextId = 0;
  /** The last utterance, as the renderer receives it; undefined while nothing is said to this customer. */
  private said: SpeechView | undefined;
  /** The runs of the screen last spoken, for the repeat key (the view carries them as BCP 47 tags). */
  private screenRuns: readonly SpeechRun[] | undefined;
  /** The screen last spoken: the next view is compared with it. */
  private lastView: CustomerView | undefined;
  private volume: number;
  /** Counts utterances: only the end of the last one said ends the speech ({@link speaking}). */
  private turn = 0;
  private talking = false;
  /**
   * The utterance each page says it is saying (`platform`: {@link pageSpeaking}), by page; a page that says none has
   * no entry.
   */
  private readonly pagesSay = new Map<number, number>();

  /**
   * `onQuiet`: told when the speech ends — the last utterance said to the end, stopped, or not said at all (never
   * when it is cut off by the next one, whose end counts).
   */
  constructor(
    private readonly settings: Config['customer']['speech'],
    private readonly logger: Logger,
    speaker?: Speaker,
    private readonly onQuiet?: () => void,
  ) {
    this.volume = settings.volume;
    this.speaker = speaker ?? createSpeaker(settings, (e) => this.report(e));
  }

  /**
   * Whether something is being said to the customer now: an utterance the terminal's own speaker has not reported the
   * end of (espeak-ng), or one a page has said it is saying and has not said it stopped ({@link pageSpeaking}). The
   * renderer's speaker (`platform`) reports every utterance ended at once: only the pages know.
   */
  get speaking(): boolean {
    return this.talking || this.pagesSay.size > 0;
  }

  /**
   * A page's report on its own speech (`platform`; the SPEECH_STATE event): `page` (one per socket or window; see
   * the event) has started saying utterance `id` (`speaking`), or has stopped saying it — said to the end, stopped,
   * or not said at all. The end of the utterance that page last said it was saying, or of a later one (which cut it
   * off), ends that page's speech; the end of an earlier one, reported late, does not; another page's speech goes on.
   * Once no page is saying anything the end is told as the terminal's own speaker's is (`onQuiet`). False, and nothing
   * changes, when the pages do not speak here (the terminal does, or nobody), nothing is said to this customer, `id`
   * was never given out, or a start is not of the utterance given out last (a late one).
   */
  pageSpeaking(id: number, speaking: boolean, page = 0): boolean {
    const said = this.said;
    if (said === undefined || this.speaker.by !== 'renderer' || id < 1 || id > said.id) return false;
    if (speaking) {
      if (id !== said.id) return false;
      this.pagesSay.set(page, id);
      return true;
    }
    // The end of a later utterance than the one the page said it was saying ends that one too (it was cut off, and the
    // page tells only the end of what it says last): one that failed before it started, say.
    const says = this.pagesSay.get(page);
    if (says === undefined || id < says) return true;
    this.pagesSay.delete(page);
    if (this.pagesSay.size === 0) this.onQuiet?.();
    return true;
  }

  /**
   * Called with every customer view the terminal shows. `accessible`: the customer's accessibility mode; when it is
   * off (never on, turned off, or the session is over), speech stops and the volume is reset.
   */
  observe(view: CustomerView, accessible: boolean): void {
    if (!accessible || this.speaker.by === undefined) {
      this.end();
      return;
    }
    const spoken = speechFor(view, this.lastView);
    this.lastView = view;
    const locale = view.language?.current ?? this.said?.lang ?? 'en_GB';
    if (!spoken) return;
    if (spoken.text === '') this.grow(spoken.screen, spoken.screenRuns);
    else this.say(spoken.text, spoken.screen, locale, spoken.runs, spoken.screenRuns);
  }

  /**
   * The screen being said has grown by a part said with it only (src/host/speech.ts `SILENT_PARTS`): nothing is said
   * now, which would cut off what is being said; the repeat key says the screen as it is.
   */
  private grow(screen: string, screenRuns: readonly SpeechRun[]): void {
    const said = this.said;
    if (!said) return;
    this.screenRuns = screenRuns;
    const lang = resolveLocale(said.lang);
    const { screenRuns: _before, ...rest } = said;
    this.said = {
      ...rest,
      screen,
      ...(screenRuns.some((r) => r.locale !== lang)
        ? { screenRuns: screenRuns.map((r) => ({ text: r.text, lang: intlLocale(r.locale) })) }
        : {}),
    };
  }

  /**
   * A speech key. `repeat` says the whole screen again, `stop` stops talking, `louder` and `softer` change the volume
   * by {@link VOLUME_STEP} for this customer and say the new volume. False when there is nothing to act on.
   */
  command(command: SpeechCommand): boolean {
    const said = this.said;
    if (!said) return false;
    switch (command) {
      case 'repeat':
        this.say(said.screen, said.screen, said.lang, this.screenRuns, this.screenRuns);
        return true;
      case 'stop':
        this.speaker.stop();
        return true;
      case 'louder':
      case 'softer': {
        const step = command === 'louder' ? VOLUME_STEP : -VOLUME_STEP;
        this.volume = Math.round(Math.min(1, Math.max(MIN_VOLUME, this.volume + step)) * 100) / 100;
        const level = new Intl.NumberFormat(intlLocale(resolveLocale(said.lang)), {
          style: 'percent',
        }).format(this.volume);
        this.say(translator(said.lang).t('speech.volume', { level }), said.screen, said.lang);
        return true;
      }
    }
  }

  /**
   * Says `text` beside the screen (the reason an event was refused) while something is said to this customer; the
   * repeat key still says the screen. False when speech is off.
   */
  aside(text: string): boolean {
    const said = this.said;
    if (!said) return false;
    this.say(text, said.screen, said.lang);
    return true;
  }

  /**
   * Input echo while the terminal speaks: says `text` (a key's or a control's name, from the renderer) at once,
   * through the card-data guard ({@link speakable}), without changing what the repeat key says — in the screen's
   * language, or in `lang` when the control is in a language of its own (a language's name in the language list: an
   * Arabic speaker knows "العربية" said by an Arabic voice, not spelt out by an English one). False, and nothing said,
   * when nothing is said to this customer, when the page speaks (it echoes by itself), or when the text holds a
   * masked run (a PIN's dots) or nothing speakable.
   */
  echo(text: string, lang?: string): boolean {
    const said = this.said;
    if (!said || this.speaker.by !== 'terminal' || hasMaskedRun(text)) return false;
    const locale = resolveLocale(lang, said.lang);
    const spoken = speakable(text, translator(locale));
    if (spoken.length === 0) return false;
    this.utter({ text: spoken, locale, volume: this.volume, rate: this.settings.rate });
    return true;
  }

  /** The speech of the view the renderer receives, while something is said to this customer. */
  view(): SpeechView | undefined {
    return this.said;
  }

  /** Stops talking, forgets the screen and resets the volume: the next customer starts afresh. */
  end(): void {
    if (this.said) this.speaker.stop();
    this.said = undefined;
    this.pagesSay.clear();
    this.screenRuns = undefined;
    this.lastView = undefined;
    this.volume = this.settings.volume;
  }

  summary(): SpeechSummary {
    const error = this.speaker.error;
    return {
      engine: this.settings.engine,
      ...(error ? { lastError: `${error.code}: ${error.message}` } : {}),
    };
  }

  /**
   * Says `text` in `locale`, or by its `runs` when part of it is in another language (a receipt issued in the
   * terminal's language): each run with its own language's voice. `screenRuns` are those of `screen`; an aside keeps
   * the screen's runs for the repeat key.
   */
  private say(
    text: string,
    screen: string,
    locale: string,
    runs?: readonly SpeechRun[],
    screenRuns: readonly SpeechRun[] | undefined = this.screenRuns,
  ): void {
    this.nextId += 1;
    const lang = resolveLocale(locale);
    const mixed = runs !== undefined && runs.some((r) => r.locale !== lang);
    const screenMixed = screenRuns !== undefined && screenRuns.some((r) => r.locale !== lang);
    const view = (r: SpeechRun): { text: string; lang: string } => ({
      text: r.text,
      lang: intlLocale(r.locale),
    });
    this.screenRuns = screenRuns;
    this.said = {
      id: this.nextId,
      text,
      screen,
      lang: intlLocale(lang),
      ...(mixed ? { runs: runs.map(view) } : {}),
      ...(screenMixed ? { screenRuns: screenRuns.map(view) } : {}),
      volume: this.volume,
      rate: this.settings.rate,
      by: this.speaker.by ?? 'renderer',
    };
    this.utter({
      text,
      locale: lang,
      ...(mixed ? { runs } : {}),
      volume: this.volume,
      rate: this.settings.rate,
    });
  }

  /** Every utterance goes through here: the speaker cuts off the one before, and the end of the last one is told. */
  private utter(utterance: Utterance): void {
    const turn = ++this.turn;
    this.talking = true;
    void this.speaker.speak(utterance).then(() => {
      if (turn !== this.turn) return;
      this.talking = false;
      this.onQuiet?.();
    });
  }

  private report(error: SpeechError): void {
    this.logger.error({ err: error, code: error.code }, 'speech output cannot speak');
  }
}
