import { createServer as createHttpServer, request } from 'node:http';
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

/**
 * A proxy in front of a gateway (the sandbox) that passes every request and answer through, except that the
 * `paymentLink` URL of each create answer gets `suffix` appended: an answer the terminal must refuse.
 */
export async function paymentLinkRewritingProxy(
  target: string,
  suffix: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const back: Buffer[] = [];
          answer.on('data', (c: Buffer) => back.push(c));
          answer.on('end', () => {
            let body = Buffer.concat(back);
            if (req.method === 'POST' && req.url === '/ipl/v2/payment-links' && answer.statusCode === 201) {
              const json = JSON.parse(body.toString('utf8')) as {
                purchaseInformation: { paymentLink: string };
              };
              json.purchaseInformation.paymentLink += suffix;
              body = Buffer.from(JSON.stringify(json));
            }
            const headers = { ...answer.headers, 'content-length': String(body.length) };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(body);
          });
        },
      );
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
