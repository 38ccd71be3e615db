import type { Statement } from 'better-sqlite3';
import { JournalError } from './errors.js';
import {
  checkBoolean,
  checkCardKey,
  checkCurrency,
  checkEpochMs,
  checkIdentifier,
  checkMaskedPan,
  checkMinor,
  checkObject,
  readOn,
  type JournalConnection,
} from './field-checks.js';

/**
 * An open tap-and-go hold. Structurally identical to the flows' `HoldRecord` (src/flows/effects.ts), which the journal
 * may not import (DESIGN.md, dependency direction): the host passes one for the other.
 */
export interface StoredHold {
  /** Equal to the pre-authorization's transactionId. */
  holdId: string;
  /** Keyed fingerprint of the card that entered (never the PAN). */
  fingerprint: string;
  /** First 6 and last 4 digits at most. */
  maskedPan: string;
  /** The pre-authorization's gateway id (capture and reversal go to it). */
  gatewayId: string;
  transactionId: string;
  /** Authorized total, minor units (grows with incrementals). */
  authorizedMinor: number;
  /** ISO 4217 alpha. */
  currency: string;
  /** Reference of the in-memory card read kept for the follow-ons (not card data; lost with the process). */
  cardRef: string;
  /** Whether the capture and reversal must carry the EMV tags (EMV contact pre-authorization). */
  includeEmvTags: boolean;
  /** Epoch milliseconds of the entry. */
  enteredAtMs: number;
  /** Epoch milliseconds after which the hold is reversed automatically. */
  expiresAtMs: number;
}

/**
 * How a claimed hold ended: `captured` at the exit, `reversed` at expiry, `returned` when the exit or the expiry
 * failed and the hold goes back under expiry watch (with the fields passed, e.g. a grown `authorizedMinor`).
 */
export type StoredHoldResolution = 'captured' | 'reversed' | 'returned';

interface Row {
  hold_id: string;
  fingerprint: string;
  masked_pan: string;
  gateway_id: string;
  transaction_id: string;
  authorized_minor: number;
  currency: string;
  card_ref: string;
  include_emv_tags: number;
  entered_at: number;
  expires_at: number;
  claimed: number;
  closed_at: number | null;
  resolution: string | null;
  /** The link whose payment paid the stay ({@link HoldStore.paidByLink}); NULL otherwise. */
  paid_link_id: string | null;
  /** The fee link whose payment a restart left in doubt ({@link HoldStore.phonePaymentInDoubt}); NULL otherwise. */
  doubt_link_id: string | null;
  /** When the expiry watch took the hold at the end of its maximum stay ({@link HoldStore.outstayed}); NULL otherwise. */
  outstayed_at: number | null;
}

type Values = Omit<
  Row,
  'claimed' | 'closed_at' | 'resolution' | 'paid_link_id' | 'doubt_link_id' | 'outstayed_at'
>;

/**
 * What the exit finds for a card ({@link HoldStore.claimAtExit}): its open hold, claimed for the exit; `outstayed` when
 * the hold of its last stay was released at the end of its maximum stay while its car was inside (the stay is owed,
 * and no hold covers it); `settling` when
 * its open hold is being settled by someone else (claimed by the expiry watch or another exit, or its authorization
 * settled or being reversed in the journal), or its stay's payment by phone is in doubt (never charged by card:
 * `phonePaymentInDoubt` the link); `captured` when it has no open hold but one of its holds was captured
 * recently; `paid-by-link` when the stay of its last hold was paid by phone (`linkId`), open — then `claimed` for the
 * exit to release when nobody else settles it — or closed recently; `none` otherwise.
 */
export type StoredHoldClaim =
  | { kind: 'claimed'; hold: StoredHold }
  | { kind: 'settling'; holdId: string; phonePaymentInDoubt?: string }
  | { kind: 'captured'; hold: StoredHold; capturedAtMs: number }
  | { kind: 'paid-by-link'; hold: StoredHold; linkId: string; claimed: boolean }
  | { kind: 'outstayed'; hold: StoredHold; outstayedAtMs: number }
  | { kind: 'none' };

/**
 * A card's open stay as its entry and its exit see it ({@link HoldStore.stayAtEntry}): `open` its hold, which the
 * card's exit would claim; `settling` an open hold someone else is settling; `none` no open hold.
 */
export type StoredStay =
  { kind: 'open'; hold: StoredHold } | { kind: 'settling'; holdId: string } | { kind: 'none' };

function toHold(r: Row): StoredHold {
  return {
    holdId: r.hold_id,
    fingerprint: r.fingerprint,
    maskedPan: r.masked_pan,
    gatewayId: r.gateway_id,
    transactionId: r.transaction_id,
    authorizedMinor: r.authorized_minor,
    currency: r.currency,
    cardRef: r.card_ref,
    includeEmvTags: r.include_emv_tags === 1,
    enteredAtMs: r.entered_at,
    expiresAtMs: r.expires_at,
  };
}

/**
 * The one rule of a stay that outlasted its hold: the hold was taken by the expiry watch at the end of its maximum stay
 * ({@link HoldStore.outstayed}) and is being released or closed released — open (its reversal under way, unresolved or
 * to be sent again: an exit that claims it clears the mark), reversed, or dropped with no capture of it standing
 * (`captureStands`) — never paid by phone nor in doubt. Its car was inside, its stay is owed, and no capture of its hold
 * charges it. Undefined for any other hold. (The exit asks it of a closed hold only: an open one is its open stay.)
 */
function outstayedStay(
  r: Row,
  captureStands: (hold: StoredHold, resolution: 'captured' | 'dropped') => boolean,
): { hold: StoredHold; outstayedAtMs: number } | undefined {
  if (
    r.outstayed_at !== null &&
    r.paid_link_id === null &&
    r.doubt_link_id === null &&
    (r.closed_at === null ||
      r.resolution === 'reversed' ||
      (r.resolution === 'dropped' && !captureStands(toHold(r), 'dropped')))
  )
    return { hold: toHold(r), outstayedAtMs: r.outstayed_at };
  return undefined;
}

/**
 * The one rule of what a card's exit finds when the card has no open hold ({@link HoldStore.claimAtExit}), from `last`,
 * the card's last stay (closed, or none): `paid-by-link` when its stay was paid by phone and its hold closed since
 * `since` (epoch milliseconds: now less the window of a paid exit); `outstayed` when it outlasted its hold
 * ({@link outstayedStay}); `captured` when it was captured (or dropped with a capture of it) since `since` and
 * `captureStands` says that capture still pays for the stay; `none` otherwise.
 */
function closedLastStay(
  last: Row | undefined,
  since: number,
  captureStands: (hold: StoredHold, resolution: 'captured' | 'dropped') => boolean,
): StoredHoldClaim {
  if (
    last !== undefined &&
    last.paid_link_id !== null &&
    last.resolution !== 'captured' &&
    last.closed_at !== null &&
    last.closed_at >= since
  )
    return { kind: 'paid-by-link', hold: toHold(last), linkId: last.paid_link_id, claimed: false };
  const outstayed = last !== undefined ? outstayedStay(last, captureStands) : undefined;
  if (outstayed !== undefined) return { kind: 'outstayed', ...outstayed };
  const resolution = last?.resolution;
  if (
    last === undefined ||
    (resolution !== 'captured' && resolution !== 'dropped') ||
    last.closed_at === null ||
    last.closed_at < since
  )
    return { kind: 'none' };
  // The operator gave the money back since (a void, a full refund), or a dropped hold was released rather than
  // captured: the stay is not paid.
  const hold = toHold(last);
  return captureStands(hold, resolution)
    ? { kind: 'captured', hold, capturedAtMs: last.closed_at }
    : { kind: 'none' };
}

/** Refuses a malformed hold, and anything that could put card data into a clear column; returns the row values. */
export function holdValues(hold: StoredHold): Values {
  checkObject(hold, 'hold');
  checkIdentifier(hold.holdId, 'holdId');
  checkCardKey(hold.fingerprint, 'fingerprint');
  checkMaskedPan(hold.maskedPan);
  checkIdentifier(hold.gatewayId, 'gatewayId');
  checkIdentifier(hold.transactionId, 'transactionId');
  checkMinor(hold.authorizedMinor, 'authorizedMinor');
  checkCurrency(hold.currency);
  checkCardKey(hold.cardRef, 'cardRef');
  checkBoolean(hold.includeEmvTags, 'includeEmvTags');
  checkEpochMs(hold.enteredAtMs, 'enteredAtMs');
  checkEpochMs(hold.expiresAtMs, 'expiresAtMs');
  return {
    hold_id: hold.holdId,
    fingerprint: hold.fingerprint,
    masked_pan: hold.maskedPan,
    gateway_id: hold.gatewayId,
    transaction_id: hold.transactionId,
    authorized_minor: hold.authorizedMinor,
    currency: hold.currency,
    card_ref: hold.cardRef,
    include_emv_tags: hold.includeEmvTags ? 1 : 0,
    entered_at: hold.enteredAtMs,
    expires_at: hold.expiresAtMs,
  };
}

/** The statements of the holds table; shared with the import of the former side file. */
export function holdStatements(connection: JournalConnection) {
  const db = connection.db;
  return {
    get: db.prepare<[string], Row>('SELECT * FROM holds WHERE hold_id = ?'),
    insert: db.prepare<
      [Values]
    >(`INSERT INTO holds (hold_id, fingerprint, masked_pan, gateway_id, transaction_id,
        authorized_minor, currency, card_ref, include_emv_tags, entered_at, expires_at)
      VALUES (@hold_id, @fingerprint, @masked_pan, @gateway_id, @transaction_id, @authorized_minor, @currency,
        @card_ref, @include_emv_tags, @entered_at, @expires_at)`),
    /**
     * Replaces the fields of an open hold and puts it back under watch. Its expiry is never put off: one brought
     * forward while the hold was claimed (the card entered again: {@link dueAtEntry}) stays when the claimant gives
     * it back with the expiry it read.
     */
    reopen: db.prepare<[Values]>(`UPDATE holds SET fingerprint = @fingerprint, masked_pan = @masked_pan,
        gateway_id = @gateway_id, transaction_id = @transaction_id, authorized_minor = @authorized_minor,
        currency = @currency, card_ref = @card_ref, include_emv_tags = @include_emv_tags, entered_at = @entered_at,
        expires_at = MIN(expires_at, @expires_at), claimed = 0
      WHERE hold_id = @hold_id AND closed_at IS NULL`),
    /**
     * Makes the card's other open holds of earlier entries due at the new entry (index holds_open_by_fingerprint);
     * returns them.
     */
    dueAtEntry: db.prepare<{ fingerprint: string; hold_id: string; entered_at: number }, Row>(`UPDATE holds
      SET expires_at = @entered_at
      WHERE fingerprint = @fingerprint AND closed_at IS NULL AND entered_at <= @entered_at AND hold_id <> @hold_id
        AND expires_at > @entered_at
      RETURNING *`),
    claimByFingerprint: db.prepare<[string], Row>(`UPDATE holds SET claimed = 1
      WHERE hold_id = (SELECT hold_id FROM holds WHERE fingerprint = ? AND closed_at IS NULL AND claimed = 0
        ORDER BY entered_at DESC, rowid DESC LIMIT 1)
      RETURNING *`),
    /** The open hold of a fingerprint that entered last, claimed or not (index holds_by_fingerprint). */
    lastOpenOfFingerprint: db.prepare<[string], Row>(`SELECT * FROM holds
      WHERE fingerprint = ? AND closed_at IS NULL ORDER BY entered_at DESC, rowid DESC LIMIT 1`),
    /** The hold of a fingerprint that entered last, open or closed (index holds_by_fingerprint). */
    lastOfFingerprint: db.prepare<[string], Row>(`SELECT * FROM holds
      WHERE fingerprint = ? ORDER BY entered_at DESC, rowid DESC LIMIT 1`),
    claimById: db.prepare<[string], Row>(
      'UPDATE holds SET claimed = 1 WHERE hold_id = ? AND closed_at IS NULL AND claimed = 0 RETURNING *',
    ),
    close: db.prepare<{ id: string; at: number; resolution: 'captured' | 'reversed' | 'dropped' }>(
      `UPDATE holds SET claimed = 0, closed_at = @at, resolution = @resolution
      WHERE hold_id = @id AND closed_at IS NULL`,
    ),
    /**
     * Closes the open hold (claimed or not) of an authorization: its id is the authorization's transactionId, so this is
     * a primary-key lookup (the table keeps every closed hold; `transaction_id` alone has no index).
     */
    closeOfAuthorization: db.prepare<{ tx: string; at: number; resolution: 'captured' | 'reversed' }>(
      `UPDATE holds SET claimed = 0, closed_at = @at, resolution = @resolution
      WHERE hold_id = @tx AND transaction_id = @tx AND closed_at IS NULL`,
    ),
    unclaimed: db.prepare<[], Row>(
      'SELECT * FROM holds WHERE closed_at IS NULL AND claimed = 0 ORDER BY entered_at, rowid',
    ),
    /** Open holds, claimed or not, the last entry first (operator mode's list of open stays). */
    openList: db.prepare<[number], Row>(
      'SELECT * FROM holds WHERE closed_at IS NULL ORDER BY entered_at DESC, rowid DESC LIMIT ?',
    ),
    releaseClaims: db.prepare('UPDATE holds SET claimed = 0 WHERE claimed = 1 AND closed_at IS NULL'),
    /** An open stay not paid: the first link in doubt stays. */
    phonePaymentInDoubt: db.prepare<{ id: string; link: string }>(`UPDATE holds
      SET doubt_link_id = COALESCE(doubt_link_id, @link)
      WHERE hold_id = @id AND closed_at IS NULL AND paid_link_id IS NULL`),
    /** The first link that paid the stay stays; an open hold is due from the payment on (its expiry never put off). */
    paidByLink: db.prepare<{ id: string; link: string; at: number }>(`UPDATE holds
      SET paid_link_id = COALESCE(paid_link_id, @link),
        expires_at = CASE WHEN closed_at IS NULL AND expires_at > @at THEN @at ELSE expires_at END
      WHERE hold_id = @id`),
    size: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM holds WHERE closed_at IS NULL'),
    /** Every open hold, claimed or not, oldest entry first. */
    allOpen: db.prepare<[], Row>('SELECT * FROM holds WHERE closed_at IS NULL ORDER BY entered_at, rowid'),
    /** Each card's last stay ({@link lastOfFingerprint}'s order) when it is closed. */
    lastClosedOfEachCard: db.prepare<[], Row>(`SELECT * FROM (SELECT *, rowid AS row_order,
        ROW_NUMBER() OVER (PARTITION BY fingerprint ORDER BY entered_at DESC, rowid DESC) AS nth FROM holds)
      WHERE nth = 1 AND closed_at IS NOT NULL ORDER BY entered_at, row_order`),
    notOutstayed: db.prepare<[string]>('UPDATE holds SET outstayed_at = NULL WHERE hold_id = ?'),
    /**
     * An open stay not paid by phone reached its maximum: the first time stays. Only the card's last entry (index
     * holds_by_fingerprint): a hold of an earlier entry is due because the card entered again, its car let out.
     */
    outstayed: db.prepare<{ id: string; at: number }>(`UPDATE holds
      SET outstayed_at = COALESCE(outstayed_at, @at)
      WHERE hold_id = @id AND closed_at IS NULL AND paid_link_id IS NULL AND doubt_link_id IS NULL
        AND hold_id = (SELECT last.hold_id FROM holds AS last WHERE last.fingerprint = holds.fingerprint
          ORDER BY last.entered_at DESC, last.rowid DESC LIMIT 1)`),
  };
}

/** The tap-and-go stays that are still found by their card's fingerprint ({@link staysMatchedByCard}). */
export interface StaysMatchedByCard {
  /** Open holds, claimed or not, oldest entry first: the card's exit (and its next entry) finds each by its card. */
  readonly open: StoredHold[];
  /**
   * Closed holds, each its card's last stay, that the card's exit still finds by the rule of
   * {@link HoldStore.claimAtExit} for a card with no open hold: a recent capture or payment by phone (the paid exit
   * opens again), or a stay that outlasted its hold (owed, charged at the exit).
   */
  readonly closed: { hold: StoredHold; exitFinds: 'paid-by-link' | 'outstayed' | 'captured' }[];
}

/**
 * The stays a new card fingerprint key would lose (src/host/keys.ts): every open hold, and every closed one that its
 * card's exit would still find ({@link closedLastStay}, the exit's own rule, with `recentCaptureMs` as the exit asks
 * it). Whether a capture still stands (not voided nor refunded since) is the host's to say from the journal's
 * payments; it is not read here: a closed hold is counted when the exit would find it with either answer. Read only;
 * claims nothing and releases no claim (safe beside a running terminal and from another process).
 */
export function staysMatchedByCard(
  connection: JournalConnection,
  rules: { recentCaptureMs: number },
): StaysMatchedByCard {
  if (!Number.isFinite(rules.recentCaptureMs) || rules.recentCaptureMs < 0)
    throw new JournalError('JOURNAL_INVALID', 'recentCaptureMs must be ≥ 0');
  const stmts = holdStatements(connection);
  return readOn(connection, () => {
    const since = connection.now().getTime() - rules.recentCaptureMs;
    const closed: StaysMatchedByCard['closed'] = [];
    for (const row of stmts.lastClosedOfEachCard.all()) {
      for (const stands of [true, false]) {
        const found = closedLastStay(row, since, () => stands);
        if (found.kind === 'none') continue;
        if (found.kind === 'paid-by-link' || found.kind === 'outstayed' || found.kind === 'captured')
          closed.push({ hold: found.hold, exitFinds: found.kind });
        break;
      }
    }
    return { open: stmts.allOpen.all().map(toHold), closed };
  });
}

/**
 * Open tap-and-go holds in the journal database (DESIGN.md, money safety rule 6; replaces the side file
 * `holds.json`). A car that entered before a restart can exit, and a hold is still reversed after the maximum stay.
 *
 * Every method is synchronous and writes through {@link JournalConnection.atomically}: called inside
 * `journal.atomically(true, () => …)` it joins that transaction, so a hold opens or closes in the same commit as the
 * journal outcome that causes it, or not at all.
 *
 * A capture or reversal that settles a hold's authorization closes the hold in the transaction of its own outcome
 * ({@link settle}, src/host/payment-router.ts), so that no crash can leave a settled authorization under an open hold
 * (a second exit would capture it again, the expiry watch would reverse a captured authorization).
 *
 * Claims are not durable across a restart: the constructor puts every claimed hold back under watch, because an exit
 * or expiry interrupted by a crash never completed (its request is resolved by recovery, and the host's start drops
 * every open hold whose authorization the journal shows settled — src/host/open-authorizations.ts — before the first
 * card). Construct one store per terminal process, in the process that watches the holds: another process
 * constructing one would release the terminal's claims.
 */
export class HoldStore {
  private readonly stmts: ReturnType<typeof holdStatements>;

  constructor(private readonly connection: JournalConnection) {
    this.stmts = holdStatements(connection);
    connection.atomically(true, () => this.stmts.releaseClaims.run());
  }

  /**
   * Opens a hold (durably). Opening a hold that is already open replaces its fields and puts it back under watch;
   * `JOURNAL_DUPLICATE` when a hold with that id was closed (its authorization is settled: opening it again would
   * capture or reverse it twice); `JOURNAL_INVALID` for a malformed hold.
   *
   * A card holds one stay's funds at a time. A new hold makes the card's open holds of earlier entries (a car let out
   * without its exit, an entry tried again) due at its entry, in the same commit: their expiry watch reverses them in
   * full now — after a crash too, from the store at start — rather than up to the maximum stay later, and the exit,
   * which claims the last entry's hold only, would never settle them. Returns those of them no exit or expiry has
   * claimed, for the watch to arm at once; a claimed one stays due when its claimant gives it back (`reopen`). With one
   * stay per card (tariff.tapAndGoOneStayPerCard) an entry whose card has an open stay ({@link stayAtEntry}) is refused
   * before its pre-authorization, so such earlier holds are then only ones being settled already.
   */
  open(hold: StoredHold): StoredHold[] {
    const values = holdValues(hold);
    return this.connection.atomically(true, () => {
      const existing = this.stmts.get.get(values.hold_id);
      if (existing === undefined) this.stmts.insert.run(values);
      else if (existing.closed_at === null) this.stmts.reopen.run(values);
      else
        throw new JournalError(
          'JOURNAL_DUPLICATE',
          `hold ${values.hold_id} was closed (${existing.resolution ?? ''}) and cannot be opened again`,
        );
      return this.stmts.dueAtEntry
        .all({ fingerprint: values.fingerprint, hold_id: values.hold_id, entered_at: values.entered_at })
        .filter((r) => r.claimed === 0)
        .map(toHold);
    });
  }

  /**
   * Takes the open, unclaimed hold of a fingerprint out of expiry watch and returns it (the one that entered last when a
   * card has several, as {@link claimAtExit}); null when there is none. Not synced on its own: claims do not survive a
   * restart anyway.
   */
  claim(fingerprint: string): StoredHold | null {
    if (typeof fingerprint !== 'string')
      throw new JournalError('JOURNAL_INVALID', 'fingerprint must be a string');
    return this.claimWith(this.stmts.claimByFingerprint, fingerprint);
  }

  /**
   * What the exit of a card finds, in one transaction (see {@link StoredHoldClaim}):
   * - the open hold of the fingerprint that entered last, claimed (out of expiry watch), unless it is claimed already
   *   (by the expiry watch or another exit) or `settling` names it (the host's rule: its authorization's reversal,
   *   capture or increment in flight or unknown, its release decided, or the journal shows it settled and the hold is
   *   about to be dropped): then `settling` — the exit must neither capture nor reverse it. An earlier open hold of the
   *   card is never taken instead: the car at the exit entered last, and the fee of its stay runs from that entry. A
   *   hold of an earlier entry still open is a stay whose car left without its exit (let out by the operator), due at
   *   the card's last entry ({@link open}) and reversed by its expiry watch; charging the car's stay from that entry
   *   would charge the customer for the time between;
   * - a hold whose payment by phone is in doubt ({@link phonePaymentInDoubt}) is never charged by card: `settling`,
   *   with the link;
   * - a hold whose stay was paid by phone ({@link paidByLink}) is never charged: the open hold of the card that entered
   *   last, if paid so, is `paid-by-link`, claimed for the exit (which releases it) unless it is claimed already or
   *   `settling` names it (then someone else releases it, and the exit only opens); a last hold closed so (released,
   *   never captured) no longer than `recentCaptureMs` ago is `paid-by-link` too, unclaimed — the exit opens as paid
   *   again, as for a capture;
   * - else `outstayed` with the hold of the card that entered last, when its stay outlasted it: taken by the expiry
   *   watch at the end of its maximum stay ({@link outstayed}) and closed released — reversed, or dropped with no
   *   capture of it standing (`captureStands`) — never paid by phone nor in doubt: the car is inside, its stay is owed,
   *   and no hold is left to capture it (the exit charges it another way);
   * - else `captured` with the hold of the card that entered last, when it was closed no longer than
   *   `recentCaptureMs` ago (journal clock), as captured or dropped, and `captureStands` says a capture of it still
   *   pays for the stay (the host's rule: not voided, not refunded in full; for a dropped hold, a capture of it the
   *   journal holds — one whose answer was lost and that recovery found standing drops the hold with its
   *   authorization settled): the exit was paid, and a restart or that lost answer kept its gate from opening;
   * - else `none`.
   * Not synced on its own: claims do not survive a restart anyway.
   */
  claimAtExit(
    fingerprint: string,
    rules: {
      settling: (hold: StoredHold) => boolean;
      recentCaptureMs: number;
      captureStands: (hold: StoredHold, resolution: 'captured' | 'dropped') => boolean;
    },
  ): StoredHoldClaim {
    if (typeof fingerprint !== 'string')
      throw new JournalError('JOURNAL_INVALID', 'fingerprint must be a string');
    if (!Number.isFinite(rules.recentCaptureMs) || rules.recentCaptureMs < 0)
      throw new JournalError('JOURNAL_INVALID', 'recentCaptureMs must be ≥ 0');
    return this.connection.atomically(false, (): StoredHoldClaim => {
      const open = this.stmts.lastOpenOfFingerprint.get(fingerprint);
      if (open !== undefined && open.paid_link_id !== null) {
        const hold = toHold(open);
        const claimed =
          open.claimed === 0 && !rules.settling(hold) && this.stmts.claimById.get(open.hold_id) !== undefined;
        return { kind: 'paid-by-link', hold, linkId: open.paid_link_id, claimed };
      }
      if (open !== undefined && open.doubt_link_id !== null)
        return { kind: 'settling', holdId: open.hold_id, phonePaymentInDoubt: open.doubt_link_id };
      const stay = this.openStay(fingerprint, rules.settling);
      if (stay.kind === 'open') {
        if (this.stmts.claimById.get(stay.hold.holdId) === undefined)
          return { kind: 'settling', holdId: stay.hold.holdId };
        // The exit settles the stay itself now (captured, or released as its fee is collected otherwise): an expiry
        // that took the hold before and gave it back unreleased no longer makes it outstayed.
        this.stmts.notOutstayed.run(stay.hold.holdId);
        return { kind: 'claimed', hold: stay.hold };
      }
      if (stay.kind === 'settling') return stay;
      // Only the card's last stay can be the one whose gate a restart kept shut: a capture of an earlier stay does
      // not pay for a later one whose hold was released unpaid (a declined capture, a link not paid).
      return closedLastStay(
        this.stmts.lastOfFingerprint.get(fingerprint),
        this.connection.now().getTime() - rules.recentCaptureMs,
        rules.captureStands,
      );
    });
  }

  /**
   * The card's last stay when it outlasted its hold (the rule of {@link claimAtExit}'s `outstayed`, which the card's
   * exit would charge), its hold released or still being released: a new entry of the card about to open its hold asks
   * it, since its hold becomes the card's last stay and no exit asks for this one again. `captureStands` as for
   * {@link claimAtExit}. Read only; undefined when the card's last stay is none such.
   */
  outstayedLastStay(
    fingerprint: string,
    rules: { captureStands: (hold: StoredHold, resolution: 'captured' | 'dropped') => boolean },
  ): { hold: StoredHold; outstayedAtMs: number } | undefined {
    if (typeof fingerprint !== 'string')
      throw new JournalError('JOURNAL_INVALID', 'fingerprint must be a string');
    return readOn(this.connection, () => {
      const last = this.stmts.lastOfFingerprint.get(fingerprint);
      return last === undefined ? undefined : outstayedStay(last, rules.captureStands);
    });
  }

  /**
   * What the entry of a card finds (anti-passback, tariff.tapAndGoOneStayPerCard): the hold that {@link claimAtExit}
   * would claim for the card's exit now — `open` — without claiming it; `settling` or `none` as there. An `open` stay
   * means the card is inside: a car that entered with it has not left. Read only.
   */
  stayAtEntry(fingerprint: string, rules: { settling: (hold: StoredHold) => boolean }): StoredStay {
    if (typeof fingerprint !== 'string')
      throw new JournalError('JOURNAL_INVALID', 'fingerprint must be a string');
    return readOn(this.connection, () => this.openStay(fingerprint, rules.settling));
  }

  /**
   * The one rule of a card's open stay, for its exit ({@link claimAtExit}) and its entry ({@link stayAtEntry}): the
   * open hold of the fingerprint that entered last is the card's stay (`open`) unless it is claimed already (by the
   * expiry watch or another exit) or `settling` names it — then `settling`, being settled by someone else; an earlier
   * open hold of the card is never the stay. A hold whose stay was paid by phone ({@link paidByLink}) is no open stay
   * either: the car left, and the hold only waits for its release (`settling`); nor one whose payment by phone is in
   * doubt ({@link phonePaymentInDoubt}): the customer may have paid, so it is never charged by card — it waits for the
   * payment's late notification or its expiry (`settling`). `none` without an open hold.
   */
  private openStay(fingerprint: string, settling: (hold: StoredHold) => boolean): StoredStay {
    const open = this.stmts.lastOpenOfFingerprint.get(fingerprint);
    if (open === undefined) return { kind: 'none' };
    const hold = toHold(open);
    if (open.claimed === 0 && open.paid_link_id === null && open.doubt_link_id === null && !settling(hold))
      return { kind: 'open', hold };
    return { kind: 'settling', holdId: open.hold_id };
  }

  /** Claims a hold by id (expiry); null when it is closed, unknown, or already claimed (by an exit). */
  claimById(holdId: string): StoredHold | null {
    if (typeof holdId !== 'string') throw new JournalError('JOURNAL_INVALID', 'holdId must be a string');
    return this.claimWith(this.stmts.claimById, holdId);
  }

  private claimWith(stmt: Statement<[string], Row>, key: string): StoredHold | null {
    const row = this.connection.atomically(false, () => stmt.get(key));
    return row === undefined ? null : toHold(row);
  }

  /**
   * Ends a hold (durably). `captured` and `reversed` close it; `returned` replaces its fields with `hold`'s and puts
   * it back under watch. A hold already closed stays closed with its first resolution (a `returned` after, say,
   * recovery dropped it must not revive a settled authorization). `JOURNAL_NOT_FOUND` for a hold never opened.
   */
  close(hold: StoredHold, resolution: StoredHoldResolution): void {
    const values = holdValues(hold);
    if (resolution !== 'captured' && resolution !== 'reversed' && resolution !== 'returned')
      throw new JournalError(
        'JOURNAL_INVALID',
        `resolution "${String(resolution)}" is not one of captured, reversed, returned`,
      );
    this.connection.atomically(true, () => {
      const existing = this.stmts.get.get(values.hold_id);
      if (existing === undefined) throw new JournalError('JOURNAL_NOT_FOUND', `no hold ${values.hold_id}`);
      if (existing.closed_at !== null) return;
      if (resolution === 'returned') this.stmts.reopen.run(values);
      else this.stmts.close.run({ id: values.hold_id, at: this.connection.now().getTime(), resolution });
    });
  }

  /** Open holds not claimed by an exit or an expiry, oldest entry first: what the expiry watch covers. */
  unclaimed(): StoredHold[] {
    return readOn(this.connection, () => this.stmts.unclaimed.all().map(toHold));
  }

  /**
   * Open holds, claimed (by an exit or the expiry watch) or not, the last entry first, at most `limit` (1–1000): the
   * open tap-and-go stays operator mode lists, with the link whose payment by phone is in doubt
   * ({@link phonePaymentInDoubt}) of a stay not paid. `JOURNAL_INVALID` for another limit.
   */
  listOpen(limit: number): { hold: StoredHold; claimed: boolean; doubtLinkId?: string }[] {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
      throw new JournalError('JOURNAL_INVALID', 'limit must be a whole number from 1 to 1000');
    return readOn(this.connection, () =>
      this.stmts.openList.all(limit).map((r) => ({
        hold: toHold(r),
        claimed: r.claimed === 1,
        ...(r.doubt_link_id !== null && r.paid_link_id === null ? { doubtLinkId: r.doubt_link_id } : {}),
      })),
    );
  }

  /**
   * Closes an open hold (claimed or not) whose authorization was settled elsewhere (recovery, a late resolution),
   * durably, as `dropped`; false when no open hold has that id.
   */
  drop(holdId: string): boolean {
    if (typeof holdId !== 'string') throw new JournalError('JOURNAL_INVALID', 'holdId must be a string');
    return this.connection.atomically(
      true,
      () =>
        this.stmts.close.run({ id: holdId, at: this.connection.now().getTime(), resolution: 'dropped' })
          .changes === 1,
    );
  }

  /**
   * Closes the open hold (claimed or not) of the authorization with this transactionId as `captured` or `reversed`:
   * a capture or reversal of it was approved. Meant to run inside the transaction that records that outcome (it joins
   * it), so that the outcome and the hold's end commit together. False when the authorization has no open hold (none
   * was opened for it, or it is closed already: the first resolution stays).
   */
  settle(authorizationTransactionId: string, resolution: 'captured' | 'reversed'): boolean {
    if (typeof authorizationTransactionId !== 'string')
      throw new JournalError('JOURNAL_INVALID', 'authorizationTransactionId must be a string');
    if (resolution !== 'captured' && resolution !== 'reversed')
      throw new JournalError(
        'JOURNAL_INVALID',
        `resolution "${String(resolution)}" is not one of captured, reversed`,
      );
    return this.connection.atomically(
      true,
      () =>
        this.stmts.closeOfAuthorization.run({
          tx: authorizationTransactionId,
          at: this.connection.now().getTime(),
          resolution,
        }).changes > 0,
    );
  }

  /**
   * The stay of hold `holdId` was paid by phone: a payment of link `linkId` counted for it (src/host/link-desk.ts), in
   * the transaction that makes the link `paid` (it joins it). From then on the hold is never charged
   * ({@link claimAtExit}: `paid-by-link`) and, while open, it is due from `atMs` (the payment's time on the clock of
   * the holds' entries and expiries): its expiry watch releases it, from the next start on too, unless its exit does
   * first. The first link stays. False when no hold has that id.
   */
  paidByLink(holdId: string, linkId: string, atMs: number): boolean {
    checkIdentifier(holdId, 'holdId');
    checkIdentifier(linkId, 'linkId');
    checkEpochMs(atMs, 'atMs');
    return this.connection.atomically(
      true,
      () => this.stmts.paidByLink.run({ id: holdId, link: linkId, at: atMs }).changes === 1,
    );
  }

  /**
   * A restart closed the fee link `linkId` of hold `holdId`'s stay without knowing whether its customer paid it (the
   * link was shown, and its payment's notification may have gone to the process that died): the hold is never charged
   * by card ({@link claimAtExit}: `settling`), and a late notification of that link's payment counts for the stay
   * ({@link paymentInDoubt}). Its expiry is not changed: its watch releases it at its time. Meant to run inside the
   * transaction that journals the link's closing (it joins it). The first link stays; false when no open hold, not
   * paid already, has that id.
   */
  phonePaymentInDoubt(holdId: string, linkId: string): boolean {
    checkIdentifier(holdId, 'holdId');
    checkIdentifier(linkId, 'linkId');
    return this.connection.atomically(
      true,
      () => this.stmts.phonePaymentInDoubt.run({ id: holdId, link: linkId }).changes === 1,
    );
  }

  /**
   * The expiry watch takes open hold `holdId` at the end of its maximum stay (`atMs`, the clock of the holds' entries
   * and expiries), before its reversal is sent: its car has not come out through the exit, so once the hold is released
   * the card's exit still finds the stay, owed ({@link claimAtExit}: `outstayed`). Not for a stay paid by phone or whose
   * payment by phone is in doubt (its hold is only released), nor the operator's release of a hold (the car was let
   * out), nor a hold of the card's earlier entry, due because the card entered again (its car was let out: no exit
   * asks for it). The first time stays; false when no such open hold has that id.
   */
  outstayed(holdId: string, atMs: number): boolean {
    checkIdentifier(holdId, 'holdId');
    checkEpochMs(atMs, 'atMs');
    return this.connection.atomically(
      true,
      () => this.stmts.outstayed.run({ id: holdId, at: atMs }).changes === 1,
    );
  }

  /** Whether link `linkId` is the payment by phone in doubt of hold `holdId` ({@link phonePaymentInDoubt}), open or closed. */
  paymentInDoubt(holdId: string, linkId: string): boolean {
    if (typeof holdId !== 'string' || typeof linkId !== 'string') return false;
    return readOn(this.connection, () => this.stmts.get.get(holdId)?.doubt_link_id === linkId);
  }

  /** Whether a hold (claimed or not) with this id is open. */
  has(holdId: string): boolean {
    return this.get(holdId) !== undefined;
  }

  /** The open hold (claimed or not) with this id; undefined when it is closed or unknown. */
  get(holdId: string): StoredHold | undefined {
    if (typeof holdId !== 'string') throw new JournalError('JOURNAL_INVALID', 'holdId must be a string');
    return readOn(this.connection, () => {
      const row = this.stmts.get.get(holdId);
      return row === undefined || row.closed_at !== null ? undefined : toHold(row);
    });
  }

  /** Number of open holds, claimed or not. */
  get size(): number {
    return readOn(this.connection, () => this.stmts.size.get()?.n ?? 0);
  }
}
