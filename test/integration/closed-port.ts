import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on, just released: a gateway there is down (connection refused, provably nothing
 * sent), and a server started on it later brings it up.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
