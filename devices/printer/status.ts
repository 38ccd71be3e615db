import type { PrinterStatus } from './printer.js';

/**
 * ESC/POS real-time status (DLE EOT n, bytes `10 04 n`). The printer answers each request with one byte at once,
 * even while it is offline or its receive buffer is full. Every answer byte has fixed bits: bit 0 = 0, bit 1 = 1,
 * bit 4 = 1, bit 7 = 0 (mask 0x93 → 0x12), which is how an answer is told apart from noise.
 *
 * - n = 1, printer status: bit 3 offline.
 * - n = 2, offline cause: bit 2 cover open, bit 3 paper being fed by the FEED button, bit 5 printing stopped by a
 *   paper end, bit 6 an error occurred.
 * - n = 4, roll paper sensor: bits 2–3 paper near end, bits 5–6 paper end (no paper).
 */

export type StatusRequest = 1 | 2 | 4;

/** The bytes of a real-time status request. */
export function statusRequest(n: StatusRequest): Uint8Array {
  return Uint8Array.of(0x10, 0x04, n);
}

/** The status requests the driver sends, in order, to learn the printer's state. */
export const STATUS_SEQUENCE: readonly StatusRequest[] = [1, 2, 4];

/** True when `b` has the fixed bits of a real-time status answer. */
export function isStatusByte(b: number): boolean {
  return (b & 0x93) === 0x12;
}

/**
 * True when `b` opens an automatic status back (ASB, GS a): a printer with it enabled (by GS a or by its memory switches)
 * sends four bytes at power-on and at each change of state, the first with the fixed bits 0**1**00 (mask 0x93 → 0x10).
 * The three bytes after it (XON and XOFF aside) have the fixed bits of a GS r answer (0**0****) — the third says "paper
 * end" as GS r 1 does — so they are told apart only by following the first.
 */
export function isAutomaticStatusStart(b: number): boolean {
  return (b & 0x93) === 0x10;
}

/** Bytes of an automatic status back after its first. */
export const AUTOMATIC_STATUS_REST = 3;

/** XON and XOFF: flow control a serial printer may send at any time, also between the bytes of an ASB. */
export function isFlowControl(b: number): boolean {
  return b === 0x11 || b === 0x13;
}

/** The three answers of {@link STATUS_SEQUENCE}. */
export interface StatusAnswers {
  readonly printer: number;
  readonly offlineCause: number;
  readonly paperSensor: number;
}

/** What the answers say, decoded bit by bit. */
export interface DecodedStatus {
  readonly offline: boolean;
  readonly coverOpen: boolean;
  readonly paperOut: boolean;
  readonly paperNearEnd: boolean;
  /** An error state (e.g. a cutter jam or a head overheat): the printer does not print until it is cleared. */
  readonly error: boolean;
}

export function decodeStatus(a: StatusAnswers): DecodedStatus {
  return {
    offline: (a.printer & 0x08) !== 0,
    coverOpen: (a.offlineCause & 0x04) !== 0,
    paperOut: (a.offlineCause & 0x20) !== 0 || (a.paperSensor & 0x60) === 0x60,
    paperNearEnd: (a.paperSensor & 0x0c) === 0x0c,
    error: (a.offlineCause & 0x40) !== 0,
  };
}

/**
 * The status shown to the operator. A printer with its cover open usually reports paper end as well (the sensor sees
 * no paper), so the cover comes first: closing it is what the operator must do.
 */
export function printerStatusOf(d: DecodedStatus): PrinterStatus {
  if (d.coverOpen) return 'cover-open';
  if (d.paperOut) return 'paper-out';
  if (d.offline || d.error) return 'offline';
  return 'ready';
}

/** The answer bytes a printer in this state gives (the simulator answers with them; tests build them). */
export function statusAnswers(state: {
  coverOpen: boolean;
  paper: 'ok' | 'near-end' | 'out';
  error?: boolean;
}): StatusAnswers {
  const paperOut = state.paper === 'out';
  const offline = state.coverOpen || paperOut || state.error === true;
  return {
    printer: 0x12 | (offline ? 0x08 : 0),
    offlineCause: 0x12 | (state.coverOpen ? 0x04 : 0) | (paperOut ? 0x20 : 0) | (state.error ? 0x40 : 0),
    paperSensor: 0x12 | (state.paper === 'near-end' ? 0x0c : 0) | (paperOut ? 0x6c : 0),
  };
}
