import { pathToFileURL } from 'node:url';
import type { FromChild } from './client-process.js';
import { benchClient, CONCURRENCY, timed } from './gateway.js';

/**
 * The child process of {@link import('./client-process.js').clientProcess}: builds one client of the gateway benchmarks
 * (argv: its kind and the server's URL), says it is ready, then makes the requests of each round it is sent.
 */
async function serve(kind: string, url: string): Promise<void> {
  const send = (m: FromChild): void => {
    process.send?.(m);
  };
  try {
    if (kind !== 'ours' && kind !== 'peer' && kind !== 'peer-default' && kind !== 'bare')
      throw new Error(`no client ${kind}`);
    const client = await benchClient(kind, url);
    process.on('message', (m: { requests?: number; concurrency?: number; close?: boolean }) => {
      if (m.close) {
        void client.close().finally(() => process.exit(0));
        return;
      }
      timed(m.requests ?? 0, m.concurrency ?? CONCURRENCY, client.one).then(send, (e: unknown) => {
        send({ error: e instanceof Error ? e.message : String(e) });
        process.exit(1);
      });
    });
    send({ ready: true });
  } catch (e) {
    send({ error: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  await serve(process.argv[2] ?? '', process.argv[3] ?? '');
