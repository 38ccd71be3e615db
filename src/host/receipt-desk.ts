/**
 * Receipts: the host's side of the receipt printer and of the on-screen receipt. On every receipt a machine issues,
 * the one document is built (src/host/receipts.ts: last four digits only, the DCC disclosure when converted, in the
 * customer's language when the printer can print it, see `issuedReceipt`), its e-receipt QR drawn, and it is printed
 * with that QR; the customer's screen shows the same document ({@link ReceiptDesk.issued}). A printer out of paper,
 * with its cover open or gone is a status for the operator and a notice for the customer, never a lost or failed
 * payment. The last receipt can be printed again from operator mode — after a restart, rebuilt from the journal
 * ({@link journaledReceipts}), in the language and with the lines its note there says ({@link journaledReceiptNotes})
 * — and a test receipt printed.
 */
import {
  createPrinter,
  PrinterError,
  type PrinterStatus,
  type ReceiptPrinter,
} from '../../devices/printer/index.js';
import type { Config } from '../config/index.js';
import type { DccReceiptOffer, OriginalTransaction, ReceiptData } from '../flows/index.js';
import {
  answeredAmountOf,
  refundedTotalOf,
  type IssuedReceiptNote,
  type Journal,
  type JournalEntry,
  type SqliteJournal,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { commentsFor } from '../vocabulary/services.js';
import { linkQr } from './link-screen.js';
import type { FollowOnStore } from './payments.js';
import {
  eReceiptQr,
  issuedReceipt,
  linkSlip,
  receiptCopy,
  receiptNote,
  receiptOffered,
  receiptSettingsFromConfig,
  ReceiptFactsLog,
  testReceipt,
  type EReceiptQr,
  type JournaledReceiptFactsReader,
  type IssuedReceipt,
  type LinkSlipData,
  type PaperCopy,
  type ReceiptDocument,
  type ReceiptSettings,
} from './receipts.js';

/** How many issued receipts are kept for the screen (the current customer's, and a few before). */
const ISSUED_KEPT = 8;

/** What the operator status says of the printer. */
export interface PrinterSummary {
  kind: Config['printer']['kind'];
  status: PrinterStatus | 'none';
  /** Why the last receipt did not print, when it did not. */
  lastError?: string;
}

/**
 * The receipt facts the journal database keeps of a transaction: its entry by transactionId (the approval code and the
 * card's view journaled with the outcome, and the original a follow-on acts on) and, for a converted authorization, the
 * accepted offer kept with the terms its follow-ons repeat (`followOns.receiptOffer`).
 *
 * A converted authorization whose offer is not kept whole (its margin and disclaimer kept before they were, or by the
 * previous terminal; or unreadable) gets no conversion: its receipts leave the whole disclosure out rather than state
 * part of it, or a disclaimer other than the one the customer was shown (the card networks require all of it, the
 * disclaimer verbatim: kiosk.md §1, gateway.md §5), and a warning says so, once per authorization (its transactionId,
 * no card data).
 */
export function journaledReceiptFacts(
  journal: Pick<Journal, 'findByTransactionId'> & Pick<SqliteJournal, 'referencing'>,
  followOns: Pick<FollowOnStore, 'receiptOffer'> = { receiptOffer: () => undefined },
  logger?: Logger,
): JournaledReceiptFactsReader {
  const warned = new Set<string>();
  const withheld = (transactionId: string, err?: unknown): undefined => {
    if (warned.has(transactionId)) return undefined;
    warned.add(transactionId);
    logger?.warn(
      { transactionId, ...(err !== undefined ? { err } : {}) },
      "a converted payment's offer is not kept whole: its receipts leave the currency conversion disclosure out",
    );
    return undefined;
  };
  const conversionOf = (transactionId: string): DccReceiptOffer | undefined => {
    try {
      const offer = followOns.receiptOffer(transactionId);
      return offer === 'not-kept' ? withheld(transactionId) : offer;
    } catch (e) {
      // A receipt is never lost for its disclosure: issued without it.
      return withheld(transactionId, e);
    }
  };
  return (transactionId) => {
    const entry = journal.findByTransactionId(transactionId);
    if (entry === undefined) return undefined;
    const conversion = conversionOf(transactionId);
    const amountMinor = entry.service === 'incremental' ? entry.amountMinor : answeredAmountOf(entry);
    const paidTx = entry.referencedTransactionId;
    // What stood refunded of the payment when this refund was built: the card amount a refund states beside its local
    // one follows from it (src/host/payments.ts `refundDcc`, refundAtOfferRate).
    const refundedBefore =
      (entry.service === 'refund-capture' || entry.service === 'refund-payment') && paidTx !== undefined
        ? refundedTotalOf(journal, paidTx, { beforeEntryId: entry.id })
        : undefined;
    return {
      service: entry.service,
      ...(entry.referencedTransactionId !== undefined
        ? { originalTransactionId: entry.referencedTransactionId }
        : {}),
      ...(entry.approvalCode !== undefined ? { approvalCode: entry.approvalCode } : {}),
      ...(entry.card !== undefined ? { card: entry.card } : {}),
      ...(conversion !== undefined ? { conversion } : {}),
      ...(amountMinor !== undefined && entry.currency !== undefined
        ? { amountMinor, currency: entry.currency }
        : {}),
      ...(refundedBefore !== undefined ? { refundedBeforeMinor: refundedBefore } : {}),
    };
  };
}

/**
 * Journals what a receipt stated beyond its transaction's facts as it is issued (see {@link journaledReceiptNotes}), and
 * says whether the journal noted a receipt of that transaction before (one issued by an earlier process, say).
 */
export type ReceiptNoteWriter = (transactionId: string, note: IssuedReceiptNote) => boolean;

/**
 * Notes each receipt issued on its transaction's journal entry (`Journal.recordReceipt`): the customer's language and
 * the machine's own lines (a ticket and its stay), which only the machine and the customer's session held, so that the
 * operator's copy after a restart says what the receipt said. The first receipt's note stays. A note the journal
 * refuses or cannot write is a warning (its transactionId, no card data), never a lost receipt: its copy is then
 * in `terminal.locale` without those lines. A receipt of no journal entry (a payment link's) has no note. A note there
 * already says a receipt of the transaction was issued before: the desk issues this one as a copy.
 */
export function journaledReceiptNotes(
  journal: Pick<Journal, 'recordReceipt' | 'findByTransactionId'>,
  logger?: Logger,
): ReceiptNoteWriter {
  return (transactionId, note) => {
    try {
      if (journal.recordReceipt(transactionId, note)) return false;
      // Not written: no such entry, or noted already.
      return journal.findByTransactionId(transactionId)?.receipt !== undefined;
    } catch (err) {
      logger?.warn(
        { transactionId, err },
        "a receipt's language and lines are not journaled: a copy after a restart leaves them out",
      );
      return false;
    }
  };
}

/** How many of the journal's newest entries a reprint after a restart looks through for the last receipt. */
const REPRINT_SCAN = 500;

/** A receipt the journal can give back: what it states, and the customer's language when its note says. */
export interface JournaledReceipt {
  readonly data: ReceiptData;
  /** The language the receipt was issued in for its customer; absent when the journal has no note of it. */
  readonly locale?: string;
}

/** The receipts the journal can give back, newest first (see {@link journaledReceipts}). */
export type JournaledReceiptsReader = () => Iterable<JournaledReceipt>;

/**
 * The receipts of the journal's completed money transactions, newest first among its last {@link REPRINT_SCAN}
 * entries, for a reprint after a restart (the receipt issued in this process is kept in memory): each approved sale,
 * credit, capture (a meter's end, a tap-and-go exit) and refund — what the machines issue a receipt for — not voided
 * since (the receipt of a payment undone is no proof of payment). A void's own receipt is not rebuilt: the void a
 * machine sends for a payment the customer cancelled while it was in flight gets none, and the journal does not tell
 * it from the operator's. `find` is the operator desk's reading of a transaction (src/host/operator-desk.ts
 * `findTransaction`): the amount as the gateway answered it (a capture's, what it took) in the local currency, the
 * gateway's id, whether it was voided. The order is the journal's, which records no receipt's issue: a stored offline
 * payment comes where it was forwarded, a paid tap-and-go exit shown again where its capture was made.
 *
 * What the journal holds is stated as the first receipt stated it: type, amount, the card (last four digits, of the
 * authorization for a capture made after its card read was gone; a refund's receipt names no card, as the operator
 * machine's does not), the time of the answer, the transaction and the gateway's reference; a refund's original. The
 * approval code and the card's application come with the receipt's facts ({@link ReceiptDesk.facts}, journaled with
 * the outcome), and so does a converted payment's DCC disclosure (its accepted offer, kept with the terms its
 * follow-ons repeat). The customer's language and the machine's own lines (ticket, stay, parking) come from the note
 * journaled when the receipt was issued ({@link journaledReceiptNotes}); without one (a receipt issued by an earlier
 * version, or whose note was not written) they are left out rather than guessed, and the receipt is in
 * `terminal.locale`, a refund's with its original as the operator machine states it.
 * Nothing read here is card data: masked PANs (first six, last four at most; the receipt prints the last four).
 */
export function journaledReceipts(
  journal: Pick<Journal, 'list' | 'findByTransactionId'>,
  find: (transactionId: string) => OriginalTransaction | null,
): JournaledReceiptsReader {
  return function* () {
    for (const entry of journal.list({ limit: REPRINT_SCAN, unsentAttempts: false })) {
      // Approved with the gateway's answer: one whose answer was lost got no receipt, whatever recovery found later.
      if (entry.state !== 'approved' || entry.transactionId === undefined) continue;
      const done = find(entry.transactionId);
      if (done === null || done.voided) continue;
      yield {
        data: receiptDataOf(entry, done, journal),
        ...(entry.receipt !== undefined ? { locale: entry.receipt.locale } : {}),
      };
    }
  };
}

function receiptDataOf(
  entry: JournalEntry,
  done: OriginalTransaction,
  journal: Pick<Journal, 'findByTransactionId'>,
): ReceiptData {
  const refund = done.service === 'refund-capture' || done.service === 'refund-payment';
  const original = entry.referencedTransactionId;
  const maskedPan = refund
    ? undefined
    : (entry.maskedPan ??
      (done.service === 'capture' && original !== undefined
        ? journal.findByTransactionId(original)?.maskedPan
        : undefined));
  return {
    service: done.service,
    // Not printed: the receipt states the type by its service.
    comments: commentsFor(done.service),
    amountMinor: done.amountMinor,
    currency: done.currency,
    ...(maskedPan !== undefined ? { maskedPan } : {}),
    transactionId: done.transactionId,
    ...(done.gatewayId !== undefined ? { gatewayId: done.gatewayId } : {}),
    atMs: Date.parse(entry.outcomeAt ?? entry.createdAt),
    // The machine's lines as its receipt stated them; without a note, the operator machine's line of a refund
    // (src/flows/operator.ts).
    lines:
      entry.receipt !== undefined
        ? entry.receipt.lines.map((l) => ({ label: l.label, value: l.value }))
        : refund && original !== undefined
          ? [{ label: 'Original', value: original }]
          : [],
  };
}

export class ReceiptDesk {
  /**
   * What the host knows of each transaction's card, conversion and approval code, for its receipt: noted live, and
   * read from the journal (`journaled`) for a transaction of an earlier process.
   */
  readonly facts: ReceiptFactsLog;
  private readonly settings: ReceiptSettings;
  private last: ReceiptDocument | undefined;
  private lastError: string | undefined;
  private printing: Promise<void> = Promise.resolve();
  /** Jobs queued or printing: the idle poll asks nothing while there are any. */
  private pending = 0;
  private polling = false;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /**
   * The printer's status changed (a status request, the idle poll, a print): one that is ready again has none of the
   * last error — a device missing at the start and plugged in since, paper refilled — so the operator's status follows
   * the printer, not the last failure until some receipt prints.
   */
  private readonly printerStatusChanged = (status: PrinterStatus): void => {
    if (status === 'ready') this.lastError = undefined;
    this.notify();
  };
  private readonly recent = new Map<string, IssuedReceipt>();
  /**
   * The kept receipts (of {@link recent}) whose print failed after the printer was sent it: part of it may be on paper,
   * and the rest comes out once the printer is refilled or its cover closed.
   */
  private readonly sentUnprinted = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    readonly printer: ReceiptPrinter | null = createPrinter(config.printer, { logger }),
    journaled?: JournaledReceiptFactsReader,
    /** The receipts the journal can give back, for a reprint when this process has issued none. */
    private readonly journaledReceipts: JournaledReceiptsReader = () => [],
    /** Journals what each receipt issued stated beyond its facts, for that reprint. */
    private readonly noteReceipt: ReceiptNoteWriter = () => false,
  ) {
    this.settings = receiptSettingsFromConfig(config);
    this.facts = new ReceiptFactsLog(undefined, journaled);
  }

  /**
   * Opens the printer; a missing device is a status (`offline`), never a failed start. Then asks the printer for its
   * status every `printer.statusPollSeconds` while no receipt is queued or printing ({@link pollStatus}): paper that
   * ran out on the last receipt, a cover opened or a printer switched off between customers shows in the operator
   * status, the status bar and the fleet heartbeat before the next customer's receipt fails on it.
   */
  async start(): Promise<void> {
    const printer = this.printer;
    if (!printer) return;
    printer.on('status', this.printerStatusChanged);
    await printer.connect().catch((e: unknown) => {
      this.lastError = e instanceof Error ? e.message : String(e);
      this.logger.warn({ err: e }, 'receipt printer not available');
    });
    // Closed while the printer was opening: no poll of a closed printer.
    if (this.closed) return;
    this.pollTimer ??= setInterval(
      () => this.pollStatus(printer),
      this.config.printer.statusPollSeconds * 1_000,
    );
    this.pollTimer.unref();
  }

  /**
   * One status request of the idle printer: none while a job is queued or printing (the driver asks before and
   * during each job itself, and refuses a job while a request is outstanding), and a job issued meanwhile waits for
   * its answer in the one queue of {@link print}.
   */
  private pollStatus(printer: ReceiptPrinter): void {
    if (this.pending > 0 || this.polling) return;
    this.polling = true;
    this.printing = this.printing
      .then(() => printer.refreshStatus())
      .then(
        () => undefined,
        (e: unknown) => this.logger.debug({ err: e }, 'printer status not read'),
      )
      .finally(() => {
        this.polling = false;
      });
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  summary(): PrinterSummary {
    return {
      kind: this.config.printer.kind,
      status: this.printer ? this.printer.status() : 'none',
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /**
   * Calls `listener` whenever an issued receipt changes (its QR drawn, its paper copy printed or not) or the printer's
   * status does.
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The receipt of a completed transaction, in the customer's language `locale` (the rule of `issuedReceipt`): built,
   * kept for the screen and a reprint, its e-receipt QR drawn, and printed when a printer is attached and a receipt is
   * offered for the amount; marked as a copy when this process printed one of the transaction already. Returns at
   * once; the QR and the paper copy's fate follow ({@link onChange}).
   */
  issue(data: ReceiptData, locale: string = this.settings.locale): IssuedReceipt {
    const original = issuedReceipt(data, this.facts.factsFor(data.transactionId), this.settings, locale);
    // Before it prints: a copy after a restart says what this receipt says (the first receipt's note stays).
    const notedBefore = this.noteReceipt(data.transactionId, receiptNote(data, locale, this.settings));
    // Issued again (a tap-and-go exit shown paid again) after its paper receipt came out, or after one that failed
    // once the printer had it (cut short by a paper end, it comes out whole when paper is loaded): this one is a copy,
    // so that the second paper receipt of one payment is not taken for a second payment (receiptCopy's rule).
    // Not issued in this process (a restart since, or no longer kept), but noted in the journal: whether its paper
    // receipt came out is not known, and a copy is never taken for a second payment.
    const before = this.recent.get(original.transactionId)?.paper;
    const document =
      before === 'printing' ||
      before === 'printed' ||
      this.sentUnprinted.has(original.transactionId) ||
      (before === undefined && notedBefore)
        ? receiptCopy(original)
        : original;
    const offered = receiptOffered(document, this.settings);
    const paper: PaperCopy = !offered
      ? 'not-offered'
      : !this.printer
        ? 'none'
        : this.printer.status() === 'ready'
          ? 'printing'
          : 'unavailable';
    const issued: IssuedReceipt = { document, paper };
    this.recent.delete(document.transactionId);
    this.recent.set(document.transactionId, issued);
    while (this.recent.size > ISSUED_KEPT) {
      const oldest = this.recent.keys().next().value;
      if (oldest === undefined) break;
      this.recent.delete(oldest);
      this.sentUnprinted.delete(oldest);
    }
    // Drawn once: the screen shows it, and the printer prints its payload.
    const qr = eReceiptQr(document, this.settings);
    void qr.then(
      (qr) => {
        if (qr !== undefined) this.update(document.transactionId, { qr });
        else this.logger.warn({ transactionId: document.transactionId }, 'e-receipt too long for a QR code');
      },
      (e: unknown) => this.logger.warn({ err: e, transactionId: document.transactionId }, 'no e-receipt QR'),
    );
    // The reprint marks it a copy itself. Every receipt issued, offered on paper or not: the operator's reprint is
    // for the customer just served, never the one before.
    this.last = original;
    if (offered && this.printer) {
      // A printer that is not ready is still asked: it may have been refilled since its status was last read.
      void this.print(document, false, qr).then((printed) =>
        this.update(document.transactionId, { paper: printed ? 'printed' : 'unavailable' }),
      );
    }
    return issued;
  }

  /** An issued receipt as it stands now (document, QR once drawn, paper copy); undefined when not (or no longer) kept. */
  issued(transactionId: string | undefined): IssuedReceipt | undefined {
    return transactionId === undefined ? undefined : this.recent.get(transactionId);
  }

  private update(transactionId: string, change: Partial<Pick<IssuedReceipt, 'qr' | 'paper'>>): void {
    const current = this.recent.get(transactionId);
    if (!current) return;
    this.recent.set(transactionId, { ...current, ...change });
    this.notify();
  }

  /**
   * Pay later: prints the slip of a payment link (its QR code is the link's URL, the URL also as text), in the
   * customer's language when the printer can print it. Resolves whether it printed; a failure is the operator's status.
   */
  printLink(data: LinkSlipData, locale: string = this.settings.locale): Promise<boolean> {
    const slip = linkSlip(data, this.settings, locale);
    // A URL the screen cannot draw as a QR code is printed as text alone (the slip carries it as a field).
    const qr = linkQr(data.url) === undefined ? undefined : { payload: data.url, url: data.url, svg: '' };
    return this.print(slip, false, Promise.resolve(qr));
  }

  /**
   * Prints the last receipt issued again (operator mode), marked as a copy ({@link receiptCopy}): the one issued in
   * this process, exact; when there is none (a restart since), the last one the journal can give back
   * ({@link journaledReceipts}), in the customer's language and with the machine's lines its journaled note states
   * (else in the terminal's language, without them). A receipt not offered on paper for its small amount
   * ({@link receiptOffered}) is printed too: the operator asks for the receipt of the customer just served, and an
   * older one would hand that customer another's card digits and amount. Rejects `PRINTER_UNAVAILABLE` when neither
   * has one.
   */
  reprint(): Promise<void> {
    let last: ReceiptDocument | undefined;
    try {
      last = this.last ?? this.lastJournaled();
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    if (!last) return Promise.reject(new PrinterError('PRINTER_UNAVAILABLE', 'no receipt to print again'));
    return this.print(receiptCopy(last), true).then(() => undefined);
  }

  /** The newest journaled receipt, offered on paper or not (the rule of {@link reprint}). */
  private lastJournaled(): ReceiptDocument | undefined {
    for (const { data, locale } of this.journaledReceipts())
      return issuedReceipt(
        data,
        this.facts.factsFor(data.transactionId),
        this.settings,
        locale ?? this.settings.locale,
      );
    return undefined;
  }

  /** Prints a test receipt (service mode), in the terminal's language. */
  testPrint(): Promise<void> {
    return this.print(testReceipt(this.settings, this.config.printer.kind), true).then(() => undefined);
  }

  /**
   * One job at a time, in order; resolves whether it printed. A failure is remembered for the operator and, unless
   * asked for, never thrown.
   */
  private print(
    doc: ReceiptDocument,
    rethrow = false,
    qr: Promise<EReceiptQr | undefined> = eReceiptQr(doc, this.settings),
  ): Promise<boolean> {
    const printer = this.printer;
    if (!printer)
      return rethrow
        ? Promise.reject(new PrinterError('PRINTER_UNAVAILABLE', 'no printer configured'))
        : Promise.resolve(false);
    this.pending += 1;
    const job = this.printing.then(async () => {
      const code = await qr;
      await printer.print({
        title: doc.title,
        fields: doc.fields,
        ...(code !== undefined ? { qr: code.payload } : {}),
      });
      this.lastError = undefined;
      return true;
    });
    const settled = job
      .catch((e: unknown) => {
        this.lastError = e instanceof PrinterError ? `${e.code}: ${e.message}` : String(e);
        if (e instanceof PrinterError && e.sent && this.recent.has(doc.transactionId))
          this.sentUnprinted.add(doc.transactionId);
        this.logger.warn({ err: e, transactionId: doc.transactionId }, 'receipt not printed');
        return false;
      })
      .finally(() => {
        this.pending -= 1;
      });
    this.printing = settled.then(() => undefined);
    return rethrow ? job : settled;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.printing;
    this.printer?.off('status', this.printerStatusChanged);
    await this.printer?.close();
  }
}
