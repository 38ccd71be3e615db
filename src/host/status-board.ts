import type { Config } from '../config/index.js';
import type { OfflineStatus } from '../journal/index.js';
import { clockSkewSeconds, type DatedAnswer } from '../gateway/clock-skew.js';
import { formatAmount, resolveLocale } from '../i18n/index.js';
import type { OperatorStatus, RecoveryItem } from './api.js';
import { gatewayProblemOf } from './gateway-adapters.js';
import type { HostPhase } from './screens.js';

/**
 * "1 journal entry left in flight", "3 journal entries left in flight": what the start resolves before the first card,
 * as `start`, the fleet's heartbeat and systemd's status say it.
 */
export function leftInFlight(n: number): string {
  return `${n} journal ${n === 1 ? 'entry' : 'entries'} left in flight`;
}

/** How many resolved items the operator status keeps (newest first). */
const ITEMS_KEPT = 20;

/**
 * What the operator status bar shows (TerminalApi OperatorStatus): the gateway's reachability as the last answers
 * told it, the reader's firmware, what recovery and the hold watch resolved or left for the operator, and — read at
 * each call — the offline queue, the journal and the terminal's phase. `queue status` prints the same offline numbers.
 */
export class StatusBoard {
  private readonly items: RecoveryItem[] = [];
  private online: boolean | null = null;
  private lastError: string | undefined;
  /** The host a reachability probe could not connect to, while the gateway is unusable for that. */
  private unreachableHost: string | undefined;
  /** Firmware version read from the reader at connect. */
  firmware: string | undefined;
  private clockSkewSeconds: number | undefined;

  constructor(private readonly config: Config) {}

  /**
   * Records whether the gateway answered, and when it could not be used the code of why (GW_CONNECTION, GW_AUTH …:
   * the status says whether it was unreachable or refused the credentials); returns whether that changed, whether it
   * came back after being unusable (stored payments may go then), and `clockRefused`: the gateway has just begun
   * refusing the credentials because of this terminal's clock (GW_AUTH_CLOCK) — once per such episode, for the one log
   * line that names the skew. `host`: the host a reachability probe could not connect to (`gateway …`, `OAuth token
   * host …`), when that is how it was found unusable.
   */
  gatewaySeen(
    online: boolean,
    reason?: string,
    host?: string,
  ): { changed: boolean; cameBack: boolean; clockRefused: boolean } {
    const was = this.online;
    const before = this.lastError;
    const hostBefore = this.unreachableHost;
    this.online = online;
    this.lastError = online ? undefined : reason;
    this.unreachableHost = online ? undefined : host;
    return {
      // Another problem (no answer, then the processor down) is another status, the gateway unusable all along.
      changed:
        was !== online ||
        hostBefore !== this.unreachableHost ||
        (!online && gatewayProblemOf(before) !== gatewayProblemOf(this.lastError)),
      cameBack: online && was === false,
      clockRefused: this.lastError === 'GW_AUTH_CLOCK' && before !== 'GW_AUTH_CLOCK',
    };
  }

  /** The gateway's `Date` of an answer: the clock skew of the status (src/gateway/clock-skew.ts, clockSkewSeconds). */
  gatewayDated(answer: DatedAnswer): void {
    const skew = clockSkewSeconds(answer);
    if (skew !== undefined) this.clockSkewSeconds = skew;
  }

  /** This terminal's clock minus the gateway's as the last dated answer measured it, whole seconds. */
  get clockSkew(): number | undefined {
    return this.clockSkewSeconds;
  }

  /** Something resolved (or left for the operator), newest first. */
  note(item: {
    transactionId: string;
    service: string;
    resolution: string;
    amount?: { minor: number; currency: string } | undefined;
    at: string;
  }): void {
    const { amount } = item;
    this.items.unshift({
      transactionId: item.transactionId,
      service: item.service,
      ...(amount
        ? {
            amount: {
              ...amount,
              text: formatAmount(amount.minor, amount.currency, resolveLocale(this.config.terminal.locale)),
            },
          }
        : {}),
      resolution: item.resolution,
      at: item.at,
    });
    this.items.splice(ITEMS_KEPT);
  }

  status(input: {
    phase: HostPhase;
    outOfService: string | undefined;
    readerHealth: OperatorStatus['reader']['health'];
    baseUrl: string;
    offline: OfflineStatus;
    journal: { entries: number; unknown: number; inFlight: number };
    /** In flight when recovery started (shown while it runs). */
    recoveryInFlight: number;
    /** Fee shortfalls the operator has not acknowledged (the audit log's count). */
    feeShortfalls: number;
  }): OperatorStatus {
    const c = this.config;
    const q = input.offline;
    const recovering = input.phase === 'recovering';
    return {
      terminalId: c.terminal.id,
      model: c.terminal.model,
      reader: {
        kind: c.reader.kind,
        health: input.readerHealth,
        ...(this.firmware ? { firmware: this.firmware } : {}),
      },
      gateway: {
        kind: c.gateway.kind,
        baseUrl: input.baseUrl,
        online: this.online,
        ...(this.online === false ? { problem: gatewayProblemOf(this.lastError) } : {}),
        ...(this.lastError ? { lastError: this.lastError } : {}),
        ...(this.unreachableHost ? { unreachableHost: this.unreachableHost } : {}),
        ...(this.clockSkewSeconds !== undefined ? { clockSkewSeconds: this.clockSkewSeconds } : {}),
      },
      offline: {
        policy: q.policy,
        depth: q.depth,
        totals: q.totalsPerCurrency.map((t) => ({
          currency: t.currency,
          minor: t.minor,
          text: formatAmount(t.minor, t.currency, resolveLocale(c.terminal.locale)),
        })),
        oldestAgeSeconds: q.oldestAgeSeconds,
        ageUnknown: q.ageUnknown,
        limits: { ...q.limits },
        declinedAfterForward: q.declinedAfterForward,
      },
      recovery: {
        running: recovering,
        inFlight: recovering ? input.recoveryInFlight : input.journal.inFlight,
        resolved: [...this.items],
      },
      feeShortfalls: input.feeShortfalls,
      journal: { entries: input.journal.entries, unknown: input.journal.unknown },
      ...(input.outOfService !== undefined ? { outOfService: input.outOfService } : {}),
    };
  }
}
