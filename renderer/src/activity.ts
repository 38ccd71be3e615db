import { TIMED_SCREENS, type CustomerView, type UserEvent } from '../../src/host/api.js';

/**
 * Typing that stays on the page (a ticket number, an e-mail address) reaches the terminal only with Continue, while
 * the terminal's time limits count the customer as gone meanwhile. The page tells it that the customer is at work: an
 * ACTIVITY event, never what was typed.
 */

/** At most one ACTIVITY in this many milliseconds: far below the shortest time limit, and little traffic. */
export const ACTIVITY_INTERVAL_MS = 5_000;

export class InputActivity {
  #sentAt: number | undefined;

  constructor(
    private readonly send: (event: UserEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The customer did something on the page that sends no event (a key of the screen keypad, a character in a field, a
   * move between controls) while `view` was shown. Sends ACTIVITY on a timed screen, unless one went out less than
   * {@link ACTIVITY_INTERVAL_MS} ago; never while "Do you need more time?" is asked, which wants its own answer.
   */
  input(view: CustomerView | undefined): void {
    if (!view || view.prompt || !TIMED_SCREENS.has(view.screen)) return;
    const now = this.now();
    if (this.#sentAt !== undefined && now - this.#sentAt < ACTIVITY_INTERVAL_MS) return;
    this.#sentAt = now;
    this.send({ type: 'ACTIVITY' });
  }
}
