/**
 * Receipts on paper: the host's side of the receipt printer. On every receipt a machine issues, the document is built
 * (src/host/receipts.ts: last four digits only, the DCC disclosure when converted) and printed with its e-receipt QR;
 * a printer out of paper, with its cover open or gone is a status for the operator and a notice for the customer, never
 * a lost or failed payment. The last receipt can be printed again from operator mode, and a test receipt printed.
 */
import {
  createPrinter,
  PrinterError,
  type PrinterStatus,
  type ReceiptPrinter,
} from '../../devices/printer/index.js';
import type { Config } from '../config/index.js';
import type { ReceiptData } from '../flows/index.js';
import type { Logger } from '../log/index.js';
import {
  buildReceipt,
  eReceiptQr,
  receiptOffered,
  receiptSettingsFromConfig,
  ReceiptFactsLog,
  type ReceiptDocument,
  type ReceiptSettings,
} from './receipts.js';

/** What the operator status says of the printer. */
export interface PrinterSummary {
  kind: Config['printer']['kind'];
  status: PrinterStatus | 'none';
  /** Why the last receipt did not print, when it did not. */
  lastError?: string;
}

export class ReceiptDesk {
  /** What the host knows of each recent transaction's card and conversion, for its receipt. */
  readonly facts = new ReceiptFactsLog();
  private readonly settings: ReceiptSettings;
  private last: ReceiptDocument | undefined;
  private lastError: string | undefined;
  private printing: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    readonly printer: ReceiptPrinter | null = createPrinter(config.printer, { logger }),
  ) {
    this.settings = receiptSettingsFromConfig(config);
  }

  /** Opens the printer; a missing device is a status (`offline`), never a failed start. */
  async start(): Promise<void> {
    await this.printer?.connect().catch((e: unknown) => {
      this.lastError = e instanceof Error ? e.message : String(e);
      this.logger.warn({ err: e }, 'receipt printer not available');
    });
  }

  summary(): PrinterSummary {
    return {
      kind: this.config.printer.kind,
      status: this.printer ? this.printer.status() : 'none',
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** The receipt of a completed transaction: built, kept for a reprint, printed when a printer is attached. */
  issue(data: ReceiptData): ReceiptDocument | undefined {
    const doc = buildReceipt(data, this.facts.factsFor(data.transactionId), this.settings);
    if (!receiptOffered(doc, this.settings)) return undefined;
    this.last = doc;
    void this.print(doc);
    return doc;
  }

  /** Prints the last receipt again (operator mode). */
  reprint(): Promise<void> {
    if (!this.last)
      return Promise.reject(new PrinterError('PRINTER_UNAVAILABLE', 'no receipt to print again'));
    return this.print(this.last, true);
  }

  /** Prints a test receipt (service mode). */
  testPrint(): Promise<void> {
    return this.print(
      {
        title: 'Test receipt',
        fields: [
          { label: 'Terminal', value: this.config.terminal.id },
          { label: 'Printer', value: this.config.printer.kind },
        ],
        transactionId: 'TEST',
        amountMinor: 0,
        currency: this.config.terminal.currency,
        converted: false,
      },
      true,
    );
  }

  /** One job at a time, in order; a failure is remembered for the operator and, unless asked for, never thrown. */
  private print(doc: ReceiptDocument, rethrow = false): Promise<void> {
    const printer = this.printer;
    if (!printer)
      return rethrow
        ? Promise.reject(new PrinterError('PRINTER_UNAVAILABLE', 'no printer configured'))
        : Promise.resolve();
    const job = this.printing.then(async () => {
      const qr = await eReceiptQr(doc, this.settings);
      await printer.print({ title: doc.title, fields: doc.fields, qr: qr.payload });
      this.lastError = undefined;
    });
    this.printing = job.catch((e: unknown) => {
      this.lastError = e instanceof PrinterError ? `${e.code}: ${e.message}` : String(e);
      this.logger.warn({ err: e, transactionId: doc.transactionId }, 'receipt not printed');
    });
    return rethrow ? job : this.printing;
  }

  async close(): Promise<void> {
    await this.printing;
    await this.printer?.close();
  }
}
