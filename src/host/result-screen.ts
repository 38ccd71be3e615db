/**
 * A result screen read out in accessibility mode (kiosk.md §2: receipt content is spoken; WCAG 2.2.1): the result and
 * its receipt take a minute or more to say (about 66 s with espeak-ng at rate 1, twice that at the slowest rate), far
 * longer than the screen's time (`resultScreenMs` times `customer.accessibilityFactor`), and the screen going back to
 * idle ends the session and its speech. So while the screen is being said, the screen stays; once
 * the speech has ended (said to the end, stopped by the stop key, or failed) the screen's time runs from there, and a
 * new utterance (the repeat key) stops it again. DONE still ends the screen at once.
 *
 * One rule for every model: the machines' result delay (src/flows/provide.ts) asks {@link ResultScreenHold.delayMs},
 * which sets the machine's own timer to {@link RESULT_SPEECH_LIMIT} times the screen's time — the bound that holds
 * whatever the speaker does (one that never reports an end included) — and the host ends the screen sooner by DONE,
 * the customer's own event, which on every result screen goes to idle and nowhere else. A result screen comes up once
 * the outcome is journaled: its time is the customer's only, never a payment's. The terminal's own speaker
 * (espeak-ng) reports when an utterance ends; with `platform` speech each page reports when it starts and stops
 * saying one (SPEECH_STATE), the screen held while any page says it, and a page that reports nothing (no speech
 * synthesis, gone) leaves the screen its time — the time runs whenever nothing is being said. A page that never
 * reports an end holds it no longer than the bound.
 */

/**
 * A result screen said to a customer stays at most this many times its time in accessibility mode (WCAG 2.2.1: a
 * time limit extended to at least ten times the default): 200 s with the embedded defaults (10 s × 2 × 10), enough
 * for a default sale's result and receipt at the slowest rate (about 130 s) and the 20 s after it.
 */
export const RESULT_SPEECH_LIMIT = 10;

export interface ResultScreenHoldOptions {
  /**
   * Whether the customer hears the screens now: accessibility mode, with the terminal's own speaker (espeak-ng) or
   * the page's (`platform`).
   */
  heard(): boolean;
  /** Whether that speaker is saying something now (as it reports: the page's through SPEECH_STATE). */
  speaking(): boolean;
  /** The machine's state now, as a key: the hold belongs to the result state it was asked for. */
  state(): string | undefined;
  /** The screen's time has passed after its speech: leave the result screen (DONE to the machine). */
  leave(): void;
}

export class ResultScreenHold {
  /**
   * The result screen held: its time, the state it was asked from, and the state it is (undefined until the machine
   * has entered it).
   */
  private held: { ms: number; from: string | undefined; state: string | undefined } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ResultScreenHoldOptions) {}

  /**
   * The machine's delay for a result screen coming up, whose time is `ms`: `ms` when nobody hears it from the
   * terminal, else {@link RESULT_SPEECH_LIMIT} times `ms`, the screen held until its speech ends ({@link update}).
   */
  delayMs(ms: number): number {
    this.stop();
    if (!this.options.heard()) return ms;
    this.held = { ms, from: this.options.state(), state: undefined };
    return ms * RESULT_SPEECH_LIMIT;
  }

  /** After each change of the customer's screen and at the end of each utterance. */
  update(): void {
    const held = this.held;
    if (held === undefined) return;
    // Asked while the machine enters the result state: it is the first state after the one it was asked from (a
    // child actor's change may come first, while the machine is still in that one).
    const state = this.options.state();
    if (held.state === undefined) {
      if (state === held.from) return;
      held.state = state;
    }
    if (held.state !== state) return this.stop();
    if (this.options.speaking()) return this.clear();
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.held !== held || this.options.state() !== held.state) return;
      this.held = undefined;
      this.options.leave();
    }, held.ms);
    this.timer.unref();
  }

  stop(): void {
    this.clear();
    this.held = undefined;
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
