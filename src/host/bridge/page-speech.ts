import type { CustomerApi, UserEvent } from '../api.js';

/** The pages of this process so far, across transports: each {@link PageSpeechLink} is a page of its own. */
let pages = 0;

/**
 * What one page (a bridge socket, the Electron window) last said of its own speech (SPEECH_STATE, `platform`). More
 * than one page may be open on the terminal (the kiosk screen, a second page on the bridge), each saying the screen by
 * itself: every report the page sends carries the page it is from (the event's `page`), so that one page's end ends
 * its own speech only. When the page goes away while it said it was speaking — its socket closed, its window gone —
 * nothing will tell the terminal that its speech ended, and a result screen held while it is said would stay to the
 * bound (ten times its time, src/host/result-screen.ts). So the transport tells the end itself, as the page would
 * have. One per page.
 */
export class PageSpeechLink {
  /** This page, as its reports name it to the terminal. */
  private readonly page = ++pages;
  /** The utterance this page said it is saying; undefined when it said none, or said it stopped. */
  private saying: number | undefined;

  constructor(
    private readonly api: Pick<CustomerApi, 'send'>,
    /** Told when the terminal throws on the end told for a page gone (the transport logs it). */
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /**
   * Every event the page sends, validated (its schema refuses a `page` of the page's own), as it goes to the
   * terminal: the one to send, a speech report naming this page.
   */
  sent(event: UserEvent): UserEvent {
    if (event.type !== 'SPEECH_STATE') return event;
    if (event.speaking) this.saying = event.id;
    // As the terminal takes it (SpeechOutput.pageSpeaking): the end of a later utterance ends one cut off by it.
    else if (this.saying !== undefined && event.id >= this.saying) this.saying = undefined;
    return { ...event, page: this.page };
  }

  /** The page has gone away: the end of what it said it was saying is told, once. */
  gone(): void {
    const id = this.saying;
    this.saying = undefined;
    if (id === undefined) return;
    try {
      this.api.send({ type: 'SPEECH_STATE', id, speaking: false, page: this.page }).catch(this.onError);
    } catch (e) {
      this.onError(e);
    }
  }
}
