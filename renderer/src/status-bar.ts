import type { OperatorStatus } from '../../src/host/api.js';
import { h } from './dom.js';

/**
 * The operator status bar: reader health, gateway, offline queue, recovery and journal. Shown only inside the operator
 * panel once the PIN was accepted (issue 13: no operator figure on any customer screen); the figures come from the
 * operator request `{type: 'status'}`, never from the customer's snapshots.
 */
export function renderStatusBar(status: OperatorStatus | undefined): HTMLElement {
  const item = (testid: string, label: string, value: string, level: 'ok' | 'warn' | 'bad'): HTMLElement =>
    h(
      'span',
      { class: `status-item status-${level}`, testid, attrs: { title: label } },
      `${label}: ${value}`,
    );
  const items: HTMLElement[] = [];
  if (status) {
    const reader = status.reader;
    items.push(
      item(
        'status-reader',
        'Reader',
        `${reader.kind} ${reader.health}${reader.firmware ? ` (${reader.firmware})` : ''}`,
        // ReaderHealth of devices/reader.ts: ready and busy are healthy; connecting and reconnecting are on the way.
        reader.health === 'ready' || reader.health === 'busy'
          ? 'ok'
          : reader.health === 'connecting' || reader.health === 'reconnecting'
            ? 'warn'
            : 'bad',
      ),
    );
    const gw = status.gateway;
    items.push(
      item(
        'status-gateway',
        'Gateway',
        gatewayText(gw),
        gw.online === false ? 'bad' : gw.online === null ? 'warn' : 'ok',
      ),
    );
    const off = status.offline;
    items.push(item('status-offline', 'Offline queue', offlineText(off), off.depth === 0 ? 'ok' : 'warn'));
    if (status.feeShortfalls > 0)
      items.push(
        item('status-shortfalls', 'Fee shortfalls', `${status.feeShortfalls} to acknowledge`, 'warn'),
      );
    const rec = status.recovery;
    items.push(
      item(
        'status-recovery',
        'Recovery',
        rec.running ? `running, ${rec.inFlight} in flight` : `idle, ${rec.resolved.length} resolved`,
        rec.running ? 'warn' : 'ok',
      ),
    );
    if (status.printer)
      items.push(
        item(
          'status-printer',
          'Printer',
          `${status.printer.kind} ${status.printer.status}${status.printer.lastError ? ` (${status.printer.lastError})` : ''}`,
          status.printer.status === 'ready' || status.printer.status === 'none' ? 'ok' : 'bad',
        ),
      );
    items.push(
      item(
        'status-journal',
        'Journal',
        `${status.journal.entries} entries, ${status.journal.unknown} unknown`,
        status.journal.unknown > 0 ? 'warn' : 'ok',
      ),
    );
  }
  return h(
    'div',
    { class: 'status-bar', testid: 'status-bar', attrs: { role: 'status' } },
    h('span', { class: 'status-terminal', testid: 'status-terminal', text: status?.terminalId ?? '…' }),
    ...items,
  );
}

/**
 * The offline queue's item: how many payments wait and their totals, those not collected in full after forwarding,
 * and those whose age is not known (stored while the terminal's clock was not set, or ahead): left out of the oldest
 * age and of the age limit, the operator is told.
 */
export function offlineText(
  off: Pick<OperatorStatus['offline'], 'depth' | 'declinedAfterForward' | 'ageUnknown'> & {
    totals: readonly { text: string }[];
  },
): string {
  const totals = off.totals.map((t) => t.text).join(', ');
  return (
    `${off.depth}${totals ? ` (${totals})` : ''}` +
    (off.declinedAfterForward > 0
      ? `, ${off.declinedAfterForward} not collected in full after forwarding`
      : '') +
    (off.ageUnknown > 0 ? `, ${off.ageUnknown} of unknown age (terminal clock not set when stored)` : '')
  );
}

/**
 * The gateway's item: online, unknown (no answer yet), offline (unreachable), processor unavailable (the gateway
 * answers, its processor is down: nothing to check at the terminal) or credentials refused — the keys to
 * check, not the network — with the code of the last failed exchange, and the clock skew when this terminal's clock
 * is why (GW_AUTH_CLOCK).
 */
export function gatewayText(gw: OperatorStatus['gateway']): string {
  const state =
    gw.online === null
      ? 'unknown'
      : gw.online
        ? 'online'
        : gw.problem === 'credentials'
          ? 'credentials refused'
          : gw.problem === 'processor'
            ? 'processor unavailable'
            : 'offline';
  // Refused because of this terminal's clock: the skew the status measured (this clock minus the gateway's).
  const why =
    gw.lastError === 'GW_AUTH_CLOCK' && gw.clockSkewSeconds !== undefined
      ? `${gw.lastError}: clock ${Math.abs(gw.clockSkewSeconds)} s ${gw.clockSkewSeconds > 0 ? 'ahead of' : 'behind'} the gateway's`
      : gw.lastError;
  // Found unusable by a forwarding run's probe: which host did not open (the OAuth token host while the gateway
  // answers: the gateway itself is not what to look at then).
  const host =
    gw.online === false && gw.unreachableHost ? `no connection to ${gw.unreachableHost}` : undefined;
  const said = why && host ? `${why}: ${host}` : (why ?? host);
  return `${gw.kind} ${state}${said ? ` (${said})` : ''}`;
}
