import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The answer a gateway sends that the sandbox never does: a proxy in front of a standalone sandbox forwards every
 * request as it is (its Host header too: the signature covers it) and hands each JSON answer to `rewrite`, which returns
 * the body to send instead, or undefined to leave it as it is.
 */
export interface RewritingProxy {
  url: string;
  close(): Promise<void>;
}

export function startRewritingProxy(
  target: string,
  rewrite: (request: { method: string; url: string }, answer: unknown) => unknown,
  /**
   * An answer to send without forwarding the request (the gateway unreachable for it: nothing reaches the sandbox), or
   * undefined to forward it.
   */
  answerInstead?: (request: { method: string; url: string }) => { status: number; body: unknown } | undefined,
): Promise<RewritingProxy> {
  const to = new URL(target);
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const instead = answerInstead?.({ method: req.method ?? '', url: req.url ?? '' });
      if (instead !== undefined) {
        const bytes = Buffer.from(JSON.stringify(instead.body));
        res.writeHead(instead.status, {
          'content-type': 'application/json',
          'content-length': String(bytes.length),
        });
        res.end(bytes);
        return;
      }
      const out = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let bytes = Buffer.concat(body);
            let json: unknown;
            try {
              json = JSON.parse(bytes.toString('utf8'));
            } catch {
              json = undefined;
            }
            const replaced =
              json === undefined
                ? undefined
                : rewrite({ method: req.method ?? '', url: req.url ?? '' }, json);
            if (replaced !== undefined) bytes = Buffer.from(JSON.stringify(replaced));
            const headers = { ...answer.headers, 'content-length': String(bytes.length) };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(bytes);
          });
        },
      );
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    proxy.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => proxy.close(() => done())),
      }),
    ),
  );
}

/**
 * A proxy to `target` that answers every POST to a path in `unreachable` (read at each request) with the gateway's 502
 * SYSTEM_ERROR, as a gateway that got the request and lost its outcome: the rest passes unchanged.
 */
export function startUnreachablePathsProxy(
  target: string,
  unreachable: ReadonlySet<string>,
): Promise<RewritingProxy> {
  return startRewritingProxy(
    target,
    () => undefined,
    (req) =>
      req.method === 'POST' && unreachable.has(req.url)
        ? {
            status: 502,
            body: { submitTimeUtc: new Date().toISOString(), status: 'SERVER_ERROR', reason: 'SYSTEM_ERROR' },
          }
        : undefined,
  );
}
