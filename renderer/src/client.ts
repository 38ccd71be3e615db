import type {
  OperatorRequest,
  OperatorResponse,
  Result,
  CustomerApi,
  CustomerSnapshot,
  UserEvent,
  WsMessage,
  WsRequest,
} from '../../src/host/api.js';

/**
 * The renderer's one door to the terminal: CustomerApi over the preload (`window.terminal`, Electron) or over the
 * headless bridge's WebSocket (any browser). Nothing else in the renderer talks to the outside world.
 */

declare global {
  interface Window {
    /** Exposed by main/preload.ts through contextBridge; absent in a plain browser. */
    readonly terminal?: CustomerApi;
  }
}

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface TerminalClient extends CustomerApi {
  /** Which transport carries the API. */
  readonly transport: 'ipc' | 'websocket';
  /** Called on every connection change; 'open' is the moment to ask for a fresh snapshot. */
  onConnection(listener: (state: ConnectionState) => void): void;
}

/** How long a request may wait for its answer before the UI gives up on it (the gateway itself times out sooner). */
const REQUEST_TIMEOUT_MS = 120_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

function failure<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

function isMessage(value: unknown): value is WsMessage {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.type === 'snapshot') return typeof v.snapshot === 'object' && v.snapshot !== null;
  return 'id' in v && typeof v.result === 'object' && v.result !== null;
}

class WebSocketClient implements TerminalClient {
  readonly transport = 'websocket' as const;
  #socket: WebSocket | undefined;
  #nextId = 1;
  #pending = new Map<number, { resolve: (r: Result<unknown>) => void; timer: number }>();
  #listeners = new Set<(s: CustomerSnapshot) => void>();
  #connectionListeners = new Set<(s: ConnectionState) => void>();
  #delay = RECONNECT_MIN_MS;

  constructor(private readonly url: string) {
    this.#connect();
  }

  #setState(state: ConnectionState): void {
    for (const l of this.#connectionListeners) l(state);
  }

  #connect(): void {
    this.#setState('connecting');
    const socket = new WebSocket(this.url);
    this.#socket = socket;
    socket.addEventListener('open', () => {
      this.#delay = RECONNECT_MIN_MS;
      this.#setState('open');
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      if (typeof event.data !== 'string') return;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!isMessage(message)) return;
      if ('type' in message) {
        for (const l of this.#listeners) l(message.snapshot);
        return;
      }
      if (message.id === null) return;
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      window.clearTimeout(pending.timer);
      pending.resolve(message.result);
    });
    socket.addEventListener('close', () => {
      for (const [id, p] of this.#pending) {
        window.clearTimeout(p.timer);
        p.resolve(failure('DISCONNECTED', 'connection to the terminal lost'));
        this.#pending.delete(id);
      }
      this.#setState('closed');
      window.setTimeout(() => this.#connect(), this.#delay);
      this.#delay = Math.min(this.#delay * 2, RECONNECT_MAX_MS);
    });
  }

  #request<T>(build: (id: number) => WsRequest): Promise<Result<T>> {
    const socket = this.#socket;
    if (!socket || socket.readyState !== WebSocket.OPEN)
      return Promise.resolve(failure('DISCONNECTED', 'not connected to the terminal'));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = window.setTimeout(() => {
        this.#pending.delete(id);
        resolve(failure('TIMEOUT', 'the terminal did not answer'));
      }, REQUEST_TIMEOUT_MS);
      this.#pending.set(id, { resolve: resolve as (r: Result<unknown>) => void, timer });
      socket.send(JSON.stringify(build(id)));
    });
  }

  snapshot(): Promise<Result<CustomerSnapshot>> {
    return this.#request((id) => ({ id, method: 'snapshot' }));
  }

  send(event: UserEvent): Promise<Result<CustomerSnapshot>> {
    return this.#request((id) => ({ id, method: 'send', params: event }));
  }

  operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    return this.#request((id) => ({ id, method: 'operator', params: request }));
  }

  subscribe(listener: (snapshot: CustomerSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onConnection(listener: (state: ConnectionState) => void): void {
    this.#connectionListeners.add(listener);
  }
}

/** The preload's API: always connected while the window lives. */
class IpcClient implements TerminalClient {
  readonly transport = 'ipc' as const;
  constructor(private readonly api: CustomerApi) {}
  snapshot(): Promise<Result<CustomerSnapshot>> {
    return this.api.snapshot();
  }
  send(event: UserEvent): Promise<Result<CustomerSnapshot>> {
    return this.api.send(event);
  }
  operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    return this.api.operator(request);
  }
  subscribe(listener: (snapshot: CustomerSnapshot) => void): () => void {
    return this.api.subscribe(listener);
  }
  onConnection(listener: (state: ConnectionState) => void): void {
    queueMicrotask(() => listener('open'));
  }
}

/** The client for this page: the preload's API when present, else the bridge's WebSocket on the page's own host. */
export function connectTerminal(): TerminalClient {
  if (window.terminal) return new IpcClient(window.terminal);
  return new WebSocketClient(`ws://${location.host}/ws`);
}
