import { EventEmitter } from 'node:events';
import type { Logger } from '../../src/log/index.js';
import type { Transport, TransportConnection } from '../transports/transport.js';
import { encodeReceipt, type PrinterCodepage } from './escpos.js';
import {
  PrinterError,
  type PrintableReceipt,
  type PrinterEvents,
  type PrinterStatus,
  type ReceiptPrinter,
} from './printer.js';
import {
  AUTOMATIC_STATUS_REST,
  decodeStatus,
  isAutomaticStatusStart,
  isFlowControl,
  isStatusByte,
  printerStatusOf,
  STATUS_SEQUENCE,
  statusRequest,
} from './status.js';

export interface EscPosPrinterOptions {
  /** Characters per line in font A (42 or 48). */
  readonly widthChars: number;
  readonly codepage: PrinterCodepage;
  /** Milliseconds to wait for each real-time status answer before the printer counts as offline. */
  readonly statusTimeoutMs: number;
  /** Milliseconds a job may take to come out whole (its end marker answered) before it fails as offline. */
  readonly printTimeoutMs?: number;
  /** Milliseconds between the real-time status checks made while a job prints. */
  readonly printPollMs?: number;
}

/** A job's wait for the answers of its end markers. */
interface EndWait {
  /** Answers it still needs. */
  remaining: number;
  end: (printed: boolean) => void;
}

/**
 * At most this many end markers' answers are counted as still to come: a printer that never answers GS r would
 * otherwise have every job send more markers than the one before. More jobs than this given up with the printer
 * holding the rest of each, and none of them printed since, is not a case a kiosk meets.
 */
const MAX_UNANSWERED = 8;

/** GS r 1: answered only when the printer reaches it, i.e. after the job before it has printed. */
const JOB_END_MARKER = [0x1d, 0x72, 0x01] as const;
const jobEndMarkers = (n: number): Uint8Array =>
  Uint8Array.from({ length: 3 * n }, (_, i) => JOB_END_MARKER[i % 3]!);
/** A GS r answer has bits 4 and 7 clear; a real-time (DLE EOT) answer has bit 4 set. */
const isJobEndAnswer = (b: number): boolean => (b & 0x90) === 0;

/** The failure of a print in this status; `sent` once any of the receipt was handed to the device. */
function errorFor(status: Exclude<PrinterStatus, 'ready'>, when: string, sent = false): PrinterError {
  switch (status) {
    case 'paper-out':
      return new PrinterError('PRINTER_PAPER_OUT', `the printer is out of paper (${when})`, { sent });
    case 'cover-open':
      return new PrinterError('PRINTER_COVER_OPEN', `the printer's cover is open (${when})`, { sent });
    case 'offline':
      return new PrinterError('PRINTER_OFFLINE', `the printer is offline (${when})`, { sent });
  }
}

/**
 * An ESC/POS thermal printer over any byte transport (serial, a USB device file, the simulator's stream). Receipts
 * are encoded by {@link encodeReceipt}; the state comes from real-time status requests (DLE EOT 1, 2, 4), and a job's
 * completion from a GS r 1 sent after it. The connection is opened again on demand after it was lost, so a printer
 * plugged in (or switched on) later is found by the next status request or print.
 */
export class EscPosPrinter extends EventEmitter<PrinterEvents> implements ReceiptPrinter {
  private connection: TransportConnection | undefined;
  private opening: Promise<TransportConnection> | undefined;
  /** The close of the connection last given up ({@link lost}). */
  private releasing: Promise<void> = Promise.resolve();
  private current: PrinterStatus = 'offline';
  private busy = false;
  private closed = false;
  private realTimeWaiters: Array<(b: number | undefined) => void> = [];
  /** The job waiting for its end markers' answers: how many more it needs, and its end. */
  private job: EndWait | undefined;
  /**
   * End markers sent whose answers may still come: the waiting job's, and those of jobs given up (a paper end or the
   * cover during them), whose rest a printer holds and prints once refilled — or never, switched off meanwhile. An
   * upper bound (see {@link MAX_UNANSWERED}).
   */
  private unanswered = 0;
  /** Bytes of an automatic status back still to come (status.ts `isAutomaticStatusStart`). */
  private automaticStatusLeft = 0;
  /** Bytes received that answered nothing of ours (see {@link onData}). */
  private noise = 0;
  /** The last status request went unanswered while bytes that answered nothing came (a wrong baud rate, say). */
  private garbled = false;

  constructor(
    private readonly transport: Transport,
    private readonly options: EscPosPrinterOptions,
    private readonly logger?: Logger,
  ) {
    super();
  }

  async connect(): Promise<void> {
    this.closed = false;
    await this.ensureOpen();
    await this.queryStatus();
  }

  status(): PrinterStatus {
    return this.current;
  }

  async refreshStatus(): Promise<PrinterStatus> {
    if (this.busy) throw new PrinterError('PRINTER_BUSY', 'a print is outstanding');
    this.busy = true;
    try {
      return await this.queryStatus();
    } finally {
      this.busy = false;
    }
  }

  async print(receipt: PrintableReceipt): Promise<void> {
    if (this.busy) throw new PrinterError('PRINTER_BUSY', 'a print is outstanding');
    this.busy = true;
    try {
      const before = await this.queryStatus();
      if (before === 'offline' && this.garbled)
        throw new PrinterError(
          'PRINTER_PROTOCOL',
          'the printer answers its status requests with bytes that are no ESC/POS answer (a wrong baud rate, or not an ESC/POS printer?): nothing was printed',
        );
      if (before !== 'ready') throw errorFor(before, 'nothing was printed');
      const connection = this.connection;
      if (!connection) throw errorFor('offline', 'nothing was printed');
      const bytes = encodeReceipt(receipt, this.options);
      // One end marker more than the answers that may still come for jobs given up: the printer answers them in order,
      // so once this many answers came, one was this job's own, and the job has come out whatever the others did. Its
      // other answers, coming after, count for the next job the same way.
      const markers = this.unanswered + 1;
      const job = this.nextJobEnd(markers);
      try {
        try {
          await connection.write(bytes);
          this.unanswered = Math.min(this.unanswered + markers, MAX_UNANSWERED);
          await connection.write(jobEndMarkers(markers));
        } catch (e) {
          this.lost();
          throw new PrinterError('PRINTER_OFFLINE', 'the printer went away while printing', {
            cause: e,
            sent: true,
          });
        }
        await this.awaitJob(job.printed);
      } finally {
        // A job given up (paper end or cover during it, no end in time) waits for its end markers no longer: their
        // answers may come later, counted for the next job, or never (the printer switched off and on, its buffer lost).
        job.abandon();
      }
      this.logger?.info({ lines: receipt.fields.length }, 'receipt printed');
    } finally {
      this.busy = false;
    }
  }

  /**
   * Closes the connection and the transport, each waited for a status request's time at most: a device that never
   * finishes closing (a USB printer pulled out mid-write, a network printer whose socket never ends) must not hold
   * the terminal's stop.
   */
  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    const bounded = (closing: Promise<void> | undefined): Promise<void> | undefined =>
      closing && Promise.race([closing, delay(this.options.statusTimeoutMs)]);
    await bounded(connection?.close());
    await bounded(this.transport.dispose?.());
    this.failWaiters();
    this.setStatus('offline');
  }

  /** Waits for the job's end marker while checking every poll that the printer has not stopped. */
  private async awaitJob(printed: Promise<boolean>): Promise<void> {
    const deadline = Date.now() + (this.options.printTimeoutMs ?? 30_000);
    const pollMs = this.options.printPollMs ?? 200;
    for (;;) {
      const done = await Promise.race([printed, delay(pollMs).then(() => undefined)]);
      if (done === true) {
        const after = await this.queryStatus();
        // Paper can run out on the job's last line: the job is whole, the next one would not be.
        if (after === 'offline') throw errorFor(after, 'after the receipt', true);
        return;
      }
      if (done === false) throw errorFor('offline', 'the connection ended during the receipt', true);
      const status = await this.queryStatus();
      if (status !== 'ready') throw errorFor(status, 'the receipt may be incomplete', true);
      if (Date.now() > deadline) throw errorFor('offline', 'the receipt did not finish printing', true);
    }
  }

  /** This job's wait for the answers of its `markers` end markers (false when the connection is lost first). */
  private nextJobEnd(markers: number): { printed: Promise<boolean>; abandon: () => void } {
    let job: EndWait | undefined;
    const printed = new Promise<boolean>((resolve) => {
      job = { remaining: markers, end: resolve };
    });
    this.job = job;
    return {
      printed,
      // Its answers not come yet stay counted in `unanswered`, for the next job.
      abandon: () => {
        if (this.job === job) this.job = undefined;
      },
    };
  }

  /** An end marker answered: one fewer that may still come, and one more for the waiting job. */
  private jobEndAnswered(): void {
    this.unanswered = Math.max(0, this.unanswered - 1);
    const job = this.job;
    if (job === undefined) return;
    job.remaining -= 1;
    if (job.remaining > 0) return;
    this.job = undefined;
    job.end(true);
  }

  private async ensureOpen(): Promise<TransportConnection> {
    if (this.connection) return this.connection;
    this.opening ??= this.releasing
      .then(() =>
        this.transport.open({
          data: (chunk) => this.onData(chunk),
          closed: (error) => {
            this.logger?.warn({ err: error }, 'printer connection lost');
            this.lost();
          },
        }),
      )
      .then(
        (c) => {
          this.opening = undefined;
          if (this.closed) {
            void c.close();
            throw new PrinterError('PRINTER_OFFLINE', 'the printer was closed');
          }
          this.connection = c;
          this.automaticStatusLeft = 0;
          return c;
        },
        (e: unknown) => {
          this.opening = undefined;
          this.setStatus('offline');
          throw e instanceof PrinterError
            ? e
            : new PrinterError('PRINTER_UNAVAILABLE', e instanceof Error ? e.message : String(e), {
                cause: e,
              });
        },
      );
    return this.opening;
  }

  /**
   * The connection is given up: closed as well as forgotten. A write that failed or timed out leaves the device open
   * (a USB device file whose printer took no data), and the usblp driver and a locked serial port allow one open at a
   * time: left open, every later open would fail and the printer stay offline until a restart. Closing a connection
   * that ended by itself does nothing.
   */
  private lost(): void {
    const connection = this.connection;
    this.connection = undefined;
    // The next open waits for this close (the device is not free before it), a status request's time at most: a close
    // that never ends must not hold every later request.
    if (connection) this.releasing = Promise.race([connection.close(), delay(this.options.statusTimeoutMs)]);
    this.failWaiters();
    this.setStatus('offline');
  }

  private failWaiters(): void {
    const realTime = this.realTimeWaiters;
    const job = this.job;
    this.realTimeWaiters = [];
    this.job = undefined;
    for (const w of realTime) w(undefined);
    // Its answers not come yet stay counted: the printer may still print what it holds (a cable pulled, its power on),
    // and answer on the next connection.
    job?.end(false);
  }

  private onData(chunk: Uint8Array): void {
    for (const b of chunk) {
      if (isFlowControl(b)) continue;
      // The rest of an automatic status back: its bytes look like GS r answers, and would be taken for a job's end.
      if (this.automaticStatusLeft > 0) this.automaticStatusLeft -= 1;
      else if (isStatusByte(b)) this.realTimeWaiters.shift()?.(b);
      else if (isAutomaticStatusStart(b)) this.automaticStatusLeft = AUTOMATIC_STATUS_REST;
      else if (isJobEndAnswer(b) && (this.job !== undefined || this.unanswered > 0)) this.jobEndAnswered();
      // Anything else is not an answer to a request of ours: noise, or a printer that speaks at another baud rate.
      else this.noise += 1;
    }
  }

  /** Asks DLE EOT 1, 2 and 4 and sets the status; `offline` when the device cannot be opened or does not answer. */
  private async queryStatus(): Promise<PrinterStatus> {
    // What the last request found: a device that cannot be opened answered nothing, garbled or not.
    this.garbled = false;
    let connection: TransportConnection;
    try {
      connection = await this.ensureOpen();
    } catch {
      return this.setStatus('offline');
    }
    const answers: number[] = [];
    const noiseBefore = this.noise;
    for (const n of STATUS_SEQUENCE) {
      const answer = await this.realTimeRequest(connection, n);
      if (answer === undefined) {
        this.garbled = this.noise > noiseBefore;
        return this.setStatus('offline');
      }
      answers.push(answer);
    }
    const [printer = 0, offlineCause = 0, paperSensor = 0] = answers;
    return this.setStatus(printerStatusOf(decodeStatus({ printer, offlineCause, paperSensor })));
  }

  private realTimeRequest(connection: TransportConnection, n: 1 | 2 | 4): Promise<number | undefined> {
    return new Promise((resolve) => {
      const waiter = (b: number | undefined): void => {
        clearTimeout(timer);
        resolve(b);
      };
      const timer = setTimeout(() => {
        this.realTimeWaiters = this.realTimeWaiters.filter((w) => w !== waiter);
        resolve(undefined);
      }, this.options.statusTimeoutMs);
      this.realTimeWaiters.push(waiter);
      connection.write(statusRequest(n)).catch(() => {
        clearTimeout(timer);
        this.realTimeWaiters = this.realTimeWaiters.filter((w) => w !== waiter);
        this.lost();
        resolve(undefined);
      });
    });
  }

  private setStatus(status: PrinterStatus): PrinterStatus {
    if (status !== this.current) {
      this.current = status;
      this.emit('status', status);
    }
    return status;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
