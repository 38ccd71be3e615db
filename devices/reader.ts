/**
 * The CardReader contract. Every reader (ViVOtech2 over serial, over USB-HID, the simulator) implements it, and one
 * contract suite (devices/reader.contract.ts) holds each of them to it.
 *
 * Guarantees every implementation gives:
 * - Commands never overlap: a second `activate`/`ping`/`firmwareVersion` while one is outstanding rejects at once with
 *   `ReaderError` code `READER_BUSY` and sends nothing to the device.
 * - `cancel` is the exception: it may be called while `activate` is outstanding. It sends the reader's Cancel command
 *   and resolves only once the reader has answered it (or the command timeout expired and the driver resynchronised);
 *   nothing else is sent to the device in between. The outstanding `activate` then rejects with `READER_CANCELLED`.
 * - No call hangs: every command has a timeout (configuration `reader.commandTimeoutMs`; `activate` adds its own
 *   `timeoutSeconds`), after which it rejects with `READER_TIMEOUT` and the driver resynchronises its frame parser.
 * - An `activate` the reader itself ends because no card came within `timeoutSeconds` (its timeout answer, status 08)
 *   rejects with `CARD_NOT_PRESENTED`, not `READER_TIMEOUT`: the reader answered and is ready; nobody presented a
 *   card. `READER_TIMEOUT` always means the reader did not answer.
 * - A card read that arrives after the activate it belonged to was cancelled or timed out is discarded, never
 *   delivered to a later activate. When the reader did not confirm a Cancel (no answer, or a status other than 00),
 *   the next `activate` sends Cancel again and starts only once the reader confirms it (else it rejects with
 *   `READER_TIMEOUT`, having started no read).
 * - Card data (PAN, tracks, tag 57/5A values) exists only in the `CardRead` object; nothing here logs it.
 */

/** How the card was read. `msd` is contactless magnetic-stripe mode. */
export type EntryMode = 'contact' | 'contactless' | 'swiped' | 'msd';

/** One TLV as read from the card or reader; constructed groups are flattened into their primitive children. */
export interface CardTlv {
  /** Upper-case hex tag, e.g. "9F26", "DFEE26". */
  readonly tag: string;
  readonly value: Uint8Array;
}

/** The result of a successful activate. Holds card data: never log it, never send it to the UI. */
export interface CardRead {
  readonly entryMode: EntryMode;
  /** All primitive TLVs of the reply (reader-private tags included) in the order received. */
  readonly tlvs: readonly CardTlv[];
  /** Track 1 / 2 / 3 as ASCII, sentinels as the reader sent them (often none). */
  readonly track1?: string;
  readonly track2?: string;
  readonly track3?: string;
  /** PAN masked to at most the first 6 and last 4 digits, e.g. "476173******0119". */
  readonly maskedPan: string;
  /** True when a chip card (service code 2xx/6xx) was swiped: fallback rules apply. */
  readonly fallback: boolean;
  /** Reader status of the reply: `00` OK, `23` request online authorization. */
  readonly readerStatus: 'ok' | 'online-requested';
}

export interface ActivateOptions {
  /** Amount authorised (9F02) in minor units. */
  readonly amountMinor: number;
  /** Amount other (9F03) in minor units; 0 when there is none. */
  readonly otherAmountMinor: number;
  /** ISO 4217 numeric currency code (5F2A), e.g. "978". */
  readonly currencyNumeric: string;
  /** ISO 3166 numeric country code (9F1A), e.g. "826". */
  readonly countryNumeric: string;
  /** EMV transaction type (9C): "00" goods and services, "20" refund, "30" balance inquiry. */
  readonly transactionType: '00' | '20' | '30';
  /** Seconds the reader waits for a card (1–255). */
  readonly timeoutSeconds: number;
  /** Aborting is the same as calling `cancel()`. */
  readonly signal?: AbortSignal;
}

export type ReaderErrorCode =
  | 'READER_BUSY' // a command is already outstanding
  | 'READER_TIMEOUT' // the reader did not answer within the command timeout (activate: timeoutSeconds + it)
  | 'READER_CANCELLED' // cancel() or the abort signal ended the activate
  | 'READER_DISCONNECTED' // the transport closed or the device went away
  | 'READER_NOT_CONNECTED' // a command before connect() or during a reconnect
  | 'READER_PROTOCOL' // a reply that does not fit the protocol (status codes 01–0D other than 08; activate error
  //                     codes 01, 03, 40, 41: the terminal sent something the reader refused)
  | 'READER_UNAVAILABLE' // the transport cannot be opened (no such port, node-hid libraries missing)
  | 'CARD_COLLISION' // more than one card in the field
  | 'CARD_NOT_PRESENTED' // activate: the reader answered that no card came within timeoutSeconds (status 08)
  | 'CARD_REMOVED' // the card left before the read completed (activate error code 30, card did not respond)
  | 'CARD_EXPIRED'
  | 'CARD_BLOCKED'
  | 'CARD_UNSUPPORTED' // the reader does not support the card or its network
  | 'CARD_DECLINED_OFFLINE' // the card generated an AAC
  | 'CARD_USE_CONTACT' // contactless refused: insert the card
  | 'CARD_ERROR'; // any other card error (activate error codes 20, 24, 43, 50–62)

/**
 * Every failure of a reader call. `activateErrorCode` / `status` carry the reader's raw codes when there are some.
 * `chipUnreadable`: the card's contact chip could not be read or talked to — a technical failure of the chip (activate
 * error 20, the card answered an error status; 24, card communication error, with the card in the contact slot), the
 * one failure after which EMV lets the terminal take the card's magnetic stripe (a fallback). Absent for a chip that
 * was read and then failed a processing step (data authentication, processing restrictions, terminal risk management,
 * cardholder verification: 50–58), a generic error (62) or anything else: the stripe of such a card is never a way
 * round its chip.
 * `tapFailed`: the same errors 20 and 24 during a tap (the reader's failure data names the contactless exchange,
 * devices/vivotech2/status.ts). The card networks define no fallback after a contactless failure: the card is to be
 * tapped again or inserted, and a chip card swiped then is its chip not tried.
 * Neither is set when the reader's data does not say which interface failed.
 */
export class ReaderError extends Error {
  override readonly name = 'ReaderError';
  constructor(
    readonly code: ReaderErrorCode,
    message: string,
    readonly detail: {
      status?: number;
      activateErrorCode?: number;
      chipUnreadable?: true;
      tapFailed?: true;
    } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Health of the reader as shown in the operator status bar: `disconnected` before connect and after close,
 * `connecting` during connect, `ready` idle, `busy` while an activate is outstanding, `reconnecting` after the
 * transport went away (or the idle watchdog ping went unanswered) until the reader answers again.
 */
export type ReaderHealth = 'connecting' | 'ready' | 'busy' | 'reconnecting' | 'disconnected';

export interface ReaderEvents {
  'card-detected': [];
  disconnected: [error: ReaderError];
  reconnected: [];
  error: [error: ReaderError];
  health: [health: ReaderHealth];
}

export interface CardReader {
  /**
   * Opens the transport, pings the reader and sets poll-on-demand mode. Resolves when the reader answered. When it
   * fails it rejects (READER_UNAVAILABLE, READER_TIMEOUT …) and keeps retrying in the background with the reconnect
   * backoff (health `reconnecting`); `reconnected` is emitted once the reader answers, so a reader plugged in after
   * start comes up without a restart. After a disconnect the driver reconnects by itself: delays double from
   * `reconnectInitialMs` up to `reconnectMaxMs`.
   */
  connect(): Promise<void>;
  /**
   * Starts a transaction and waits for a card. Resolves with the card read; rejects with a ReaderError (card errors
   * included). Refused with READER_BUSY while another command is outstanding.
   */
  activate(options: ActivateOptions): Promise<CardRead>;
  /** Cancels the outstanding activate; resolves once the reader answered the Cancel. A no-op when idle. */
  cancel(): Promise<void>;
  /** Round trip to the reader (command 18-01). */
  ping(): Promise<void>;
  /** The reader's firmware version string (command 29-00). */
  firmwareVersion(): Promise<string>;
  /** Current health; changes are also emitted as `health` events. */
  readonly health: ReaderHealth;
  on<E extends keyof ReaderEvents>(event: E, listener: (...args: ReaderEvents[E]) => void): this;
  off<E extends keyof ReaderEvents>(event: E, listener: (...args: ReaderEvents[E]) => void): this;
  /** Stops the watchdog and reconnects and closes the transport. */
  close(): Promise<void>;
}
