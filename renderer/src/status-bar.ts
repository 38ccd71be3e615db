import type { OperatorStatus } from '../../src/host/api.js';
import type { ConnectionState } from './client.js';
import { button, h } from './dom.js';

/**
 * The operator status bar: reader health, gateway, offline queue, recovery and journal. It sits apart from the
 * customer area (DESIGN.md: the status bar is for the operator, never the customer screen) in small type.
 */
export function renderStatusBar(
  status: OperatorStatus | undefined,
  connection: ConnectionState,
  openOperator: () => void,
): HTMLElement {
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
    const online = gw.online === null ? 'unknown' : gw.online ? 'online' : 'offline';
    items.push(
      item(
        'status-gateway',
        'Gateway',
        `${gw.kind} ${online}${gw.lastError ? ` (${gw.lastError})` : ''}`,
        gw.online === false ? 'bad' : gw.online === null ? 'warn' : 'ok',
      ),
    );
    const off = status.offline;
    const totals = off.totals.map((t) => t.text).join(', ');
    items.push(
      item(
        'status-offline',
        'Offline queue',
        `${off.depth}${totals ? ` (${totals})` : ''}${off.declinedAfterForward > 0 ? `, ${off.declinedAfterForward} declined after forwarding` : ''}`,
        off.depth === 0 ? 'ok' : 'warn',
      ),
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
    items.push(
      item(
        'status-journal',
        'Journal',
        `${status.journal.entries} entries, ${status.journal.unknown} unknown`,
        status.journal.unknown > 0 ? 'warn' : 'ok',
      ),
    );
  }
  const link = connection === 'open' ? 'connected' : connection;
  return h(
    'header',
    { class: 'status-bar', testid: 'status-bar' },
    h('span', { class: 'status-terminal', testid: 'status-terminal', text: status?.terminalId ?? '…' }),
    ...items,
    item('status-link', 'Link', link, connection === 'open' ? 'ok' : 'bad'),
    button('Operator', 'operator-open', openOperator, 'btn btn-small'),
  );
}
