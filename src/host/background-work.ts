import type { Config } from '../config/index.js';
import type { JournaledSender, OfflineQueue, TimeoutRecovery } from '../journal/index.js';
import type { Logger } from '../log/index.js';
import type { OpenAuthorizations } from './open-authorizations.js';
import type { PaymentRouter } from './payment-router.js';

/** What one run of forwarding did (operator mode's flush shows it). */
export interface ForwardSummary {
  forwarded: number;
  declined: number;
  remaining: number;
}

/**
 * The terminal's work between customers: stored offline payments forwarded as soon as the gateway answers again
 * (in order, bounded concurrency, exactly once each), due follow-ups finished, and any journal entry left in flight
 * that nobody owns handed to recovery — by recovery's own rule of which entries start a run
 * ({@link TimeoutRecovery.rootsInFlight}), so that its attempts left unknown are retried by their run, not multiplied
 * by each sweep. An entry whose request is still out belongs to its sender and is never touched: recovery waits for
 * its own timeout and answer, so a late approval is recorded, not voided.
 */
export class BackgroundWork {
  private timer: NodeJS.Timeout | undefined;
  private forwarding: Promise<ForwardSummary> | undefined;

  constructor(
    private readonly deps: {
      config: Config;
      offline: OfflineQueue;
      sender: JournaledSender;
      recovery: TimeoutRecovery;
      router: PaymentRouter;
      openAuthorizations: OpenAuthorizations;
      logger: Logger;
      /**
       * Whether the work may run: the terminal takes cards, or is in service mode (no sweep while it starts or
       * recovers, nor out of service for an unexpected error).
       */
      ready: () => boolean;
      /**
       * The gateway answered a forward (online) or could not be reached (with the code of why, and the host that did
       * not open when the check before any claim found it).
       */
      gatewaySeen: (online: boolean, reason?: string, host?: string) => void;
      changed: () => void;
    },
  ) {}

  /** Starts the periodic sweep (every `journal.resolutionRetryMs`, at least once a second). */
  start(): void {
    this.timer = setInterval(() => this.sweep(), Math.max(1_000, this.deps.config.journal.resolutionRetryMs));
    this.timer.unref();
    if (this.deps.offline.status().depth > 0) this.forwardInBackground();
  }

  /** Whether stored payments are being forwarded right now. */
  get busy(): boolean {
    return this.forwarding !== undefined;
  }

  /** Forwards stored offline payments; a run already going is shared. */
  forward(): Promise<ForwardSummary> {
    if (this.forwarding) return this.forwarding;
    const { offline, sender, config, router, logger } = this.deps;
    const run = offline
      .forwardPending(sender, {
        concurrency: config.offline.forwardConcurrency,
        onOutcome: (entry, request, outcome) => router.forwardedOutcome(entry, request, outcome),
      })
      .then((report) => {
        // An outage found by forwarding alone (no customer paying meanwhile: a kiosk at night) is the status bar's and
        // the fleet heartbeat's too, with its reason, even when no forward left: the reachability check before any
        // claim failed, or the first forward was not sent.
        if (report.gatewayUnreachable)
          this.deps.gatewaySeen(false, report.unreachableReason, report.unreachableHost);
        else if (report.forwarded > 0) this.deps.gatewaySeen(true);
        for (const id of report.unknown) router.recoverInBackground(id);
        if (report.declined.length > 0)
          logger.warn(
            { declined: report.declined.length },
            'offline payments not collected in full after forwarding',
          );
        return { forwarded: report.forwarded, declined: report.declined.length, remaining: report.remaining };
      })
      .finally(() => {
        this.forwarding = undefined;
        this.deps.changed();
      });
    this.forwarding = run;
    return run;
  }

  /**
   * A forwarding run nobody awaits (at start, by the sweep). One that fails — a stored payment whose sealed request
   * cannot be read, say — leaves every payment it did not finish stored; it is logged for the operator, the terminal
   * stays in service, and the next sweep tries again. Never an unhandled rejection, which takes the terminal out of
   * service.
   */
  private forwardInBackground(): void {
    this.forward().catch((err: unknown) =>
      this.deps.logger.error({ err }, 'stored payments could not be forwarded: they stay stored'),
    );
  }

  private sweep(): void {
    if (!this.deps.ready()) return;
    const { offline, openAuthorizations, sender, recovery, router, logger } = this.deps;
    if (!this.forwarding && offline.status().depth > 0) this.forwardInBackground();
    void openAuthorizations
      .runFollowUps()
      .catch((err: unknown) => logger.error({ err }, 'follow-ups failed'));
    // The roots of recovery runs only: an attempt of a run left unknown is that run's to retry.
    for (const id of recovery.rootsInFlight()) {
      if (sender.owns(id) || recovery.isRecovering(id)) continue;
      router.recoverInBackground(id);
    }
  }

  /** Stops the sweep and waits for a forwarding run to finish (shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.forwarding?.catch(() => undefined);
  }
}
