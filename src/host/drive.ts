/**
 * Driving the terminal as a customer would, screen by screen: `simulate` and `certify run` play their scenarios
 * through these, against the real machines.
 */
import type { TerminalSnapshot, UserEvent } from './api.js';
import type { TerminalHost } from './terminal-host.js';

/** Thrown when the machine does not reach an expected screen in time. */
export class SimulationError extends Error {
  override readonly name = 'SimulationError';
  readonly code = 'SIMULATION_STUCK';
}

export async function waitFor(
  host: TerminalHost,
  screens: readonly string[],
  timeoutMs: number,
): Promise<TerminalSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    if (Date.now() > deadline) {
      // What the customer reads there says why (a chip card swiped, say: "This card has a chip: insert it …").
      const message = r.ok ? r.value.customer.message : undefined;
      throw new SimulationError(
        `expected screen ${screens.join('|')}, still on ${r.ok ? r.value.customer.screen : '?'}` +
          (message ? ` ("${message}")` : ''),
      );
    }
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** Sends `event` and returns the terminal's snapshot after it; a refusal throws. */
export async function send(host: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await host.send(event);
  if (!r.ok) throw new SimulationError(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

export const END = ['approved', 'declined', 'error'] as const;

/** Waits for one of `screens`, answering a currency choice on the way as the scenario says (spec 001, DCC). */
export async function waitPastChoice(
  host: TerminalHost,
  screens: readonly string[],
  timeoutMs: number,
  answer: 'card' | 'local' | undefined,
): Promise<TerminalSnapshot> {
  const reached = await waitFor(host, [...screens, 'choose-currency'], timeoutMs);
  const dcc = reached.customer.dcc;
  if (reached.customer.screen !== 'choose-currency' || dcc === undefined) return reached;
  await send(host, {
    type: 'CHOOSE_CURRENCY',
    currency: answer === 'card' ? dcc.card.currency : dcc.local.currency,
  });
  return waitFor(host, screens, timeoutMs);
}

/**
 * The `terminal` section of a configuration for a terminal a program drives (a simulation, a certification case): a
 * terminal of its own, with a journal of its own, whose operator PIN is the one generated at its start — which the
 * driver's credit, refund and void steps give (`host.generatedOperatorPin`) — whatever PIN file the section names.
 */
export function withGeneratedOperatorPin<Terminal extends { operatorPinFile?: string | undefined }>(
  terminal: Terminal,
): Omit<Terminal, 'operatorPinFile'> {
  const { operatorPinFile: _pinFile, ...rest } = terminal;
  return rest;
}
