import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who may talk to the headless bridge (DESIGN.md, Runtime shape): the bridge is a door into a payment terminal, so a
 * request is served only when it names the bridge itself as Host (defeats DNS rebinding: a foreign name resolving to
 * 127.0.0.1 arrives with that foreign name), carries no foreign Origin (defeats cross-site requests and cross-site
 * WebSocket hijacking) and proves it holds the secret printed by `start` (defeats other local pages and processes
 * that guess the port).
 */

/** Why a request was refused; logged (never with the secret) and used by tests. */
export type Refusal =
  | 'host' // Host header missing or not 127.0.0.1:PORT / localhost:PORT
  | 'origin' // Origin present (or, for WebSocket, absent) and not the bridge's own
  | 'fetch-site' // the browser says the request comes from another site
  | 'secret'; // neither a valid secret nor a valid session cookie

/** The Host header values of the bridge itself. */
export function ownHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** The origins of pages the bridge served itself. */
export function ownOrigins(port: number): string[] {
  return ownHosts(port).map((h) => `http://${h}`);
}

function single(value: string | string[] | undefined): string | undefined {
  // A repeated Host or Origin header is itself suspicious: treat it as absent-and-wrong by returning a value that
  // matches nothing.
  if (Array.isArray(value)) return value.length === 1 ? value[0] : '\u0000';
  return value;
}

/**
 * Checks Host, Origin and Sec-Fetch-Site. For a WebSocket upgrade the Origin must be present: every browser sends it,
 * and a socket without one is not from a page the bridge served.
 */
export function checkRequestSource(
  headers: IncomingHttpHeaders,
  port: number,
  kind: 'http' | 'websocket',
): Refusal | null {
  const host = single(headers.host)?.toLowerCase();
  if (host === undefined || !ownHosts(port).includes(host)) return 'host';
  const origin = single(headers.origin)?.toLowerCase();
  if (origin === undefined) {
    if (kind === 'websocket') return 'origin';
  } else if (!ownOrigins(port).includes(origin)) {
    return 'origin';
  }
  // Fetch metadata: "cross-site" means a page of another site made this request (a link, an image, a form).
  if (single(headers['sec-fetch-site']) === 'cross-site') return 'fetch-site';
  return null;
}

/** A fresh 256-bit secret, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant-time comparison of a presented token with the expected one (hashing first equalises the lengths). */
export function tokenMatches(presented: string | undefined | null, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 512) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The session cookie's name. Cookies are not scoped by port, so the port is part of the name: two terminals on one
 * machine must not overwrite each other's sessions.
 */
export function sessionCookieName(port: number): string {
  return `pt_session_${port}`;
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (typeof header !== 'string' || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie header value of a session: HttpOnly (no script reads it), SameSite=Strict (no other site sends it). */
export function sessionCookie(port: number, token: string): string {
  return `${sessionCookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`;
}

/**
 * Session tokens handed out in exchange for the secret. Bounded: the oldest session is forgotten when a new one would
 * exceed `max`, so a client that exchanges in a loop cannot grow memory.
 */
export class SessionStore {
  readonly #tokens: string[] = [];
  constructor(private readonly max = 16) {}

  /** Issues a new session token. */
  issue(): string {
    const token = newSecret();
    this.#tokens.push(token);
    if (this.#tokens.length > this.max) this.#tokens.shift();
    return token;
  }

  /** True when `presented` is a live session token (constant time per stored token). */
  has(presented: string | undefined): boolean {
    let found = false;
    for (const t of this.#tokens) if (tokenMatches(presented, t)) found = true;
    return found;
  }
}

/**
 * Who may use the bridge during one start: its secret (printed in the URL) and the sessions it was exchanged for. A
 * start that served the out-of-service screen of a refused configuration first, then the terminal in the same process
 * (src/host/refused-configuration.ts), keeps them: the browser given the first URL holds a session cookie of it, and
 * shows the terminal once it starts — no one is there to give it a new URL. A new start, a new secret.
 */
export interface BridgeAccess {
  readonly secret: string;
  readonly sessions: SessionStore;
}

/** The access of a new start: a fresh secret, no session yet. */
export function newBridgeAccess(): BridgeAccess {
  return { secret: newSecret(), sessions: new SessionStore() };
}
