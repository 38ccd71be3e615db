/**
 * Time limits on the customer's input screens (WCAG 2.2.1 "Timing adjustable"): a customer who stops answering is
 * asked "Do you need more time?" and, with no answer, the screen goes back to the attract screen. Only screens where
 * the customer is choosing or typing are timed — the currency choice among them (nothing is sent before it is made):
 * once a card is being read or a payment is with the gateway, nothing here interrupts (a payment in progress is never
 * abandoned by a timer).
 *
 * The card presentation (`present-card`) is timed by the reader's wait, for every customer (WCAG 2.2.1 leaves no
 * unannounced limit to anyone; a blind customer may still be looking for the reader): the reader's activation covers
 * the configured wait and the question's answer time (`cardWaitSeconds`, src/config/card-wait.ts, both times the
 * factor in accessibility mode) and the question is asked while it still waits, so that its answer time ends before it;
 * a yes starts a fresh activation (the host sends READ_AGAIN), no answer cancels the sale as on any input screen.
 * Nothing was sent while the card is awaited: nothing is charged twice, no hold is left. A card the reader has detected
 * is being read: the question waits for the read, which a yes (a fresh activation) or no answer (a cancel) would break
 * off — one asked already is taken away — and the read's end moves the screen on: a card read goes to the payment (no
 * question), a failed read to its error screen, and a card asked for again is timed afresh.
 */
import { TIMED_SCREENS } from './api.js';

/** The screen that awaits a card: timed by the reader's wait (above). */
export const CARD_SCREEN = 'present-card';

export interface InactivityOptions {
  /** Milliseconds of silence on a timed screen before the question. */
  timeoutMs: number;
  /** Milliseconds the question waits for an answer before the screen is left. */
  promptMs: number;
  /** Both are multiplied by it in accessibility mode. */
  accessibilityFactor: number;
  /**
   * Milliseconds after an activation of the reader by which the unanswered question has ended the sale, in
   * accessibility mode or not (`cardAnswerByMs`, src/config/card-wait.ts: a little before the reader gives up).
   */
  cardAnswerByMs(accessible: boolean): number;
  /** The question is asked, or taken away before its answer (the customer view must change). */
  onPrompt(): void;
  /** Nobody answered: leave the screen (the host cancels the machine's input). */
  onExpire(): void;
  now?: () => number;
}

/** The question on screen: when it expires. */
export interface MoreTimePrompt {
  kind: 'more-time';
  /** Epoch milliseconds at which the screen is left without an answer. */
  expiresAtMs: number;
}

export class InactivityWatch {
  private screen: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private asked: MoreTimePrompt | undefined;
  private accessible = false;
  /** A card was detected on the card presentation and is being read: no question until the screen moves on. */
  private reading = false;
  private readonly now: () => number;

  constructor(private readonly options: InactivityOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The question, while it is asked. */
  get prompt(): MoreTimePrompt | undefined {
    return this.asked;
  }

  private scale(ms: number): number {
    return this.accessible ? ms * this.options.accessibilityFactor : ms;
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.clear();
    this.asked = undefined;
    if (this.timesCard() && this.reading) return;
    if (this.timesCard()) {
      // Asked while the reader still waits: the answer time ends before the activation does.
      const answerByMs = this.options.cardAnswerByMs(this.accessible);
      const answerMs = Math.min(answerByMs, this.scale(this.options.promptMs));
      this.timer = setTimeout(() => this.ask(answerMs), answerByMs - answerMs);
      this.timer.unref();
      return;
    }
    if (this.screen === undefined || !TIMED_SCREENS.has(this.screen)) return;
    this.timer = setTimeout(
      () => this.ask(this.scale(this.options.promptMs)),
      this.scale(this.options.timeoutMs),
    );
    this.timer.unref();
  }

  private ask(answerMs: number): void {
    this.asked = { kind: 'more-time', expiresAtMs: this.now() + answerMs };
    this.timer = setTimeout(() => this.expire(), answerMs);
    this.timer.unref();
    this.options.onPrompt();
  }

  private expire(): void {
    this.clear();
    this.asked = undefined;
    this.options.onExpire();
  }

  /**
   * Tells the watch which screen the customer sees now and whether accessibility mode is on. A new screen (or a
   * change of mode) starts the clock again; a screen that is not timed stops it.
   */
  observe(screen: string, accessible: boolean): void {
    if (screen === this.screen && accessible === this.accessible) return;
    // The screen moved on: a card read there has ended (a change of mode alone leaves it reading).
    if (screen !== this.screen) this.reading = false;
    this.screen = screen;
    this.accessible = accessible;
    this.arm();
  }

  /** On the card presentation the clock is the reader's activation's. */
  private timesCard(): boolean {
    return this.screen === CARD_SCREEN;
  }

  /**
   * The customer did something: the clock starts again and any question goes away. Not on the card presentation,
   * where the clock is the reader's: a key or a language chosen there does not make the reader
   * wait longer; only a fresh activation ({@link cardRead}) does.
   */
  activity(): void {
    if (this.timesCard()) return;
    this.arm();
  }

  /** The reader was activated afresh on the card presentation (after a yes): its clock starts again. */
  cardRead(): void {
    this.reading = false;
    this.arm();
  }

  /**
   * The reader detected a card on the card presentation and is reading it: no question while it does (a question
   * asked is taken away, its expiry with it), until the screen moves on with the read's end ({@link observe}).
   * Elsewhere nothing is timed by the reader: ignored.
   */
  cardDetected(): void {
    if (!this.timesCard() || this.reading) return;
    this.reading = true;
    const withdrawn = this.asked !== undefined;
    this.clear();
    this.asked = undefined;
    if (withdrawn) this.options.onPrompt();
  }

  /** Whether a card detected on the card presentation is being read ({@link cardDetected}). */
  get readingCard(): boolean {
    return this.reading;
  }

  stop(): void {
    this.clear();
    this.asked = undefined;
    this.screen = undefined;
    this.reading = false;
  }
}
