import type { Statement } from 'better-sqlite3';
import { JournalError } from './errors.js';
import {
  checkCurrency,
  checkEpochMs,
  checkIdentifier,
  checkText,
  readOn,
  type JournalConnection,
} from './field-checks.js';
import { migration0008 } from './migrations/0008-payment-links.js';
import { openJournalReadOnly, readOnlyStore } from './read-only.js';

/** The terminal's view of one of its payment links (migration 0008). */
export type LinkState = 'creating' | 'active' | 'paid' | 'deactivated' | 'failed';

/** What a link is for: the fee of a ticket or session, or an amount owed after a failed capture (pay later). */
export const LINK_PURPOSES = ['fee', 'pay-later'] as const;
export type LinkPurpose = (typeof LINK_PURPOSES)[number];

/** Why the terminal wants a link INACTIVE. */
export const LINK_CLOSE_REASONS = ['paid', 'cancelled', 'timeout', 'recovery', 'operator', 'gone'] as const;
export type LinkCloseReason = (typeof LINK_CLOSE_REASONS)[number];

/** A stored link. */
export interface StoredLink {
  /**
   * The gateway's id, equal to the purchase number (spec 000): the terminal's id and the reference
   * (src/host/link-ids.ts); links made before terminal ids were carried have the reference alone.
   */
  linkId: string;
  /** The ticket or session reference it charges for. */
  reference: string;
  purpose: LinkPurpose;
  amountMinor: number;
  currency: string;
  /**
   * The tap-and-go hold whose stay the link charges for (the exit paid by phone, or its fee left to pay later): a
   * counted payment of the link pays that stay (`HoldStore.paidByLink`). Absent for every other link.
   */
  holdId?: string;
  state: LinkState;
  /** The hosted page (set once the gateway answered the create). */
  url?: string;
  /** Epoch ms: the terminal waits for the payment until then. */
  watchUntilMs: number;
  /** Set when the terminal decided to deactivate the link (before it asks the gateway). */
  closeReason?: LinkCloseReason;
  /** The gateway confirmed the link INACTIVE. */
  gatewayInactive: boolean;
  /** Gateway id of the payment made through the link. */
  paymentId?: string;
  /**
   * A fee link shown to its customer that a restart closed while its payment was unknown ({@link
   * PaymentLinkStore.paymentInDoubt}): an approved payment of it counts for its fee however late it is notified.
   */
  paymentInDoubt?: true;
  /** The last failure talking to the gateway about this link (no personal data: codes and messages of ours). */
  lastError?: string;
  createdAtMs: number;
  updatedAtMs: number;
}

/** A link about to be created. */
export interface NewLink {
  linkId: string;
  reference: string;
  purpose: LinkPurpose;
  amountMinor: number;
  currency: string;
  /** The tap-and-go hold whose stay it charges for ({@link StoredLink.holdId}). */
  holdId?: string;
  watchUntilMs: number;
}

interface Row {
  link_id: string;
  reference: string;
  purpose: string;
  amount_minor: number;
  currency: string;
  /**
   * NULL for links of no hold and in rows written before the column; absent in a journal read before its rewrite
   * (`stays-paid-by-link`: `links list` beside a terminal that has not rewritten it yet).
   */
  hold_id?: string | null;
  state: string;
  url: string | null;
  watch_until: number;
  close_reason: string | null;
  gateway_inactive: number;
  payment_id: string | null;
  /** 1 in doubt; NULL otherwise, and absent in a journal read before its rewrite (`fee-links-in-doubt`). */
  payment_in_doubt?: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

function toLink(r: Row): StoredLink {
  return {
    linkId: r.link_id,
    reference: r.reference,
    purpose: r.purpose as LinkPurpose,
    amountMinor: r.amount_minor,
    currency: r.currency,
    ...(typeof r.hold_id === 'string' ? { holdId: r.hold_id } : {}),
    state: r.state as LinkState,
    ...(r.url !== null ? { url: r.url } : {}),
    watchUntilMs: r.watch_until,
    ...(r.close_reason !== null ? { closeReason: r.close_reason as LinkCloseReason } : {}),
    gatewayInactive: r.gateway_inactive === 1,
    ...(r.payment_id !== null ? { paymentId: r.payment_id } : {}),
    ...(r.payment_in_doubt === 1 ? { paymentInDoubt: true as const } : {}),
    ...(r.last_error !== null ? { lastError: r.last_error } : {}),
    createdAtMs: r.created_at,
    updatedAtMs: r.updated_at,
  };
}

const OPEN = `state IN ('creating', 'active') OR (state = 'paid' AND gateway_inactive = 0)`;

/**
 * The terminal's payment links in the journal database (migration 0008). Every write is durable
 * ({@link JournalConnection.atomically} with a synced commit) and joins a transaction the caller has open.
 *
 * A link is **open** while the terminal still owes it something: it is being created, it is active, or it was paid and
 * the gateway has not yet confirmed it INACTIVE. Recovery at start and the host's sweep take every open link and either
 * watch it or deactivate it, so that no active link is left unwatched.
 */
export class PaymentLinkStore {
  private readonly stmts;
  /**
   * Prepared at the first {@link begin} of a link of a hold: it names a column of a rewrite (`hold_id`), which a journal
   * of an older schema lacks — where every other link is still written as before.
   */
  private insertOfHoldStatement: Statement | undefined;
  /** Prepared at the first {@link paymentInDoubt}: it names the column of a rewrite (`fee-links-in-doubt`). */
  private inDoubtStatement: Statement | undefined;

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      insert:
        db.prepare(`INSERT INTO payment_links (link_id, reference, purpose, amount_minor, currency, state,
          watch_until, created_at, updated_at)
        VALUES (@linkId, @reference, @purpose, @amountMinor, @currency, 'creating', @watchUntilMs, @at, @at)`),
      insertOfHold: () =>
        (this.insertOfHoldStatement ??=
          db.prepare(`INSERT INTO payment_links (link_id, reference, purpose, amount_minor, currency, hold_id, state,
          watch_until, created_at, updated_at)
        VALUES (@linkId, @reference, @purpose, @amountMinor, @currency, @holdId, 'creating', @watchUntilMs, @at, @at)`)),
      get: db.prepare<[string], Row>('SELECT * FROM payment_links WHERE link_id = ?'),
      open: db.prepare<[], Row>(`SELECT * FROM payment_links WHERE ${OPEN} ORDER BY created_at, link_id`),
      recent: db.prepare<[number], Row>(
        'SELECT * FROM payment_links ORDER BY created_at DESC, link_id LIMIT ?',
      ),
      update: db.prepare(`UPDATE payment_links SET state = @state, url = @url, watch_until = @watch_until,
          close_reason = @close_reason, gateway_inactive = @gateway_inactive, payment_id = @payment_id,
          last_error = @last_error, updated_at = @at
        WHERE link_id = @link_id`),
    };
  }

  /**
   * Writes a link in state `creating`, durably, before its create request is sent (money safety rule 1).
   * `JOURNAL_DUPLICATE` when the id is already used (choose another suffix), `JOURNAL_INVALID` for a bad field.
   */
  begin(link: NewLink): StoredLink {
    checkIdentifier(link.linkId, 'linkId');
    checkText(link.reference, 'reference', 128);
    if (!(LINK_PURPOSES as readonly string[]).includes(link.purpose))
      throw new JournalError(
        'JOURNAL_INVALID',
        `purpose "${String(link.purpose)}" is not one of ${LINK_PURPOSES.join(', ')}`,
      );
    if (!Number.isSafeInteger(link.amountMinor) || link.amountMinor <= 0)
      throw new JournalError(
        'JOURNAL_INVALID',
        'amountMinor must be a positive integer number of minor units',
      );
    checkCurrency(link.currency);
    if (link.holdId !== undefined) checkIdentifier(link.holdId, 'holdId');
    checkEpochMs(link.watchUntilMs, 'watchUntilMs');
    return this.connection.atomically(true, () => {
      if (this.stmts.get.get(link.linkId) !== undefined)
        throw new JournalError('JOURNAL_DUPLICATE', `payment link ${link.linkId} is already journaled`);
      const at = this.connection.now().getTime();
      if (link.holdId === undefined) this.stmts.insert.run({ ...link, at });
      else this.stmts.insertOfHold().run({ ...link, at });
      return this.mustGet(link.linkId);
    });
  }

  get(linkId: string): StoredLink | undefined {
    return readOn(this.connection, () => {
      const row = this.stmts.get.get(linkId);
      return row === undefined ? undefined : toLink(row);
    });
  }

  /** Every open link (see the class comment), oldest first. */
  open(): StoredLink[] {
    return readOn(this.connection, () => this.stmts.open.all().map(toLink));
  }

  /** The newest `limit` links, newest first. */
  recent(limit = 100): StoredLink[] {
    return readOn(this.connection, () => this.stmts.recent.all(limit).map(toLink));
  }

  /**
   * The gateway created it: `active`, with its hosted page. Only a `creating` link changes state: a payment notified
   * while the create's answer was on its way has made it `paid` already, and that stays.
   */
  activated(linkId: string, url: string | undefined): StoredLink {
    return this.change(linkId, (l) => ({
      ...l,
      state: l.state === 'creating' ? 'active' : l.state,
      ...(url !== undefined ? { url } : {}),
    }));
  }

  /** The gateway refused the create or has no such link: `failed` (nothing to deactivate). */
  failed(linkId: string, error: string): StoredLink {
    return this.change(linkId, (l) => ({ ...l, state: 'failed', lastError: error.slice(0, 500) }));
  }

  /**
   * A verified payment notification: `paid` with the payment's id, whatever the state before (a payment that arrives
   * after a cancel still happened: the operator sees it), and the intent to deactivate (one use).
   */
  paid(linkId: string, paymentId: string, withPaid?: (link: StoredLink) => void): StoredLink {
    checkIdentifier(paymentId, 'paymentId');
    // `withPaid`: what the payment makes durable besides (a pay station's ticket recorded paid), in this transaction.
    return this.connection.atomically(true, () => {
      const paid = this.change(linkId, (l) => ({ ...l, state: 'paid', paymentId, closeReason: 'paid' }));
      withPaid?.(paid);
      return paid;
    });
  }

  /**
   * The durable intent to deactivate, written before the request; the first reason stays. `withClosing`: what the
   * decision makes durable besides (a stay whose payment by phone is in doubt), in this transaction.
   */
  closing(linkId: string, reason: LinkCloseReason, withClosing?: (link: StoredLink) => void): StoredLink {
    return this.connection.atomically(true, () => {
      const link = this.change(linkId, (l) => ({ ...l, closeReason: l.closeReason ?? reason }));
      withClosing?.(link);
      return link;
    });
  }

  /**
   * The gateway confirmed INACTIVE: `deactivated`, or still `paid` (now closed), with `reason` as the intent when none
   * was journaled before the request (the first reason stays). `since` is the link as the journal held it when the
   * request whose answer this is was sent: a link made ACTIVE again since then ({@link reactivated}: by the operator,
   * in operator mode or with the `links` command, another process on the same journal) is returned as it is, nothing
   * written — the answer may be older than the reactivation, and recording it would leave the link ACTIVE at the
   * gateway while the journal holds it closed, unwatched. Open, the link is looked at again by the sweep.
   */
  deactivated(linkId: string, since: StoredLink, reason?: LinkCloseReason): StoredLink {
    return this.connection.atomically(true, () => {
      const now = this.mustGet(linkId);
      if (now.watchUntilMs !== since.watchUntilMs) return now;
      if (reason !== undefined) this.closing(linkId, reason);
      return this.change(linkId, (l) => ({
        ...l,
        state: l.state === 'paid' ? 'paid' : 'deactivated',
        gatewayInactive: true,
      }));
    });
  }

  /**
   * Made ACTIVE again (operator): watched again until `watchUntilMs`. The end of the wait moves later with every
   * reactivation (a millisecond past the one before at least): a request of the terminal about the link sent before
   * tells from it that the link was made ACTIVE again since ({@link deactivated}). A link paid meanwhile (a payment
   * notified once the update took, before its answer is journaled) stays `paid` with its intent to close: a link is
   * paid once, and ACTIVE at the gateway it is open until deactivated.
   */
  reactivated(linkId: string, watchUntilMs: number): StoredLink {
    checkEpochMs(watchUntilMs, 'watchUntilMs');
    return this.change(linkId, (l) => {
      const moved = Math.max(watchUntilMs, l.watchUntilMs + 1);
      if (l.state === 'paid') return { ...l, gatewayInactive: false, watchUntilMs: moved };
      const { closeReason: _c, lastError: _e, ...rest } = l;
      return { ...rest, state: 'active', gatewayInactive: false, watchUntilMs: moved };
    });
  }

  /**
   * A restart closes this fee link, shown to its customer, while its payment is unknown (its notification may have gone
   * to the process that died): an approved payment of it counts for its fee however late it is notified — the gateway
   * takes no payment of an INACTIVE link, so it was made before. Meant to run inside the transaction that journals the
   * link's closing ({@link closing}'s `withClosing`: it joins it). Only a fee link is put in doubt.
   */
  paymentInDoubt(linkId: string): StoredLink {
    return this.connection.atomically(true, () => {
      const link = this.mustGet(linkId);
      if (link.purpose !== 'fee')
        throw new JournalError('JOURNAL_INVALID', `payment link ${linkId} is not a fee link`);
      this.inDoubtStatement ??= this.connection.db.prepare(
        'UPDATE payment_links SET payment_in_doubt = 1, updated_at = @at WHERE link_id = @linkId',
      );
      this.inDoubtStatement.run({ linkId, at: this.connection.now().getTime() });
      return this.mustGet(linkId);
    });
  }

  /** A failure talking to the gateway about the link, kept for the operator (the state does not change). */
  noteError(linkId: string, error: string): StoredLink {
    return this.change(linkId, (l) => ({ ...l, lastError: error.slice(0, 500) }));
  }

  private mustGet(linkId: string): StoredLink {
    const row = this.stmts.get.get(linkId);
    if (row === undefined)
      throw new JournalError('JOURNAL_NOT_FOUND', `no payment link ${linkId} in the journal`);
    return toLink(row);
  }

  private change(linkId: string, next: (link: StoredLink) => StoredLink): StoredLink {
    return this.connection.atomically(true, () => {
      const l = next(this.mustGet(linkId));
      this.stmts.update.run({
        link_id: linkId,
        state: l.state,
        url: l.url ?? null,
        watch_until: l.watchUntilMs,
        close_reason: l.closeReason ?? null,
        gateway_inactive: l.gatewayInactive ? 1 : 0,
        payment_id: l.paymentId ?? null,
        last_error: l.lastError ?? null,
        at: this.connection.now().getTime(),
      });
      return this.mustGet(linkId);
    });
  }
}

/** The journal's record of the terminal's links, read-only (see {@link openPaymentLinksReadOnly}). */
export interface PaymentLinkReader extends Pick<PaymentLinkStore, 'get'> {
  close(): void;
}

/**
 * Opens the payment links of the journal at `path` read-only ({@link openJournalReadOnly}), for `links list` and
 * `links show` while the terminal runs: no write, no migration. A journal older than the payment links (schema before
 * migration 0008) has no record of any.
 */
export function openPaymentLinksReadOnly(
  path: string,
  options: { busyTimeoutMs?: number } = {},
): PaymentLinkReader {
  const journal = openJournalReadOnly(path, migration0008.version, options);
  if (journal === undefined) return { get: () => undefined, close: () => undefined };
  const store = readOnlyStore(journal, path, (j) => new PaymentLinkStore(j));
  return { get: (linkId) => store.get(linkId), close: () => journal.close() };
}
