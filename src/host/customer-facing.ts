/**
 * The terminal as the customer's screen sees it (issue 13: the customer's screen is the customer's): every snapshot
 * leaves without the operator status. The headless bridge and the Electron IPC serve this, never the TerminalApi
 * itself, so that the types keep reader, gateway, queue and journal figures off any customer screen.
 */
import type { CustomerApi, CustomerSnapshot, Result, TerminalApi, TerminalSnapshot } from './api.js';

export function toCustomerSnapshot(snapshot: TerminalSnapshot): CustomerSnapshot {
  const { status: _operatorOnly, ...customer } = snapshot;
  return customer;
}

function stripped(result: Result<TerminalSnapshot>): Result<CustomerSnapshot> {
  return result.ok ? { ok: true, value: toCustomerSnapshot(result.value) } : result;
}

export function customerFacing(api: TerminalApi): CustomerApi {
  return {
    snapshot: async () => stripped(await api.snapshot()),
    send: async (event) => stripped(await api.send(event)),
    operator: (request) => api.operator(request),
    subscribe: (listener) => api.subscribe((snapshot) => listener(toCustomerSnapshot(snapshot))),
  };
}
