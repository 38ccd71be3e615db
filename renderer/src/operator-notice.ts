import { h, LiveRegion } from './dom.js';

/**
 * What an answer shown to the operator says happened: `success` it was done; `refusal` it was not (refused by the
 * terminal's own rules, declined or rejected by the gateway, a wrong PIN, a request that failed); `unknown` its
 * outcome is not known yet (an answer lost, left to recovery); `info` a figure or a fact, neither.
 */
export type NoticeTone = 'success' | 'refusal' | 'unknown' | 'info';

export interface OperatorNotice {
  text: string;
  tone: NoticeTone;
}

/**
 * Each tone's marker: a word the operator reads and a screen reader says, and a symbol beside it — never the
 * colour alone (WCAG 1.4.1), so that a success, a refusal and an unknown outcome read apart however they are seen or
 * heard. `info` has none.
 */
const MARKERS: Record<Exclude<NoticeTone, 'info'>, { symbol: string; word: string }> = {
  success: { symbol: '✓', word: 'Done' },
  refusal: { symbol: '✕', word: 'Not done' },
  unknown: { symbol: '?', word: 'Outcome unknown' },
};

/**
 * The tone of a refund's or void's `outcome` as the terminal answers it (approved | declined | rejected | unknown |
 * cancelled | not-found | not-allowed | failed): approved is a success, unknown is unknown, every other one is a
 * refusal (nothing moved) — an outcome the panel does not know is never shown as done.
 */
export function outcomeTone(outcome: string): NoticeTone {
  if (outcome === 'approved') return 'success';
  if (outcome === 'unknown') return 'unknown';
  return 'refusal';
}

/**
 * The tone of a tap-and-go stay's release (`hold-release` outcome: released | later | unknown | refused): `later` is
 * a refusal for now — the hold stands until the terminal's next try.
 */
export function holdReleaseTone(outcome: string): NoticeTone {
  if (outcome === 'released') return 'success';
  if (outcome === 'unknown') return 'unknown';
  return 'refusal';
}

/**
 * The tone of a refund of an alternative-method sale by its `state` (src/host/alt-payment-desk.ts): accepted or
 * refunded is a success; failed, or voided by recovery, refunded nothing; in flight, or left to the operator to
 * check, may stand or not.
 */
export function altRefundTone(state: string): NoticeTone {
  if (state === 'accepted' || state === 'refunded') return 'success';
  if (state === 'in-flight' || state === 'needs-operator') return 'unknown';
  return 'refusal';
}

/**
 * The notice of a refund's or void's answer, named after the payment the operator chose (`subject`): the terminal
 * answers with the transactionId of the refund or void it sent, when it sent one, which is not the payment's — "refund
 * R7" would read as a refund of R7. The code is said when it was not approved (why nothing was done, or what the
 * gateway answered).
 */
export function followOnNotice(
  subject: string,
  answer: { type: 'refund' | 'void'; outcome: string; code: string; message: string; transactionId: string },
): OperatorNotice {
  const sent = answer.transactionId !== subject ? ` (sent as ${answer.transactionId})` : '';
  const code = answer.outcome === 'approved' ? '' : ` (${answer.code})`;
  return {
    text: `${answer.type} of ${subject}${sent}: ${answer.outcome} — ${answer.message}${code}`,
    tone: outcomeTone(answer.outcome),
  };
}

/** What a screen reader says of a notice: its marker's word, then its text. */
export function spokenNotice(notice: OperatorNotice): string {
  return notice.tone === 'info' ? notice.text : `${MARKERS[notice.tone].word}: ${notice.text}`;
}

/**
 * The notice as the panel shows it: its marker (symbol and word) before the text (`operator-result`), the tone also in
 * `data-tone`. No live role: the panel draws it anew on every redraw (the status refresh every 2 s), which would read
 * it out again each time; {@link NoticeAnnouncer} reads it out once.
 */
export function renderNotice(notice: OperatorNotice): HTMLElement {
  const marker = notice.tone === 'info' ? null : MARKERS[notice.tone];
  const box = h(
    'div',
    { class: `notice notice-${notice.tone}`, testid: 'operator-notice' },
    marker
      ? h(
          'span',
          { class: 'notice-marker', testid: 'operator-result-marker' },
          h('span', { class: 'notice-symbol', text: marker.symbol, attrs: { 'aria-hidden': 'true' } }),
          ` ${marker.word}`,
        )
      : null,
    h('span', { class: 'notice-text', testid: 'operator-result', text: notice.text }),
  );
  box.dataset.tone = notice.tone;
  return box;
}

/**
 * The panel's one live region, kept while the panel is drawn again: it reads out each new notice once — its marker's
 * word first — and a notice given again in the same words (a second refusal alike) again, but not the same notice
 * on a redraw.
 */
export class NoticeAnnouncer {
  readonly #region = new LiveRegion('operator-announcer');
  readonly element = this.#region.element;
  #said: OperatorNotice | undefined;

  /** Reads out `notice` when it is another notice than the one read out last (undefined: none, says nothing). */
  announce(notice: OperatorNotice | undefined): void {
    if (notice === this.#said) return;
    this.#said = notice;
    this.#region.say(notice === undefined ? undefined : spokenNotice(notice));
  }
}
