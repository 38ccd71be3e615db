/**
 * The ReceiptPrinter contract. Every printer (ESC/POS over serial, over a USB printer device file, over the in-memory
 * stream to the simulator) implements it, and one contract suite (devices/printer/printer.contract.ts) holds each of
 * them to it.
 *
 * Guarantees every implementation gives:
 * - Jobs never overlap: a `print` or `refreshStatus` while a print is outstanding rejects at once with `PrinterError`
 *   code `PRINTER_BUSY` and sends nothing to the device.
 * - A print starts only on a ready printer: `print` asks the printer for its real-time status (ESC/POS DLE EOT) first
 *   and rejects with `PRINTER_PAPER_OUT`, `PRINTER_COVER_OPEN` or `PRINTER_OFFLINE` without sending the receipt
 *   when it is not ready. After sending it asks again, so that paper running out during the job is reported as the
 *   job's failure (the printed part may be incomplete: the customer needs a reprint or the e-receipt), with
 *   `PrinterError.sent` true: part of it may be on paper, and a printer that held the rest prints it once refilled.
 * - No call hangs: a status request unanswered within `statusTimeoutMs` makes the status `offline`; a print then
 *   rejects with `PRINTER_PROTOCOL` when bytes that answered nothing came meanwhile (a wrong baud rate), else with
 *   `PRINTER_OFFLINE`.
 * - Card data never reaches a printer through this interface's callers by contract (the receipt is built masked, see
 *   src/host/receipts.ts); nothing here logs the receipt's text.
 */

/**
 * What the operator is told about the printer: `ready` to print, `paper-out` (roll end sensor), `cover-open`, or
 * `offline` (not connected, not answering, or in an error state such as a cutter jam).
 */
export type PrinterStatus = 'ready' | 'paper-out' | 'cover-open' | 'offline';

/** One labelled value of a receipt, printed as `label ... value` (wrapped under the label when it does not fit). */
export interface PrintableField {
  readonly label: string;
  readonly value: string;
}

/**
 * Error correction of every QR code the terminal prints or shows (reference/kiosk.md §4: M, 15 %): the printer's
 * (ESC/POS GS ( k, escpos.ts), the receipt's and the payment pages' codes on screen (src/host). A payload too long for
 * a code at M gets none, on paper and on screen alike, so the two never differ.
 */
export const QR_ERROR_CORRECTION = 'M';

/** What a printer prints: a title, labelled fields in order, and optionally a QR code under them. */
export interface PrintableReceipt {
  readonly title: string;
  readonly fields: readonly PrintableField[];
  /** Payload of a QR code printed after the fields (the e-receipt link or text); none when absent. */
  readonly qr?: string;
}

export type PrinterErrorCode =
  | 'PRINTER_BUSY' // a print is already outstanding
  | 'PRINTER_PAPER_OUT' // the roll end sensor reports no paper (before or after the job)
  | 'PRINTER_COVER_OPEN' // the cover is open (before or after the job)
  | 'PRINTER_OFFLINE' // not connected, not answering a status request, or in an error state
  | 'PRINTER_UNAVAILABLE' // the device cannot be opened (no such port or device file)
  | 'PRINTER_PROTOCOL'; // an answer that does not fit ESC/POS (e.g. a status byte with wrong fixed bits)

/** Every failure of a printer call. */
export class PrinterError extends Error {
  override readonly name = 'PrinterError';
  /**
   * A print that failed after its receipt was sent: part of it (or all of it, once the printer prints what it held)
   * may be on paper, so the receipt issued again for the same transaction is a copy. False when nothing was sent.
   */
  readonly sent: boolean;
  constructor(
    readonly code: PrinterErrorCode,
    message: string,
    options?: { cause?: unknown; sent?: boolean },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.sent = options?.sent ?? false;
  }
}

export interface PrinterEvents {
  /** The status changed (after a status request, a print, a disconnect or a reconnect). */
  status: [status: PrinterStatus];
}

export interface ReceiptPrinter {
  /**
   * Opens the device and asks for its status. Resolves once the device is open, even when the printer reports
   * paper-out or cover-open (that is a status, not a connect failure). Rejects with `PRINTER_UNAVAILABLE` when the
   * device cannot be opened.
   */
  connect(): Promise<void>;
  /** The last known status; `offline` before connect and after close. Changes are emitted as `status` events. */
  status(): PrinterStatus;
  /** Asks the printer for its real-time status now (DLE EOT) and returns it. Never rejects except `PRINTER_BUSY`. */
  refreshStatus(): Promise<PrinterStatus>;
  /**
   * Prints one receipt and cuts the paper. Resolves once the bytes were handed to the device and the printer
   * reported itself ready afterwards. Rejects with a PrinterError whose code says why (see the contract above).
   */
  print(receipt: PrintableReceipt): Promise<void>;
  on<E extends keyof PrinterEvents>(event: E, listener: (...args: PrinterEvents[E]) => void): this;
  off<E extends keyof PrinterEvents>(event: E, listener: (...args: PrinterEvents[E]) => void): this;
  /** Closes the device; the status becomes `offline`. Never rejects. */
  close(): Promise<void>;
}
