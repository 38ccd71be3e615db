import {
  IPC_CHANNELS,
  type OperatorRequest,
  type OperatorResponse,
  type Result,
  type CustomerApi,
  type CustomerSnapshot,
  type UserEvent,
} from '../src/host/api.js';

/** The part of Electron's ipcRenderer the preload uses (injected so that tests need no Electron). */
export interface PreloadIpc {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

/**
 * CustomerApi over IPC, exactly and only: four functions on fixed channels (IPC_CHANNELS). The page never sees
 * ipcRenderer itself (it could then call any channel), only these closures.
 */
export function createPreloadApi(ipc: PreloadIpc): CustomerApi {
  return {
    snapshot: () => ipc.invoke(IPC_CHANNELS.snapshot) as Promise<Result<CustomerSnapshot>>,
    send: (event: UserEvent) => ipc.invoke(IPC_CHANNELS.send, event) as Promise<Result<CustomerSnapshot>>,
    operator: (request: OperatorRequest) =>
      ipc.invoke(IPC_CHANNELS.operator, request) as Promise<Result<OperatorResponse>>,
    subscribe(listener: (snapshot: CustomerSnapshot) => void) {
      const forward = (_event: unknown, snapshot: unknown): void => listener(snapshot as CustomerSnapshot);
      ipc.on(IPC_CHANNELS.update, forward);
      return () => {
        ipc.removeListener(IPC_CHANNELS.update, forward);
      };
    },
  };
}
