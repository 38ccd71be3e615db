import { createServer } from 'node:net';
import { payOnHostedPage } from '../../src/host/link-simulation.js';

/** A TCP port free on 127.0.0.1 a moment ago (for a link-notification listener). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Pays on the sandbox's hosted page as its form does; resolves with the page that answers. */
export async function hostedPageAnswer(url: string, cardNumber?: string): Promise<string> {
  return (await payOnHostedPage(url, cardNumber)).text();
}
