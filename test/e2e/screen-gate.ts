import type { Page, WebSocketRoute } from 'playwright-core';

/**
 * Holds the screens that pass too fast to be looked at. The card is read and the sandbox answers in milliseconds, so
 * "Present your card" and "Processing" may be replaced before a test or a screenshot gets to them. The gate sits on
 * the page's WebSocket to the bridge (Playwright's routeWebSocket): every message goes through unchanged, but when a
 * snapshot moves the customer's screen onto a held screen, what the terminal sends after it waits until
 * {@link ScreenGate.release}. The terminal itself is never slowed down: only what this page sees of it, in order.
 */

/** The screens the gate holds: those the terminal leaves on its own within moments. */
export const HELD_SCREENS: readonly string[] = ['present-card', 'processing'];

interface Carried {
  seq: number;
  screen: string;
}

/** The customer screen a bridge message carries: a pushed snapshot or the snapshot answering a request. */
function screenOf(message: string | Buffer): Carried | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof message === 'string' ? message : message.toString('utf8'));
  } catch {
    return undefined;
  }
  type Snapshot = { seq?: unknown; customer?: { screen?: unknown } };
  const m = parsed as { snapshot?: Snapshot; result?: { value?: Snapshot } };
  const snapshot = m.snapshot ?? m.result?.value;
  const screen = snapshot?.customer?.screen;
  const seq = snapshot?.seq;
  return typeof screen === 'string' && typeof seq === 'number' ? { seq, screen } : undefined;
}

export class ScreenGate {
  #route: WebSocketRoute | undefined;
  #shown: Carried | undefined;
  #held: string | undefined;
  #waiting: (string | Buffer)[] = [];
  #onHold: (() => void)[] = [];

  private constructor() {}

  /** Routes the page's bridge WebSocket through a new gate; call before the page opens the terminal. */
  static async install(page: Page): Promise<ScreenGate> {
    const gate = new ScreenGate();
    await page.routeWebSocket(/\/ws$/, (ws) => {
      // A reconnect starts afresh: nothing of the old socket is delivered on the new one.
      gate.#route = ws;
      gate.#shown = undefined;
      gate.#held = undefined;
      gate.#waiting = [];
      const server = ws.connectToServer();
      ws.onMessage((m) => server.send(m));
      server.onMessage((m) => {
        if (gate.#held !== undefined) gate.#waiting.push(m);
        else gate.#deliver(m);
      });
    });
    return gate;
  }

  /** The held screen the page shows now, or undefined when everything the terminal sent was delivered. */
  get held(): string | undefined {
    return this.#held;
  }

  /** Resolves when the gate holds a screen (at once when it does). */
  holding(): Promise<string> {
    if (this.#held !== undefined) return Promise.resolve(this.#held);
    return new Promise((resolve) => this.#onHold.push(() => resolve(this.#held!)));
  }

  /** Delivers what waited, up to and including the next move onto a held screen (which is held again). */
  release(): void {
    this.#held = undefined;
    while (this.#held === undefined) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      this.#deliver(next);
    }
  }

  #deliver(message: string | Buffer): void {
    this.#route?.send(message);
    const carried = screenOf(message);
    // The page ignores a snapshot older than the one it shows, and so does the gate.
    if (carried === undefined || (this.#shown !== undefined && carried.seq <= this.#shown.seq)) return;
    const moved = carried.screen !== this.#shown?.screen;
    this.#shown = carried;
    if (moved && HELD_SCREENS.includes(carried.screen)) {
      this.#held = carried.screen;
      for (const wake of this.#onHold.splice(0)) wake();
    }
  }
}
