import type { Result } from '../../src/host/api.js';

/**
 * The `requestId` each refund the operator asks for is sent under (OperatorAction `refund`, `alt-refund`): the terminal
 * carries out a refund asked again under the same id once, and answers the repeat with the first one's answer.
 *
 * A refund whose answer never reached the panel — the connection dropped, the request timed out, the terminal failed —
 * may have gone through. The operator who asks for the same refund again (the same payment or sale, the same amount)
 * asks under its first id, so that the terminal finds it and does not refund a second time. Once a refund is
 * answered, whatever the answer, its id is done: the next refund of the same amount is another refund, carried out
 * while what is left to refund allows.
 */
export class RefundRequestIds {
  /** The id of each refund asked for and not answered yet, by what it refunds and how much. */
  readonly #unanswered = new Map<string, string>();

  /**
   * The id to send a refund of `subject` (a transactionId, a sale) under, for `amountMinor` (undefined: all that is
   * left): the one of the same refund still unanswered, or a new one.
   */
  idFor(subject: string, amountMinor: number | undefined): string {
    const key = keyOf(subject, amountMinor);
    let id = this.#unanswered.get(key);
    if (id === undefined) {
      id = crypto.randomUUID();
      this.#unanswered.set(key, id);
    }
    return id;
  }

  /**
   * What came back for the refund of `subject` for `amountMinor`: once it is the terminal's answer (an outcome or a
   * refusal), its id is not used again; while no answer came ({@link NO_ANSWER}), the refund keeps it.
   */
  settle(subject: string, amountMinor: number | undefined, result: Result<unknown>): void {
    if (result.ok || !answerNeverCame(result.error.code))
      this.#unanswered.delete(keyOf(subject, amountMinor));
  }
}

/**
 * Whether a request's failure `code` says nothing of what the terminal did with it ({@link NO_ANSWER}): a refund or
 * void so failed may have gone through, and its outcome is unknown to the panel.
 */
export function answerNeverCame(code: string): boolean {
  return NO_ANSWER.has(code);
}

/**
 * The failures that say nothing of what the terminal did with a request: the connection dropped or the request timed
 * out (renderer/src/client.ts), or the terminal failed while answering (the bridge's and the window's INTERNAL).
 */
const NO_ANSWER: ReadonlySet<string> = new Set(['DISCONNECTED', 'TIMEOUT', 'INTERNAL']);

function keyOf(subject: string, amountMinor: number | undefined): string {
  return JSON.stringify([subject, amountMinor ?? null]);
}
