import { EventEmitter } from 'node:events';
import { TlvError } from '../../src/emv/index.js';
import type { Logger } from '../../src/log/index.js';
import {
  ReaderError,
  type ActivateOptions,
  type CardRead,
  type CardReader,
  type ReaderEvents,
  type ReaderHealth,
} from '../reader.js';
import type { Transport, TransportConnection } from '../transports/transport.js';
import {
  buildActivateData,
  COMMANDS,
  parseActivateReply,
  POLL_MODE,
  toCardRead,
  type CommandId,
  type Track3Layout,
} from './commands.js';
import { encodeHostFrame, MAX_DATA_LENGTH, type FrameError, type RawFrame } from './frame.js';
import { FrameParser } from './parser.js';
import { errorForStatus, STATUS } from './status.js';

/** Timing and layout options of the driver (configuration `reader`, mapped by the host). */
export interface DriverOptions {
  /** Milliseconds to wait for any reply frame; `activate` adds its `timeoutSeconds`. */
  readonly commandTimeoutMs: number;
  /** Idle watchdog ping interval, milliseconds. A failed watchdog ping is handled as a disconnect. */
  readonly watchdogMs: number;
  /** First reconnect delay, milliseconds; doubles after each failed attempt. */
  readonly reconnectInitialMs: number;
  /** Cap of the reconnect delay, milliseconds. */
  readonly reconnectMaxMs: number;
  /** Whether Activate replies carry a track 3 field. */
  readonly track3: Track3Layout;
}

interface Outstanding {
  readonly command: CommandId;
  readonly resolve: (frame: RawFrame) => void;
  readonly reject: (error: ReaderError) => void;
  timer: NodeJS.Timeout | undefined;
  /** Set once a Cancel was sent for this activate: its reply, should it still come, is discarded. */
  cancelled: boolean;
  /** A command of the driver's own (handshake, watchdog ping): callers wait for it instead of getting READER_BUSY. */
  readonly internal: boolean;
  /** Resolves when the command ended, however it ended. */
  readonly settled: Promise<void>;
}

interface CancelWait {
  readonly done: Promise<void>;
  /** Ends the wait; `answered` when the reader answered the Cancel with status 00. */
  readonly finish: (answered: boolean) => void;
}

const hex2 = (n: number): string => n.toString(16).padStart(2, '0').toUpperCase();

/**
 * Milliseconds without a byte after which a frame that has not fully arrived is taken as cut short (the parser's
 * `lineQuiet`). A reader sends a frame without pauses: at 115200 baud 8N1 a byte takes 87 µs and the longest frame
 * (MAX_DATA_LENGTH) 0.36 s in all, and USB-serial adapters hand bytes on at least every 16 ms (their latency timer).
 * Over USB-HID the transport hands on whole frames, reassembled by LEN from 64-byte reports, so report pacing never
 * splits a frame here. 100 ms is several times those pauses and leaves room for a busy event loop, yet frees an answer
 * behind a frame cut short well within the command timeout (3000 ms by default).
 */
export const INTER_BYTE_GAP_MS = 100;

/** Delay before reconnect attempt `attempt` (0-based): initial × 2^attempt, capped. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
}

/**
 * The ViVOtech2 driver: one CardReader over any byte transport (serial, HID, the simulator's stream). It owns the
 * frame parser, serialises commands (one outstanding at a time, reader.ts), times every command out, pings the reader
 * while idle, and reconnects with capped exponential backoff when the transport goes away.
 */
export class ViVOtech2Reader extends EventEmitter implements CardReader {
  private connection: TransportConnection | undefined;
  private readonly parser = new FrameParser('reader-to-host', MAX_DATA_LENGTH, (e) => this.onFrameError(e));
  private outstanding: Outstanding | undefined;
  private cancelWait: CancelWait | undefined;
  private state: ReaderHealth = 'disconnected';
  private closed = false;
  private handshaking = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  /** Runs INTER_BYTE_GAP_MS after the last read while the parser holds bytes of a frame. */
  private gapTimer: NodeJS.Timeout | undefined;
  /** When gapTimer was set (Date.now()). */
  private gapFrom = 0;
  private firmware: string | undefined;
  private connecting: Promise<void> | undefined;
  /** An activate waiting for the watchdog ping to end before it is sent; cancel() marks it. */
  private activateWaiting: { cancelled: boolean } | undefined;
  /**
   * Set when a Cancel got no answer (timeout, failed write, lost connection) or was refused (a status other than 00),
   * when the link went away while an Activate was on the reader, or when the reader refused an Activate as not
   * allowed (0B: it is in a read of its own). The reader may still be in that read, and its result may still come: a
   * reconnect's handshake and the next activate send Cancel first, and the activate starts only once the reader
   * answers it, so that a late result (it precedes the answer) is discarded, never delivered.
   */
  private cancelUnanswered = false;
  /** Frames discarded because nothing was waiting for them (late replies after a cancel or timeout). */
  discardedFrames = 0;
  /** Frames the parser rejected (wrong CRC, LEN above the limit, cut short); none of their bytes became a reply. */
  rejectedFrames = 0;

  constructor(
    private readonly transport: Transport,
    private readonly options: DriverOptions,
    private readonly logger?: Logger,
  ) {
    super();
  }

  get health(): ReaderHealth {
    return this.state;
  }

  /** The transport's description, e.g. "serial /dev/ttyUSB0 @115200". */
  get description(): string {
    return this.transport.description;
  }

  override on<E extends keyof ReaderEvents>(event: E, listener: (...args: ReaderEvents[E]) => void): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }

  override off<E extends keyof ReaderEvents>(event: E, listener: (...args: ReaderEvents[E]) => void): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }

  private setHealth(health: ReaderHealth): void {
    if (this.state === health) return;
    this.state = health;
    this.emit('health', health);
  }

  /** Emits `error` only when someone listens: an unheard 'error' event would throw out of EventEmitter. */
  private report(error: ReaderError): void {
    this.logger?.warn({ code: error.code }, `reader: ${error.message}`);
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new ReaderError('READER_NOT_CONNECTED', 'reader was closed'));
    // Concurrent callers share one attempt; a connected reader resolves at once.
    if (this.connecting) return this.connecting;
    if (this.connection && !this.handshaking) return Promise.resolve();
    this.connecting = this.connectOnce().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connectOnce(): Promise<void> {
    this.clearReconnect();
    this.setHealth('connecting');
    try {
      await this.openAndHandshake();
    } catch (e) {
      const error = asReaderError(e);
      if (!this.closed) {
        // Keep trying in the background: a kiosk whose reader is plugged in after start must come up by itself.
        this.setHealth('reconnecting');
        this.scheduleReconnect();
      }
      throw error;
    }
    this.attempt = 0;
    this.setHealth('ready');
    this.armWatchdog();
  }

  private async openAndHandshake(): Promise<void> {
    this.resetParser();
    const connection = await this.transport.open({
      data: (chunk) => this.onData(chunk),
      closed: (error) => {
        if (this.connection === connection) this.onTransportClosed(error);
      },
    });
    if (this.closed) {
      await connection.close();
      throw new ReaderError('READER_NOT_CONNECTED', 'reader was closed');
    }
    this.connection = connection;
    this.handshaking = true;
    this.firmware = undefined;
    try {
      // The reader may still be in a read the host could not stop (cancelUnanswered): a reader in a read refuses all
      // but Cancel (status 0B), so it is cancelled first, or no handshake would pass until that read timed out.
      if (this.cancelUnanswered) await this.sendCancel();
      await this.simple(COMMANDS.ping, undefined, true);
      await this.simple(COMMANDS.setPollMode, Uint8Array.of(POLL_MODE.onDemand), true);
      try {
        this.firmware = asciiOf(await this.simple(COMMANDS.firmwareVersion, undefined, true));
      } catch (e) {
        // A reader that cannot say its firmware still reads cards; firmwareVersion() asks again later.
        if (asReaderError(e).code === 'READER_DISCONNECTED') throw e;
      }
    } catch (e) {
      this.connection = undefined;
      await connection.close();
      throw e;
    } finally {
      this.handshaking = false;
    }
    this.logger?.info({ transport: this.transport.description }, 'reader ready');
  }

  private onData(chunk: Uint8Array): void {
    this.clearGap();
    for (const frame of this.parser.push(chunk)) this.onFrame(frame);
    // A frame not yet complete: its bytes come without pauses, or it was cut short (the parser's lineQuiet).
    if (this.parser.pending > 0) this.armGap();
  }

  private armGap(): void {
    this.gapFrom = Date.now();
    this.gapTimer = setTimeout(() => this.onGap(), INTER_BYTE_GAP_MS);
    this.gapTimer.unref();
  }

  private onGap(): void {
    this.gapTimer = undefined;
    // A timer a whole gap late ran after the event loop was held: bytes that came meanwhile may be waiting to be read,
    // behind this timer. Taken as quiet, the line would cut a good frame short and let its first read's card data be
    // searched for frames. It is quiet only after a gap in which reads could be delivered.
    if (Date.now() - this.gapFrom >= 2 * INTER_BYTE_GAP_MS) {
      this.armGap();
      return;
    }
    for (const frame of this.parser.lineQuiet()) this.onFrame(frame);
  }

  private clearGap(): void {
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }

  /** Drops every byte the parser holds (resynchronisation after a timeout, a new connection). */
  private resetParser(): void {
    this.clearGap();
    this.parser.reset();
  }

  /** A damaged frame on the line: a fault for the operator's log, by its code and offset only (it may hold card data). */
  private onFrameError(error: FrameError): void {
    this.rejectedFrames++;
    this.logger?.warn({ code: error.code, offset: error.offset }, `reader: ${error.message}`);
  }

  private onFrame(frame: RawFrame): void {
    this.logger?.debug(
      { cmd: hex2(frame.cmd), status: hex2(frame.code), length: frame.data.length },
      'reader frame',
    );
    if (frame.cmd === COMMANDS.cancel.cmd && this.cancelWait) {
      // Only status 00 says the reader stopped: a refused Cancel (0A failed/NACK, 0B not allowed) leaves the read
      // running, and its result may still come.
      this.cancelWait.finish(frame.code === STATUS.OK);
      return;
    }
    const out = this.outstanding;
    if (!out || out.command.cmd !== frame.cmd || out.cancelled) {
      // A reply nobody waits for: the late answer of a command that timed out or was cancelled (reader.ts: a card
      // read after a cancel or timeout is discarded, never delivered to a later activate).
      this.discardedFrames++;
      return;
    }
    if (out.command === COMMANDS.activate && frame.code === STATUS.USER_INTERFACE_EVENT) {
      // Status 0E, data 01: card detected, transaction started; the result follows in a later frame.
      if (frame.data[0] === 0x01) this.emit('card-detected');
      return;
    }
    this.finishOutstanding(out);
    out.resolve(frame);
  }

  private finishOutstanding(out: Outstanding): void {
    if (out.timer) clearTimeout(out.timer);
    out.timer = undefined;
    if (this.outstanding === out) this.outstanding = undefined;
  }

  /**
   * Sends one command and waits for the reply with the same command byte. Rejects READER_BUSY when a command is
   * outstanding, READER_TIMEOUT after `timeoutMs` (the parser is reset: resynchronisation), READER_DISCONNECTED when
   * the transport goes away.
   */
  private exchange(
    command: CommandId,
    data?: Uint8Array,
    timeoutMs = this.options.commandTimeoutMs,
    internal = false,
  ): Promise<RawFrame> {
    const connection = this.connection;
    // During a handshake only the handshake's own commands go out: a caller's command sent between them would
    // interleave with the handshake and be left outstanding on a connection the failed handshake closes.
    const open =
      this.state === 'ready' || this.state === 'busy' ? !this.handshaking : this.handshaking && internal;
    if (!connection || !open)
      return Promise.reject(
        new ReaderError('READER_NOT_CONNECTED', `${command.name}: reader is ${this.state}`),
      );
    if (this.outstanding || this.cancelWait)
      return Promise.reject(
        new ReaderError('READER_BUSY', `${command.name}: another command is outstanding`),
      );
    this.disarmWatchdog();
    let settle!: () => void;
    const settled = new Promise<void>((r) => (settle = r));
    return new Promise<RawFrame>((resolve, reject) => {
      const out: Outstanding = {
        command,
        resolve: (frame) => {
          settle();
          this.armWatchdog();
          resolve(frame);
        },
        reject: (error) => {
          settle();
          this.armWatchdog();
          reject(error);
        },
        timer: undefined,
        cancelled: false,
        internal,
        settled,
      };
      out.timer = setTimeout(() => {
        this.finishOutstanding(out);
        this.resetParser();
        out.reject(new ReaderError('READER_TIMEOUT', `${command.name}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.outstanding = out;
      connection.write(encodeHostFrame({ cmd: command.cmd, sub: command.sub, data })).catch((e: unknown) => {
        if (this.outstanding !== out) return;
        this.finishOutstanding(out);
        out.reject(asReaderError(e, 'READER_DISCONNECTED'));
      });
    });
  }

  /**
   * Waits while a command of the driver's own (watchdog ping) is outstanding: the driver's housekeeping must never
   * make a caller's command fail with READER_BUSY. Bounded by the command timeout of that command.
   */
  private async yieldToHousekeeping(): Promise<void> {
    while (this.outstanding?.internal) await this.outstanding.settled;
  }

  /** Sends a command that must answer status 00 and returns its data. */
  private async simple(command: CommandId, data?: Uint8Array, internal = false): Promise<Uint8Array> {
    if (!internal) await this.yieldToHousekeeping();
    const reply = await this.exchange(command, data, this.options.commandTimeoutMs, internal);
    if (reply.code !== STATUS.OK) throw errorForStatus(command.name, reply.code, reply.data, false);
    return reply.data;
  }

  async ping(): Promise<void> {
    await this.simple(COMMANDS.ping);
  }

  /**
   * The firmware version read (29-00) at the last (re)connect; a round trip only when that read failed. Firmware
   * does not change while the reader stays connected, and a caller asking right after connect must not collide with
   * the first sale (READER_BUSY).
   */
  async firmwareVersion(): Promise<string> {
    if (this.firmware !== undefined && this.connection && (this.state === 'ready' || this.state === 'busy'))
      return this.firmware;
    this.firmware = asciiOf(await this.simple(COMMANDS.firmwareVersion));
    return this.firmware;
  }

  async activate(options: ActivateOptions): Promise<CardRead> {
    if (options.signal?.aborted) throw new ReaderError('READER_CANCELLED', 'activate: aborted before start');
    const data = buildActivateData(options);
    // A cancel still waiting for its answer (the customer cancelled the previous read a moment ago): nothing may be
    // sent before the reader answers it (reader-protocol.md, 05-01), so this read waits for it rather than failing.
    while (this.cancelWait) {
      await this.cancelWait.done;
      if (options.signal?.aborted)
        throw new ReaderError('READER_CANCELLED', 'activate: aborted before start');
    }
    if (this.outstanding?.internal || this.cancelUnanswered) {
      // Only when the driver's own ping is on the wire, or a Cancel is to be repeated: otherwise the activate
      // registers synchronously, so that a cancel() right after activate() finds it.
      const waiting = { cancelled: false };
      this.activateWaiting = waiting;
      const onEarlyAbort = (): void => {
        waiting.cancelled = true;
      };
      options.signal?.addEventListener('abort', onEarlyAbort, { once: true });
      try {
        await this.yieldToHousekeeping();
        if (this.cancelUnanswered && this.connection && !waiting.cancelled) await this.sendCancel();
      } finally {
        options.signal?.removeEventListener('abort', onEarlyAbort);
        if (this.activateWaiting === waiting) this.activateWaiting = undefined;
      }
      if (waiting.cancelled)
        throw new ReaderError('READER_CANCELLED', 'activate cancelled before it was sent');
      if (this.cancelUnanswered && this.connection)
        throw new ReaderError(
          'READER_TIMEOUT',
          'activate: the reader has not confirmed Cancel of the previous read; no read was started',
        );
    }
    const waitMs = options.timeoutSeconds * 1000 + this.options.commandTimeoutMs;
    const exchange = this.exchange(COMMANDS.activate, data, waitMs);
    // exchange() registered the outstanding command synchronously (or rejected at once with BUSY / NOT_CONNECTED).
    const out = this.outstanding?.command === COMMANDS.activate ? this.outstanding : undefined;
    if (out) this.setHealth('busy');
    const onAbort = (): void => void this.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let reply: RawFrame;
      try {
        reply = await exchange;
      } catch (e) {
        const error = asReaderError(e);
        // The reader did not answer (no card is CARD_NOT_PRESENTED, its own answer): a fault for the operator's log.
        if (error.code === 'READER_TIMEOUT')
          this.logger?.warn({ code: error.code }, `reader: ${error.message}`);
        // The reader may still be waiting for a card: stop it before anyone sends anything else (reader.ts).
        if (error.code === 'READER_TIMEOUT' && this.connection) await this.sendCancel();
        // The link went away (unplugged, a failed write) with the read on the reader: a reader with its own power keeps
        // it and sends its result on the next link. The next activate cancels it first, as after an unanswered Cancel.
        if (error.code === 'READER_DISCONNECTED') this.cancelUnanswered = true;
        throw error;
      }
      // 0B, command not allowed: the reader is in a transaction of its own (one the link lost, or a host before a
      // restart started): its result may still come, so the next activate cancels it first.
      if (reply.code === STATUS.COMMAND_NOT_ALLOWED) this.cancelUnanswered = true;
      if (reply.code !== STATUS.OK && reply.code !== STATUS.REQUEST_ONLINE_AUTHORIZATION)
        throw errorForStatus(COMMANDS.activate.name, reply.code, reply.data, true);
      try {
        return toCardRead(parseActivateReply(reply.data, this.options.track3), reply.code);
      } catch (e) {
        if (e instanceof TlvError)
          throw new ReaderError(
            'READER_PROTOCOL',
            `activate reply: ${e.message}`,
            { status: reply.code },
            { cause: e },
          );
        throw e;
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      if (this.state === 'busy') this.setHealth('ready');
    }
  }

  async cancel(): Promise<void> {
    if (this.activateWaiting) this.activateWaiting.cancelled = true;
    if (this.cancelWait) return this.cancelWait.done;
    const out = this.outstanding;
    if (!out || out.command !== COMMANDS.activate || out.cancelled) return;
    out.cancelled = true;
    await this.sendCancel();
    this.finishOutstanding(out);
    out.reject(new ReaderError('READER_CANCELLED', 'activate cancelled'));
  }

  /**
   * Sends Cancel Transaction and waits for its answer (or the command timeout, after which the parser is reset).
   * While it waits, every other command is refused with READER_BUSY: after a cancel the host must send nothing else
   * until the reader answers (reader-protocol.md, 05-01).
   */
  private sendCancel(): Promise<void> {
    if (this.cancelWait) return this.cancelWait.done;
    const connection = this.connection;
    if (!connection) return Promise.resolve();
    let finish!: (answered: boolean) => void;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.resetParser();
        finish(false);
      }, this.options.commandTimeoutMs);
      finish = (answered) => {
        clearTimeout(timer);
        this.cancelUnanswered = !answered;
        if (this.cancelWait?.done === done) this.cancelWait = undefined;
        this.armWatchdog();
        resolve();
      };
    });
    this.cancelWait = { done, finish };
    this.disarmWatchdog();
    connection
      .write(encodeHostFrame({ cmd: COMMANDS.cancel.cmd, sub: COMMANDS.cancel.sub }))
      .catch(() => this.cancelWait?.finish(false));
    return done;
  }

  private onTransportClosed(error: Error | undefined): void {
    const readerError = new ReaderError(
      'READER_DISCONNECTED',
      `reader disconnected (${this.transport.description})${error ? `: ${error.message}` : ''}`,
      {},
      { cause: error },
    );
    this.dropConnection(readerError);
  }

  /** Fails whatever is outstanding, forgets the connection and starts reconnecting. */
  private dropConnection(error: ReaderError): void {
    const connection = this.connection;
    this.connection = undefined;
    this.disarmWatchdog();
    this.resetParser();
    this.cancelWait?.finish(false);
    const out = this.outstanding;
    if (out) {
      this.finishOutstanding(out);
      out.reject(
        out.cancelled
          ? new ReaderError('READER_CANCELLED', 'activate cancelled', {}, { cause: error })
          : error,
      );
    }
    if (connection) void connection.close();
    if (this.closed) return;
    this.logger?.warn({ code: error.code }, 'reader disconnected; reconnecting');
    this.setHealth('reconnecting');
    this.emit('disconnected', error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = backoffDelay(this.attempt, this.options.reconnectInitialMs, this.options.reconnectMaxMs);
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.reconnectOnce();
    }, delay);
  }

  private async reconnectOnce(): Promise<void> {
    if (this.closed || this.connection || this.connecting) return;
    try {
      await this.openAndHandshake();
    } catch (e) {
      if (this.closed) return;
      this.report(asReaderError(e));
      this.scheduleReconnect();
      return;
    }
    this.attempt = 0;
    this.setHealth('ready');
    this.logger?.info('reader reconnected');
    this.emit('reconnected');
    this.armWatchdog();
  }

  private clearReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  private armWatchdog(): void {
    this.disarmWatchdog();
    if (this.closed || !this.connection || this.handshaking) return;
    this.watchdogTimer = setTimeout(() => void this.watchdog(), this.options.watchdogMs);
    this.watchdogTimer.unref();
  }

  private disarmWatchdog(): void {
    if (this.watchdogTimer) clearTimeout(this.watchdogTimer);
    this.watchdogTimer = undefined;
  }

  /** Idle ping; a reader that does not answer is hung: drop the connection and reconnect. */
  private async watchdog(): Promise<void> {
    this.watchdogTimer = undefined;
    if (this.outstanding || this.cancelWait || this.state !== 'ready') return;
    try {
      await this.simple(COMMANDS.ping, undefined, true);
    } catch (e) {
      const error = asReaderError(e);
      if (error.code === 'READER_BUSY' || error.code === 'READER_NOT_CONNECTED' || !this.connection) return;
      this.report(error);
      this.dropConnection(
        new ReaderError(
          'READER_DISCONNECTED',
          `watchdog ping failed: ${error.message}`,
          {},
          { cause: error },
        ),
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearReconnect();
    this.disarmWatchdog();
    this.clearGap();
    const connection = this.connection;
    this.connection = undefined;
    this.cancelWait?.finish(false);
    const out = this.outstanding;
    if (out) {
      this.finishOutstanding(out);
      out.reject(new ReaderError('READER_DISCONNECTED', 'reader closed'));
    }
    this.setHealth('disconnected');
    if (connection) await connection.close();
    await this.transport.dispose?.();
  }
}

function asReaderError(
  e: unknown,
  fallback: 'READER_PROTOCOL' | 'READER_DISCONNECTED' = 'READER_PROTOCOL',
): ReaderError {
  if (e instanceof ReaderError) return e;
  return new ReaderError(fallback, e instanceof Error ? e.message : String(e), {}, { cause: e });
}

/** ASCII text of a reply, without the trailing NULs some firmware sends. */
function asciiOf(data: Uint8Array): string {
  return String.fromCharCode(...data)
    .replace(/\0+$/, '')
    .trim();
}
