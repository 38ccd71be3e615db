import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { requestTarget } from '../../gateway/index.js';
import { createLimitedServer } from '../../gateway/server-limits.js';
import { LimitedWarnings, silentLogger, type Logger } from '../../log/index.js';
import type { CustomerApi, Result, TerminalApi, WsMessage, WsRequest } from '../api.js';
import { customerFacing } from '../customer-facing.js';
import {
  checkRequestSource,
  newBridgeAccess,
  readCookie,
  sessionCookie,
  sessionCookieName,
  tokenMatches,
  type BridgeAccess,
  type Refusal,
} from './access.js';
import { PageSpeechLink } from './page-speech.js';
import { errorReply, MAX_MESSAGE_BYTES, parseMessage } from './protocol.js';
import { lookupStatic } from './static-files.js';

/** What {@link startBridge} needs. */
export interface BridgeOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Directory of the built renderer (must contain index.html). */
  staticDir: string;
  /** Where refusals and failures are logged; never receives the secret. Silent when absent. */
  logger?: Logger;
  /** The secret and sessions of this start ({@link BridgeAccess}); new ones when absent. */
  access?: BridgeAccess;
}

/** A running headless bridge. */
export interface Bridge {
  /** `http://127.0.0.1:PORT/?s=SECRET`: the one URL that opens the UI; `start` prints it. */
  url: string;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** The secret of this start (base64url, 256 bits); a new one at every start. */
  secret: string;
  /**
   * The UI's sign of life when headless (the kiosk service's UI check): now while the server is listening, the moment
   * it stopped otherwise (closed, or its listener gone on an error) — a bridge that no longer serves goes stale.
   */
  lastAliveMs(): number;
  /** Closes every socket and the listener; resolves when the port is free. Idempotent. */
  close(): Promise<void>;
}

export type BridgeErrorCode = 'BRIDGE_STATIC_DIR' | 'BRIDGE_LISTEN' | 'BRIDGE_URL_FILE';

/** Failure to start the bridge. */
export class BridgeError extends Error {
  override readonly name = 'BridgeError';
  constructor(
    readonly code: BridgeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Sockets beyond this many are refused with 503: a kiosk needs one, an operator maybe a second. */
const MAX_SOCKETS = 16;
/** Requests a socket may have in flight before further ones are answered BUSY. */
const MAX_IN_FLIGHT = 8;
/** A socket whose unsent backlog exceeds this many bytes is not reading: it is dropped rather than buffered. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Interval of the WebSocket keep-alive ping; a socket that missed one pong is dropped. */
const HEARTBEAT_MS = 30_000;

/** The strict policy of the bridge's pages (the renderer has no inline script or style). */
export function contentSecurityPolicy(port: number): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ws://127.0.0.1:${port}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

function securityHeaders(port: number): OutgoingHttpHeaders {
  return {
    'Content-Security-Policy': contentSecurityPolicy(port),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  };
}

function refusalText(refusal: Refusal): string {
  switch (refusal) {
    case 'host':
      return 'Forbidden: this service answers only to 127.0.0.1 and localhost on its own port.\n';
    case 'origin':
    case 'fetch-site':
      return 'Forbidden: requests from other sites are refused.\n';
    case 'secret':
      return 'Unauthorized: open the URL printed by `parking-terminal start`.\n';
  }
}

/**
 * Serves the built renderer and TerminalApi (WebSocket at `/ws`) on 127.0.0.1 for the holders of a secret generated
 * here (DESIGN.md, Runtime shape). Opening the printed URL exchanges the secret for an HttpOnly, SameSite=Strict
 * session cookie and redirects to `/`, so the secret leaves the address bar; the page's WebSocket then presents the
 * cookie (a non-browser client may present `?s=SECRET` on `/ws` instead). Every snapshot of `api` is pushed to every
 * open socket as `{type: "snapshot", snapshot}`.
 */
export async function startBridge(terminal: TerminalApi, options: BridgeOptions): Promise<Bridge> {
  // The page is the customer's screen: snapshots reach it without the operator status.
  return startCustomerBridge(customerFacing(terminal), options);
}

/**
 * {@link startBridge} over an API that has only the customer's side: the out-of-service screen of a start whose
 * configuration was refused (src/host/refused-configuration.ts), which has no operator status to strip.
 */
export async function startCustomerBridge(api: CustomerApi, options: BridgeOptions): Promise<Bridge> {
  const logger = options.logger ?? silentLogger();
  let root: string;
  try {
    root = await realpath(options.staticDir);
    if (!(await stat(join(root, 'index.html'))).isFile()) throw new Error('index.html is not a file');
  } catch (e) {
    throw new BridgeError(
      'BRIDGE_STATIC_DIR',
      `the renderer directory ${options.staticDir} has no index.html (build the renderer first)`,
      { cause: e },
    );
  }

  const { secret, sessions } = options.access ?? newBridgeAccess();
  let port = options.port;

  // Anyone on the machine can send refused requests without end: a flood is summarised, not a line each.
  const refusals = new LimitedWarnings(logger, 'refused bridge requests');
  const refuse = (kind: string, refusal: Refusal, req: IncomingMessage): void => {
    // The path only: the query may hold the secret.
    const path = (req.url ?? '').split('?')[0]?.slice(0, 200);
    refusals.warn({ kind, refusal, path }, 'bridge refused a request');
  };

  /** True when the request presents the secret (query `s`) or a live session cookie. */
  const authorized = (req: IncomingMessage, url: URL): 'secret' | 'session' | null => {
    if (tokenMatches(url.searchParams.get('s'), secret)) return 'secret';
    if (sessions.has(readCookie(req.headers, sessionCookieName(port)))) return 'session';
    return null;
  };

  const sendText = (
    res: ServerResponse,
    status: number,
    text: string,
    extra: OutgoingHttpHeaders = {},
  ): void => {
    res.writeHead(status, {
      ...securityHeaders(port),
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...extra,
    });
    res.end(text);
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = checkRequestSource(req.headers, port, 'http');
    if (refusal) {
      refuse('http', refusal, req);
      sendText(res, 403, refusalText(refusal));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendText(res, 405, 'Method not allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    const url = requestTarget(req.url, `http://127.0.0.1:${port}`);
    if (url === undefined) {
      sendText(res, 400, 'Bad request\n');
      return;
    }
    const who = authorized(req, url);
    if (!who) {
      refuse('http', 'secret', req);
      sendText(res, 401, refusalText('secret'));
      return;
    }
    if (who === 'secret' && url.pathname === '/') {
      // Exchange: the secret becomes a cookie, and the redirect takes it out of the address bar.
      res.writeHead(303, {
        ...securityHeaders(port),
        Location: '/',
        'Set-Cookie': sessionCookie(port, sessions.issue()),
        'Content-Length': 0,
      });
      res.end();
      return;
    }
    const found = await lookupStatic(root, url.pathname);
    switch (found.kind) {
      case 'bad-request':
        sendText(res, 400, 'Bad request\n');
        return;
      case 'not-found':
        sendText(res, 404, 'Not found\n');
        return;
      case 'file':
        break;
    }
    res.writeHead(200, {
      ...securityHeaders(port),
      'Content-Type': found.contentType,
      'Content-Length': found.size,
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = createReadStream(found.path);
    stream.on('error', (e) => {
      logger.error({ err: e }, 'bridge could not read a static file');
      res.destroy();
    });
    stream.pipe(res);
  };

  // Anyone on the machine can connect without the secret: slow clients are dropped and connections bounded
  // (src/gateway/server-limits.ts; the kiosk's page and socket, open already, are not affected by those refused).
  const server = createLimitedServer({ maxHeaderSize: 16 * 1024 }, (req, res) => {
    handleRequest(req, res).catch((e: unknown) => {
      logger.error({ err: e }, 'bridge request failed');
      if (!res.headersSent) sendText(res, 500, 'Internal error\n');
      else res.destroy();
    });
  });
  server.on('clientError', (_e, socket) => {
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
  });
  const alive = new WeakMap<WebSocket, boolean>();

  const rejectUpgrade = (socket: Duplex, status: string): void => {
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const refusal = checkRequestSource(req.headers, port, 'websocket');
    if (refusal) {
      refuse('websocket', refusal, req);
      rejectUpgrade(socket, '403 Forbidden');
      return;
    }
    const url = requestTarget(req.url, `http://127.0.0.1:${port}`);
    if (url === undefined) {
      rejectUpgrade(socket, '400 Bad Request');
      return;
    }
    if (!authorized(req, url)) {
      refuse('websocket', 'secret', req);
      rejectUpgrade(socket, '401 Unauthorized');
      return;
    }
    if (url.pathname !== '/ws') {
      rejectUpgrade(socket, '404 Not Found');
      return;
    }
    if (wss.clients.size >= MAX_SOCKETS) {
      rejectUpgrade(socket, '503 Service Unavailable');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws));
  });

  const send = (ws: WebSocket, message: WsMessage): void => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      logger.warn('bridge dropped a socket that stopped reading');
      ws.terminate();
      return;
    }
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (e) {
      logger.error({ err: e }, 'bridge could not serialise a message');
      if ('id' in message)
        text = JSON.stringify(errorReply(message.id, 'INTERNAL', 'answer not serialisable'));
      else return;
    }
    ws.send(text);
  };

  const dispatch = async (request: WsRequest): Promise<Result<unknown>> => {
    switch (request.method) {
      case 'snapshot':
        return api.snapshot();
      case 'send':
        return api.send(request.params);
      case 'operator':
        return api.operator(request.params);
    }
  };

  const answer = async (request: WsRequest): Promise<WsMessage> => {
    try {
      const result = await dispatch(request);
      if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean') {
        return errorReply(request.id, 'INTERNAL', 'the terminal gave no result');
      }
      return { id: request.id, result };
    } catch (e) {
      logger.error({ err: e, method: request.method }, 'TerminalApi threw');
      return errorReply(request.id, 'INTERNAL', 'the terminal failed to answer');
    }
  };

  const onConnection = (ws: WebSocket): void => {
    alive.set(ws, true);
    let inFlight = 0;
    // A page that closes while it says it is speaking has stopped: the terminal is told (result screens held).
    const speech = new PageSpeechLink(api, (e) =>
      logger.error({ err: e }, 'TerminalApi threw on the end of a closed page’s speech'),
    );
    let unsubscribe: () => void = () => undefined;
    try {
      unsubscribe = api.subscribe((snapshot) => send(ws, { type: 'snapshot', snapshot }));
    } catch (e) {
      logger.error({ err: e }, 'TerminalApi.subscribe threw');
      ws.close(1011, 'terminal unavailable');
      return;
    }
    ws.on('pong', () => alive.set(ws, true));
    ws.on('error', (e) => logger.warn({ err: e }, 'bridge socket error'));
    ws.on('close', () => {
      speech.gone();
      try {
        unsubscribe();
      } catch (e) {
        logger.error({ err: e }, 'TerminalApi unsubscribe threw');
      }
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const raw = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      const parsed = parseMessage(raw, isBinary);
      if (!parsed.ok) {
        send(ws, parsed.reply);
        return;
      }
      if (inFlight >= MAX_IN_FLIGHT) {
        send(ws, errorReply(parsed.request.id, 'BUSY', 'too many requests in flight'));
        return;
      }
      inFlight += 1;
      const request: WsRequest =
        parsed.request.method === 'send'
          ? { ...parsed.request, params: speech.sent(parsed.request.params) }
          : parsed.request;
      void answer(request).then((reply) => {
        inFlight -= 1;
        send(ws, reply);
      });
    });
  };

  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error): void => {
      clearInterval(heartbeat);
      reject(
        new BridgeError('BRIDGE_LISTEN', `cannot listen on 127.0.0.1:${options.port}: ${e.message}`, {
          cause: e,
        }),
      );
    };
    server.once('error', onError);
    server.listen({ port: options.port, host: '127.0.0.1' }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string')
    throw new BridgeError('BRIDGE_LISTEN', 'no TCP address');
  port = address.port;
  server.on('error', (e) => logger.error({ err: e }, 'bridge server error'));
  let stoppedMs: number | undefined;
  server.once('close', () => (stoppedMs ??= Date.now()));
  logger.info({ port }, 'bridge listening on 127.0.0.1');

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/?s=${secret}`,
    port,
    secret,
    lastAliveMs() {
      if (server.listening) return Date.now();
      return (stoppedMs ??= Date.now());
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        clearInterval(heartbeat);
        refusals.flush();
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
