import { request } from 'node:http';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { WsMessage } from '../../src/host/api.js';

/** Raw HTTP and WebSocket clients that can forge Host, Origin and paths, as an attacker's tools would. */

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET (or another method) with exactly the given headers; the path is sent as written (no normalisation). */
export function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The Host header a browser sends for the bridge. */
export function ownHost(port: number): Record<string, string> {
  return { Host: `127.0.0.1:${port}` };
}

export type WsOutcome = { opened: true; socket: WebSocket } | { opened: false; status: number };

/** Opens a WebSocket with forged headers; resolves with the socket, or with the HTTP status of the refusal. */
export function openSocket(port: number, path: string, headers: Record<string, string>): Promise<WsOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers, setHost: false });
    ws.once('open', () => resolve({ opened: true, socket: ws }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ opened: false, status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

/** Messages received on a socket, with a way to wait for one that matches. */
export class SocketLog {
  readonly messages: WsMessage[] = [];
  #waiters: { match: (m: WsMessage) => boolean; resolve: (m: WsMessage) => void }[] = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as WsMessage;
      this.messages.push(m);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.match(m)) return true;
        w.resolve(m);
        return false;
      });
    });
  }

  next(match: (m: WsMessage) => boolean): Promise<WsMessage> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** Sends `payload` and waits for the answer carrying `id` (or id null when `id` is null). */
  ask(payload: string | Buffer, id: number | null, binary = false): Promise<WsMessage> {
    const answer = this.next((m) => 'id' in m && m.id === id && !this.#answered.has(m));
    this.socket.send(payload, { binary });
    return answer.then((m) => {
      this.#answered.add(m);
      return m;
    });
  }
  #answered = new Set<WsMessage>();
}

/** A renderer directory with an index page, an asset, and traps outside it (a secret file and a symlink to it). */
export async function makeStaticDir(): Promise<{
  root: string;
  staticDir: string;
  cleanup(): Promise<void>;
}> {
  const root = await mkdtemp(join(tmpdir(), 'bridge-'));
  const staticDir = join(root, 'renderer');
  await mkdir(join(staticDir, 'assets'), { recursive: true });
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>Parking</title><h1>Parking</h1>');
  await writeFile(join(staticDir, 'assets', 'app.js'), 'console.log("app");');
  await writeFile(join(root, 'secret.txt'), 'TOP SECRET');
  await symlink(join(root, 'secret.txt'), join(staticDir, 'assets', 'link.txt'));
  return { root, staticDir, cleanup: () => rm(root, { recursive: true, force: true }) };
}
