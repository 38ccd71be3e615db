import { IPC_CHANNELS, type CustomerSnapshot, type Result, type TerminalApi } from '../src/host/api.js';
import { customerFacing } from '../src/host/customer-facing.js';
import { PageSpeechLink } from '../src/host/bridge/page-speech.js';
import { operatorRequestSchema, userEventSchema } from '../src/host/bridge/protocol.js';

/** The part of Electron's ipcMain used here (injected so that tests need no Electron). */
export interface MainIpc {
  handle(channel: string, handler: (event: IpcSenderEvent, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

/** What an IPC event tells about its sender: the URL of the frame that sent it. */
export interface IpcSenderEvent {
  senderFrame: { url: string } | null;
}

/** Where snapshots are pushed: the window's webContents. */
export interface SnapshotTarget {
  send(channel: string, snapshot: CustomerSnapshot): void;
  isDestroyed(): boolean;
  /** Listens for the page going away while the window stays: it loads afresh, or its renderer process is gone. */
  onPageGone?(listener: () => void): void;
}

function refused<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

/**
 * Serves the terminal on IPC_CHANNELS for the window, as the customer sees it (`customerFacing`: no operator status). Arguments are validated with the same schemas as the bridge's
 * WebSocket messages (a compromised page is as untrusted as a socket), and only frames of the app itself may call
 * (`isTrustedSender`: a navigated-away or embedded frame gets NOT_ALLOWED). Every snapshot is pushed to `target` on
 * IPC_CHANNELS.update. Returns the function that removes the handlers and the subscription.
 */
export function registerTerminalIpc(
  ipc: MainIpc,
  terminal: TerminalApi,
  target: SnapshotTarget,
  isTrustedSender: (url: string) => boolean,
): () => void {
  // The window is the customer's screen: snapshots reach it without the operator status.
  const host = customerFacing(terminal);
  // A page gone while it said it was speaking has stopped: the terminal is told (a result screen held is released).
  const speech = new PageSpeechLink(host);
  target.onPageGone?.(() => speech.gone());
  const guard = async <T>(event: IpcSenderEvent, run: () => Promise<Result<T>>): Promise<Result<T>> => {
    const url = event.senderFrame?.url ?? '';
    if (!isTrustedSender(url)) return refused('NOT_ALLOWED', 'IPC from a frame outside the app');
    try {
      return await run();
    } catch {
      return refused('INTERNAL', 'the terminal failed to answer');
    }
  };
  ipc.handle(IPC_CHANNELS.snapshot, (event) => guard(event, () => host.snapshot()));
  ipc.handle(IPC_CHANNELS.send, (event, arg) =>
    guard(event, () => {
      const parsed = userEventSchema.safeParse(arg);
      if (!parsed.success) return Promise.resolve(refused('BAD_REQUEST', 'not a UserEvent'));
      return host.send(speech.sent(parsed.data));
    }),
  );
  ipc.handle(IPC_CHANNELS.operator, (event, arg) =>
    guard(event, () => {
      const parsed = operatorRequestSchema.safeParse(arg);
      return parsed.success
        ? host.operator(parsed.data)
        : Promise.resolve(refused('BAD_REQUEST', 'not an OperatorRequest'));
    }),
  );
  const unsubscribe = host.subscribe((snapshot) => {
    if (!target.isDestroyed()) target.send(IPC_CHANNELS.update, snapshot);
  });
  return () => {
    speech.gone();
    unsubscribe();
    ipc.removeHandler(IPC_CHANNELS.snapshot);
    ipc.removeHandler(IPC_CHANNELS.send);
    ipc.removeHandler(IPC_CHANNELS.operator);
  };
}
