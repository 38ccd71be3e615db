import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * The bounds the terminal's own HTTP servers (the headless bridge, the payment-link notification listener) put on their
 * clients. Whoever reaches such a server — any process on the machine, or the network in front of the listener — may
 * connect before anything is checked: a client that trickles its headers or its body, or opens connections without
 * end, must not hold the terminal's memory and descriptors.
 */

/** Connections a server holds at once (WebSockets included); more are closed at once. */
export const MAX_CONNECTIONS = 64;
/** Time a client has to send its request headers. */
export const HEADERS_TIMEOUT_MS = 5_000;
/** Time a client has to send its whole request. */
export const REQUEST_TIMEOUT_MS = 10_000;

/**
 * `createServer` with those bounds. Node checks the timeouts only every `connectionsCheckingInterval` (30 s by
 * default), which would let a slow client keep its connection six times longer: here every second.
 */
export function createLimitedServer(
  options: { maxHeaderSize?: number },
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const server = createServer(
    {
      ...options,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    },
    handler,
  );
  server.maxConnections = MAX_CONNECTIONS;
  return server;
}
