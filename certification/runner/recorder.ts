/**
 * Records every HTTP exchange between the terminal's gateway client and the gateway, in process: the client is given
 * this dispatcher instead of its own pool (TerminalHostOptions.gatewayDispatcher), so the bytes recorded are the
 * bytes signed and sent — to the embedded sandbox or to a remote test host over TLS alike. Each origin's exchanges go
 * through the terminal's own connection pool (src/gateway/connection-pool.ts), as in production.
 */
import type { Dispatcher } from 'undici';
import { ConnectionPool, type ExchangeDispatcher } from '../../src/gateway/index.js';

/** One exchange as it went over the wire. Bodies are raw: the runner masks before anything is written. */
export interface RecordedExchange {
  /** Set by the runner: which step of the case was running. */
  step: number | null;
  at: Date;
  method: string;
  path: string;
  requestBody: Buffer;
  httpStatus: number | null;
  responseBody: Buffer;
  /** Why no answer came (reset, timeout), when none came. */
  failure?: string;
  durationMs: number;
  done: boolean;
}

function bodyBytes(body: Dispatcher.DispatchOptions['body']): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  return Buffer.from('[stream body not recorded]');
}

/** Passes every callback through to the client's handler, keeping a copy of the answer. */
class RecordingHandler implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private readonly started = performance.now();

  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly entry: RecordedExchange,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    if (statusCode >= 200) this.entry.httpStatus = statusCode;
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(Buffer.from(chunk));
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(
    controller: Dispatcher.DispatchController,
    trailers: Record<string, string | string[] | undefined>,
  ): void {
    this.finish();
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.entry.failure = error.message;
    if (this.entry.httpStatus !== null && this.chunks.length === 0)
      this.entry.failure += ' (after the status line)';
    this.finish();
    this.inner.onResponseError?.(controller, error);
  }

  private finish(): void {
    if (this.entry.done) return;
    this.entry.done = true;
    this.entry.responseBody = Buffer.concat(this.chunks);
    this.entry.durationMs = Math.round(performance.now() - this.started);
    if (this.entry.failure !== undefined) this.entry.httpStatus = null;
  }
}

/** A dispatcher that records, and the exchanges it recorded in the order they were sent. */
export class ExchangeRecorder implements ExchangeDispatcher {
  readonly exchanges: RecordedExchange[] = [];
  /** The step now running; stamped on every exchange sent from now on. */
  step: number | null = null;
  /** The dispatcher to give the terminal: this recorder. */
  readonly dispatcher: ExchangeDispatcher = this;
  /** The terminal's connection pool of each origin asked (the gateway's, an OAuth token host's). */
  private readonly pools = new Map<string, ConnectionPool>();

  constructor(private readonly timeouts: { connectMs: number; headersMs: number; bodyMs: number }) {}

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(opts.origin);
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new ConnectionPool(origin, {
        connections: 16,
        connectTimeoutMs: this.timeouts.connectMs,
        keepAliveMs: 30_000,
      });
      this.pools.set(origin, pool);
    }
    const entry: RecordedExchange = {
      step: this.step,
      at: new Date(),
      method: String(opts.method),
      path: opts.path,
      requestBody: bodyBytes(opts.body),
      httpStatus: null,
      responseBody: Buffer.alloc(0),
      durationMs: 0,
      done: false,
    };
    this.exchanges.push(entry);
    return pool.dispatch(opts, new RecordingHandler(handler, entry));
  }

  /** Exchanges recorded from `index` on. */
  since(index: number): RecordedExchange[] {
    return this.exchanges.slice(index);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }
}
