/**
 * The gateway's keep-alive HTTP/1.1 connections: what the transport's exchanges need and nothing more. One request at a
 * time per connection (no pipelining), the request's head and body written in one piece, the answer framed by its
 * `content-length`, by chunks or by the end of the connection, and handed over through the handler contract of undici's
 * dispatchers (`onRequestStart`, `onResponseStart`, `onResponseData`, `onResponseEnd`, `onResponseError`), so that the
 * transport reads an answer the same way from this pool and from undici's MockAgent in tests.
 *
 * Why not undici's Pool, which the transport used before: on this exchange — one signed JSON POST, one JSON answer of a
 * kilobyte — its general machinery (request objects and their header checks, the WebAssembly parser's callbacks,
 * stream writes in two parts) cost about 30–40 µs of CPU per request on the build machine, a third of what the whole
 * authorization may cost (`parking-terminal bench`, gateway.authorize; ARCHITECTURE.md, performance).
 *
 * What the money rules need of a transport is kept exactly:
 * - a request's handler is given its controller (`onRequestStart`) only once the request sits on a connected socket,
 *   just before its bytes are written: a failure before that (connection refused, TLS refused, connect timeout, a
 *   header no HTTP line can carry) means that nothing left the terminal;
 * - after that, any failure — reset, close before the answer is complete, an answer that is not HTTP — is reported, and
 *   the transport treats the outcome as unknown;
 * - a connection is reused only after a complete answer that leaves it open, never after a failure or an abort.
 *
 * Failures carry the codes undici gives the same failures (UND_ERR_CONNECT_TIMEOUT, UND_ERR_INVALID_ARG,
 * UND_ERR_SOCKET, …) or the socket's own (ECONNREFUSED, ECONNRESET, …), so that one mapping reads both
 * (transport.ts, `transportError`).
 */
import { createConnection, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Dispatcher } from 'undici';

/** What the transport asks of a dispatcher: this pool, or undici's (MockAgent in tests). */
export interface ExchangeDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
}

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  /** Most connections open at once; requests beyond them wait for one to be free. */
  connections: number;
  /** Establishing the TCP connection and its TLS handshake (ms). */
  connectTimeoutMs: number;
  /**
   * How long a free connection is kept open (ms); shortened to one second less than the server's own idle limit when
   * its answers state one (`keep-alive: timeout=N`), so that the terminal closes first.
   */
  keepAliveMs: number;
  /** Largest answer head (status line and headers) read, bytes; default 16 KiB. */
  maxHeadBytes?: number;
}

/** A failure of the pool: `code` as undici names the same failure, or a code of this pool. */
export class ConnectionPoolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ConnectionPoolError';
  }
}

const DEFAULT_MAX_HEAD_BYTES = 16 * 1024;
/** The longest chunk-size line read (size, extensions): a real one is a few bytes. */
const MAX_CHUNK_LINE = 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);
const NO_TRAILERS: Record<string, string> = Object.freeze({});

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * What a header value may not hold: CR, LF or NUL would end the line or the head (request splitting); a character
 * beyond Latin-1 has no single byte to be written as.
 */
const UNSENDABLE_VALUE = /[\r\n\0\u0100-\uffff]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r\n]*))?$/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout=(\d+)/i;

type Framing =
  /** Reading the head. */
  | 'head'
  /** `remaining` bytes of body left. */
  | 'length'
  /** Chunked: reading a chunk-size line. */
  | 'chunk-size'
  /** Chunked: `remaining` bytes of the chunk's data left. */
  | 'chunk-data'
  /** Chunked: the CRLF after a chunk's data. */
  | 'chunk-end'
  /** Chunked: the trailer section, up to its empty line. */
  | 'trailers'
  /** The body runs to the end of the connection. */
  | 'close';

class Exchange implements Dispatcher.DispatchController {
  connection: Connection | undefined;
  /** Given its controller: on a connected socket, about to be written. */
  started = false;
  done = false;
  private abortedWith: Error | null = null;

  constructor(
    readonly pool: ConnectionPool,
    readonly bytes: Buffer,
    readonly head: boolean,
    readonly handler: Dispatcher.DispatchHandler,
  ) {}

  get aborted(): boolean {
    return this.abortedWith !== null;
  }
  get paused(): boolean {
    return false;
  }
  get reason(): Error | null {
    return this.abortedWith;
  }
  // Answers are read whole and are small (the transport caps them): no back-pressure to apply.
  pause(): void {}
  resume(): void {}

  abort(reason: Error): void {
    if (this.done || this.abortedWith !== null) return;
    this.abortedWith = reason;
    this.pool.aborted(this, reason);
  }

  fail(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.handler.onResponseError?.(this, error);
  }
}

class Connection {
  exchange: Exchange | undefined;
  connected = false;
  framing: Framing = 'head';
  /** Bytes of the current part not yet read (the head, a chunk-size line, the trailers). */
  pending: Buffer = EMPTY;
  remaining = 0;
  /** Whether the connection may carry another request after this answer. */
  reusable = true;
  /** When it was last freed (performance.now()), and its idle limit. */
  freedAt = 0;
  idleMs: number;
  idleTimer: NodeJS.Timeout | undefined;
  connectTimer: NodeJS.Timeout | undefined;
  /** The socket's error, reported when it closes. */
  error: Error | undefined;
  closed = false;

  constructor(
    readonly socket: Socket,
    keepAliveMs: number,
  ) {
    this.idleMs = keepAliveMs;
  }
}

/**
 * Keep-alive HTTP/1.1 connections to one origin (`http:` or `https:`; TLS verified against the system's authorities,
 * as Node's own clients do). Sockets open on demand, up to {@link ConnectionPoolOptions.connections}; the most recently
 * freed connection is used first, so that a terminal with one request at a time keeps one warm connection.
 */
export class ConnectionPool implements ExchangeDispatcher {
  private readonly hostname: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private readonly tls: boolean;
  private readonly maxHeadBytes: number;
  private readonly free: Connection[] = [];
  private readonly waiting: Exchange[] = [];
  private readonly all = new Set<Connection>();
  private opening = 0;
  private closing: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  constructor(
    origin: string,
    private readonly options: ConnectionPoolOptions,
  ) {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConnectionPoolError('UND_ERR_INVALID_ARG', `${url.protocol} is not http or https`);
    this.tls = url.protocol === 'https:';
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = url.port !== '' ? Number(url.port) : this.tls ? 443 : 80;
    this.hostHeader = url.host;
    this.maxHeadBytes = options.maxHeadBytes ?? DEFAULT_MAX_HEAD_BYTES;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    let exchange: Exchange;
    try {
      exchange = new Exchange(this, this.requestBytes(options), options.method === 'HEAD', handler);
    } catch (e) {
      // Refused while the request was built: no socket was given it, nothing was written.
      handler.onResponseError?.(undefined as unknown as Dispatcher.DispatchController, e as Error);
      return false;
    }
    if (this.closing !== undefined) {
      exchange.fail(new ConnectionPoolError('UND_ERR_CLOSED', 'the connection pool is closed'));
      return false;
    }
    const connection = this.free.pop();
    if (connection !== undefined) this.start(connection, exchange);
    else {
      this.waiting.push(exchange);
      if (this.all.size < this.options.connections) this.open();
    }
    return true;
  }

  /** Closes every connection once the requests in flight and waiting are answered; later requests are refused. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.closing = new Promise<void>((resolve) => {
        this.drained = resolve;
      });
      this.closeIfDrained();
    }
    return this.closing;
  }

  /** The request's bytes, head and body in one buffer; throws UND_ERR_INVALID_ARG when a header cannot be sent. */
  private requestBytes(options: Dispatcher.DispatchOptions): Buffer {
    const method = options.method;
    const path = options.path;
    if (!TOKEN.test(method)) throw invalid('the method is not an HTTP token');
    // A character beyond Latin-1 is written as its low byte: U+010D U+010A would end the request line (splitting).
    if (typeof path !== 'string' || path[0] !== '/' || /[\s\0\u0100-\uffff]/.test(path))
      throw invalid('the path is not an absolute path of single-byte characters without spaces');
    let lines = '';
    let hostGiven = false;
    const headers = options.headers;
    if (headers !== undefined && headers !== null) {
      if (Array.isArray(headers) || typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function')
        throw invalid('headers must be an object of names and values');
      const record = headers as Record<string, string | string[] | undefined>;
      for (const name in record) {
        const value = record[name];
        if (value === undefined) continue;
        if (!TOKEN.test(name)) throw invalid(`header ${JSON.stringify(name)} is not an HTTP token`);
        const lower = name.toLowerCase();
        if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection')
          throw invalid(`header ${name} is the pool's to write`);
        // The host is the caller's when it gives one (the signature covers it), else the origin's.
        if (lower === 'host') {
          if (hostGiven || Array.isArray(value)) throw invalid('more than one host header');
          hostGiven = true;
        }
        for (const one of Array.isArray(value) ? value : [value]) {
          if (typeof one !== 'string' || UNSENDABLE_VALUE.test(one))
            throw invalid(`header ${name} holds a character no header may carry`);
          lines += `${name}: ${one}\r\n`;
        }
      }
    }
    let head = hostGiven
      ? `${method} ${path} HTTP/1.1\r\n${lines}`
      : `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n${lines}`;
    const body = options.body;
    if (body === undefined || body === null) return Buffer.from(`${head}\r\n`, 'latin1');
    const payload =
      typeof body === 'string'
        ? Buffer.from(body, 'utf8')
        : Buffer.isBuffer(body)
          ? body
          : body instanceof Uint8Array
            ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
            : undefined;
    if (payload === undefined) throw invalid('the body must be bytes or a string');
    head += `content-length: ${payload.length}\r\n\r\n`;
    const headLength = Buffer.byteLength(head, 'latin1');
    const bytes = Buffer.allocUnsafe(headLength + payload.length);
    bytes.write(head, 0, 'latin1');
    payload.copy(bytes, headLength);
    return bytes;
  }

  private open(): void {
    this.opening++;
    const socket = this.tls
      ? tlsConnect({
          host: this.hostname,
          port: this.port,
          servername: isIP(this.hostname) === 0 ? this.hostname : undefined,
          ALPNProtocols: ['http/1.1'],
        })
      : createConnection({ host: this.hostname, port: this.port });
    const connection = new Connection(socket, this.options.keepAliveMs);
    this.all.add(connection);
    connection.connectTimer = setTimeout(() => {
      connection.error = new ConnectionPoolError(
        'UND_ERR_CONNECT_TIMEOUT',
        `no connection within ${this.options.connectTimeoutMs} ms`,
      );
      socket.destroy();
    }, this.options.connectTimeoutMs);
    socket.once(this.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(connection.connectTimer);
      this.opening--;
      connection.connected = true;
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 60_000);
      const next = this.waiting.shift();
      if (next !== undefined) this.start(connection, next);
      else this.release(connection);
    });
    socket.on('data', (chunk: Buffer) => this.read(connection, chunk));
    socket.on('error', (e: Error) => {
      connection.error ??= e;
    });
    socket.on('end', () => this.ended(connection));
    socket.on('close', () => this.ended(connection));
  }

  private start(connection: Connection, exchange: Exchange): void {
    connection.socket.ref();
    connection.exchange = exchange;
    exchange.connection = connection;
    connection.framing = 'head';
    connection.pending = EMPTY;
    exchange.started = true;
    exchange.handler.onRequestStart?.(exchange, {});
    // The handler may have given up at once (its caller's signal): then nothing is written.
    if (exchange.aborted || exchange.done) return;
    connection.socket.write(exchange.bytes);
  }

  /** A connection is free again: the next waiting request takes it, or it waits for one until its idle limit. */
  private release(connection: Connection): void {
    connection.exchange = undefined;
    // While closing too: the requests already waiting are answered before close() resolves.
    const next = connection.reusable ? this.waiting.shift() : undefined;
    if (next !== undefined) {
      this.start(connection, next);
      return;
    }
    if (!connection.reusable || this.closing !== undefined) {
      this.discard(connection);
      this.closeIfDrained();
      return;
    }
    connection.freedAt = performance.now();
    if (connection.idleTimer === undefined) {
      connection.idleTimer = setTimeout(() => this.idleCheck(connection), connection.idleMs);
      connection.idleTimer.unref();
    } else connection.idleTimer.refresh();
    // A free connection does not keep the process alive (a command that is done exits), as undici's do not.
    connection.socket.unref();
    this.free.push(connection);
  }

  private idleCheck(connection: Connection): void {
    if (connection.exchange !== undefined || connection.closed) return;
    if (performance.now() - connection.freedAt >= connection.idleMs - 1) this.discard(connection);
    else connection.idleTimer?.refresh();
  }

  private discard(connection: Connection): void {
    connection.reusable = false;
    const at = this.free.indexOf(connection);
    if (at >= 0) this.free.splice(at, 1);
    clearTimeout(connection.idleTimer);
    connection.socket.destroy();
  }

  private closeIfDrained(): void {
    if (this.closing === undefined || this.drained === undefined) return;
    if (this.waiting.length > 0) return;
    for (const c of this.all) if (c.exchange !== undefined) return;
    for (const c of [...this.all]) this.discard(c);
    const drained = this.drained;
    this.drained = undefined;
    drained();
  }

  /** The exchange's handler gave up (or its deadline passed): stop it, and never reuse its connection. */
  aborted(exchange: Exchange, reason: Error): void {
    const at = this.waiting.indexOf(exchange);
    if (at >= 0) this.waiting.splice(at, 1);
    const connection = exchange.connection;
    exchange.fail(reason);
    if (connection !== undefined && connection.exchange === exchange) {
      connection.exchange = undefined;
      this.discard(connection);
    }
    this.closeIfDrained();
  }

  /** The socket ended or closed: the answer in progress ends (framed by the close) or fails; the connection goes. */
  private ended(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    clearTimeout(connection.connectTimer);
    clearTimeout(connection.idleTimer);
    if (!connection.connected) this.opening--;
    this.all.delete(connection);
    const at = this.free.indexOf(connection);
    if (at >= 0) this.free.splice(at, 1);
    connection.socket.destroy();
    const exchange = connection.exchange;
    connection.exchange = undefined;
    if (exchange !== undefined && !exchange.done) {
      if (connection.framing === 'close') {
        exchange.done = true;
        exchange.handler.onResponseEnd?.(exchange, NO_TRAILERS);
      } else
        exchange.fail(
          connection.error ??
            new ConnectionPoolError(
              'UND_ERR_SOCKET',
              connection.framing === 'head'
                ? 'the connection closed before an answer'
                : 'the answer was cut short',
            ),
        );
    } else if (!connection.connected) {
      // A connection that never opened fails the request that waits longest: it was opened for it, and a gateway
      // that cannot be reached would leave it waiting for ever.
      const next = this.waiting.shift();
      next?.fail(
        connection.error ??
          new ConnectionPoolError('UND_ERR_SOCKET', 'the connection closed before it opened'),
      );
    }
    // Requests still waiting get a connection of their own, while closing too: close() waits for their answers.
    if (this.waiting.length > this.opening && this.all.size < this.options.connections) this.open();
    this.closeIfDrained();
  }

  /** Bytes from the server: the answer of the exchange in flight, read as far as they go. */
  private read(connection: Connection, chunk: Buffer): void {
    const exchange = connection.exchange;
    if (exchange === undefined || exchange.done) {
      // Nothing was asked: bytes no request explains. The connection can no longer be trusted to frame an answer.
      this.discard(connection);
      return;
    }
    try {
      this.parse(connection, exchange, chunk);
    } catch (e) {
      // The handler's own failure after its answer was complete is not the connection's.
      if (exchange.done) return;
      exchange.fail(
        e instanceof ConnectionPoolError
          ? e
          : new ConnectionPoolError('UND_ERR_SOCKET', 'the answer could not be read', { cause: e }),
      );
      connection.exchange = undefined;
      this.discard(connection);
    }
  }

  private parse(connection: Connection, exchange: Exchange, chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0 || connection.framing === 'length') {
      switch (connection.framing) {
        case 'head': {
          const all = connection.pending.length === 0 ? data : Buffer.concat([connection.pending, data]);
          const end = all.indexOf(CRLF_CRLF);
          if (end < 0) {
            if (all.length > this.maxHeadBytes)
              throw malformed(`an answer head longer than ${this.maxHeadBytes} bytes`);
            connection.pending = all;
            return;
          }
          if (end > this.maxHeadBytes)
            throw malformed(`an answer head longer than ${this.maxHeadBytes} bytes`);
          connection.pending = EMPTY;
          data = all.subarray(end + 4);
          if (!this.head(connection, exchange, all.toString('latin1', 0, end))) continue; // 1xx: the real answer follows
          if (exchange.done) return;
          break;
        }
        case 'length': {
          if (connection.remaining === 0) {
            // Bytes after the end of the answer, which no request explains: the answer stands, the connection goes.
            if (data.length > 0) connection.reusable = false;
            this.complete(connection, exchange);
            return;
          }
          if (data.length === 0) return;
          const take = Math.min(connection.remaining, data.length);
          connection.remaining -= take;
          exchange.handler.onResponseData?.(exchange, take === data.length ? data : data.subarray(0, take));
          if (exchange.done) return;
          data = data.subarray(take);
          break;
        }
        case 'close':
          exchange.handler.onResponseData?.(exchange, data);
          return;
        case 'chunk-size':
        case 'chunk-end':
        case 'trailers': {
          const all = connection.pending.length === 0 ? data : Buffer.concat([connection.pending, data]);
          const eol = all.indexOf('\r\n', 0, 'latin1');
          if (eol < 0) {
            if (all.length > (connection.framing === 'trailers' ? this.maxHeadBytes : MAX_CHUNK_LINE))
              throw malformed('a chunk line without its end');
            connection.pending = all;
            return;
          }
          connection.pending = EMPTY;
          const line = all.toString('latin1', 0, eol);
          data = all.subarray(eol + 2);
          if (connection.framing === 'chunk-end') {
            if (line !== '') throw malformed('chunk data longer than its size');
            connection.framing = 'chunk-size';
          } else if (connection.framing === 'chunk-size') {
            const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line)?.[1];
            if (size === undefined) throw malformed('a chunk size that is not hexadecimal');
            connection.remaining = parseInt(size, 16);
            connection.framing = connection.remaining === 0 ? 'trailers' : 'chunk-data';
          } else if (line === '') {
            if (data.length > 0) connection.reusable = false;
            this.complete(connection, exchange);
            return;
          }
          // A trailer line: the transport reads none.
          break;
        }
        case 'chunk-data': {
          const take = Math.min(connection.remaining, data.length);
          connection.remaining -= take;
          exchange.handler.onResponseData?.(exchange, take === data.length ? data : data.subarray(0, take));
          if (exchange.done) return;
          data = data.subarray(take);
          if (connection.remaining === 0) connection.framing = 'chunk-end';
          break;
        }
      }
    }
  }

  /**
   * Reads an answer head. Returns false for an informational (1xx) answer, after which the real one follows; otherwise
   * hands the status and headers over and sets how the body is framed.
   */
  private head(connection: Connection, exchange: Exchange, text: string): boolean {
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0] ?? '');
    if (status === null) throw malformed('an answer that does not start with an HTTP/1.x status line');
    const minor = status[1];
    const code = Number(status[2]);
    const headers: Record<string, string | string[]> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) throw malformed('a header line that is not a name and a value');
      const key = name.toLowerCase();
      const value = line.slice(colon + 1).trim();
      const before = headers[key];
      headers[key] =
        before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
    }
    if (code < 200) {
      if (code === 101) throw malformed('an upgrade nobody asked for');
      return false;
    }
    const connectionHeader = headers.connection;
    const tokens = (Array.isArray(connectionHeader) ? connectionHeader.join(',') : (connectionHeader ?? ''))
      .toLowerCase()
      .split(',')
      .map((t) => t.trim());
    if (tokens.includes('close') || (minor === '0' && !tokens.includes('keep-alive')))
      connection.reusable = false;
    const keepAlive = headers['keep-alive'];
    const hint = typeof keepAlive === 'string' ? KEEP_ALIVE_TIMEOUT.exec(keepAlive)?.[1] : undefined;
    if (hint !== undefined) {
      const serverMs = Number(hint) * 1000 - 1000;
      connection.idleMs = Math.min(this.options.keepAliveMs, serverMs);
      if (connection.idleMs <= 0) connection.reusable = false;
    }
    const transferEncoding = headers['transfer-encoding'];
    const contentLength = headers['content-length'];
    if (exchange.head || code === 204 || code === 304) {
      connection.framing = 'length';
      connection.remaining = 0;
    } else if (transferEncoding !== undefined) {
      const codings = (Array.isArray(transferEncoding) ? transferEncoding.join(',') : transferEncoding)
        .toLowerCase()
        .split(',')
        .map((t) => t.trim());
      if (codings[codings.length - 1] !== 'chunked') throw malformed('a transfer coding other than chunked');
      // A length beside chunks (a smuggling pattern): the chunks frame this answer, and the connection ends with it.
      if (contentLength !== undefined) connection.reusable = false;
      connection.framing = 'chunk-size';
    } else if (contentLength !== undefined) {
      const values = Array.isArray(contentLength) ? contentLength : [contentLength];
      const first = values[0] as string;
      if (!/^\d{1,15}$/.test(first) || values.some((v) => v !== first))
        throw malformed('a content-length that is not one number');
      connection.framing = 'length';
      connection.remaining = Number(first);
    } else {
      connection.framing = 'close';
      connection.reusable = false;
    }
    exchange.handler.onResponseStart?.(exchange, code, headers, status[3] ?? '');
    return true;
  }

  private complete(connection: Connection, exchange: Exchange): void {
    exchange.done = true;
    // Free before the handler runs: a request it makes at once may take this connection.
    this.release(connection);
    exchange.handler.onResponseEnd?.(exchange, NO_TRAILERS);
  }
}

function invalid(message: string): ConnectionPoolError {
  return new ConnectionPoolError('UND_ERR_INVALID_ARG', message);
}

function malformed(what: string): ConnectionPoolError {
  return new ConnectionPoolError('HTTP_MALFORMED_ANSWER', `the gateway sent ${what}`);
}
