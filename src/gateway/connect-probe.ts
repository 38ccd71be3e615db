import { connect } from 'node:net';

/**
 * A TCP endpoint that a request needs a connection to before it can be sent: the gateway itself, or the host its
 * credentials come from (an OAuth token host). What a reachability probe opens.
 */
export interface ConnectTarget {
  /** What the endpoint is to the terminal, as the operator reads it: `gateway`, `OAuth token host`. */
  readonly role: string;
  /** Host name or address (an IPv6 literal without its brackets), resolved as a request's would be. */
  readonly hostname: string;
  readonly port: number;
}

/** The answer of a reachability probe: every connection opened, or the endpoint that did not (see {@link describeTarget}). */
export type Reachability =
  { readonly reachable: true } | { readonly reachable: false; readonly host: string };

/** The endpoint a request to `url` connects to: its host, and its port or the scheme's default. */
export function connectTargetOf(url: URL, role: string): ConnectTarget {
  return {
    role,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
  };
}

/** Whether both name the same connection (a probe of one tells of the other). */
export function sameEndpoint(a: ConnectTarget, b: ConnectTarget): boolean {
  return a.port === b.port && a.hostname.toLowerCase() === b.hostname.toLowerCase();
}

/** `OAuth token host auth.example.com:443`, an IPv6 address in brackets. */
export function describeTarget(t: ConnectTarget): string {
  const host = t.hostname.includes(':') ? `[${t.hostname}]` : t.hostname;
  return `${t.role} ${host}:${t.port}`;
}

/**
 * Opens a TCP connection to `target` and closes it at once, without a byte written: whether it connected within
 * `timeoutMs`. Nothing is sent, so nothing can be processed.
 */
export function canConnect(target: ConnectTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: target.port });
    const done = (connected: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(connected);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Probes every target at once (a connection each, closed at once): reachable when all open, else the first of
 * `targets` that did not.
 */
export async function probeAll(targets: readonly ConnectTarget[], timeoutMs: number): Promise<Reachability> {
  const opened = await Promise.all(targets.map((t) => canConnect(t, timeoutMs)));
  const down = targets.find((_, i) => !opened[i]);
  return down === undefined ? { reachable: true } : { reachable: false, host: describeTarget(down) };
}
