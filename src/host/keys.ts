import { dirname, resolve } from 'node:path';
import { paidExitWindowMs, type FlowSettings } from '../flows/index.js';
import type { Logger } from '../log/index.js';
import { fileKeyProvider, keyFileHolds, writeKeyFileInPlaceOfLost } from '../journal/encryption.js';
import { JournalError } from '../journal/errors.js';
import {
  AuditStore,
  openFingerprintedPayments,
  staysMatchedByCard,
  type StaysMatchedByCard,
} from '../journal/index.js';
import type { SqliteJournal } from '../journal/journal.js';

/** The card fingerprint key file of the journal at `journalPath`: `fingerprint.key` beside it. */
export function fingerprintKeyPath(journalPath: string): string {
  return resolve(dirname(journalPath), 'fingerprint.key');
}

/** The operator command that writes a new card fingerprint key in place of a lost one (src/cli/commands/offline.ts). */
export const REPLACE_FINGERPRINT_KEY_COMMAND = 'parking-terminal offline replace-fingerprint-key --confirm';

/** What of the journal a new card fingerprint key would no longer match: found by their card's fingerprint only. */
export interface LostWithFingerprintKey {
  /** Tap-and-go stays: the open ones, and the closed ones their card's exit still finds (HoldStore.claimAtExit). */
  readonly stays: StaysMatchedByCard;
  /** TransactionIds of the open stored offline payments counted against their card's offline limit. */
  readonly offlinePayments: string[];
}

/**
 * What a new card fingerprint key would lose ({@link LostWithFingerprintKey}), by the rules that match a card: the exit's
 * (its paid-exit window from `settings`, as the tap-and-go exit asks it) and the offline per-card limit's. Old, settled
 * history (stays closed that no exit finds any more, payments forwarded) is not counted: no card is matched against it.
 */
export function lostWithFingerprintKey(
  journal: SqliteJournal,
  settings: Pick<FlowSettings, 'tariff'>,
): LostWithFingerprintKey {
  return {
    stays: staysMatchedByCard(journal, { recentCaptureMs: paidExitWindowMs(settings) }),
    offlinePayments: openFingerprintedPayments(journal),
  };
}

/** Whether anything would be lost ({@link lostWithFingerprintKey}). */
export function losesAny(lost: LostWithFingerprintKey): boolean {
  return lost.stays.open.length + lost.stays.closed.length + lost.offlinePayments.length > 0;
}

/** Whether the journal keeps any fingerprint at all, matched or not: its history of tap-and-go and offline cards. */
function keepsFingerprints(journal: SqliteJournal): boolean {
  const any = (sql: string): boolean => journal.db.prepare(sql).get() !== undefined;
  return (
    any('SELECT 1 FROM holds LIMIT 1') ||
    any('SELECT 1 FROM offline_payments WHERE card_fingerprint IS NOT NULL LIMIT 1')
  );
}

function holdsNoKey(path: string): boolean {
  try {
    return keyFileHolds(path) === 'no-key';
  } catch {
    return false;
  }
}

/**
 * The tap-and-go card fingerprint key (`fingerprint.key` beside the journal, `journal.path`): the HMAC key of every
 * card fingerprint (src/host/card-store.ts), which must stay the same across restarts — a car that entered before a
 * restart exits by its stay, and the offline per-card limit counts the card's stored payments. Kept as the key for
 * data at rest is ({@link fileKeyProvider}, the one rule of key files): created 0600, whole and synced, only when
 * absent, and a file that holds no key is refused, never replaced. A missing file is created only when a new key would
 * lose nothing ({@link lostWithFingerprintKey}); over a journal with fingerprinted history (settled, matched no more) a
 * warning is logged. Otherwise the operator decides: restore the file, or write a new key with
 * {@link REPLACE_FINGERPRINT_KEY_COMMAND}, which records what it loses. Called under the journal's sender lock, before
 * any card is read.
 *
 * @throws JournalError JOURNAL_KEY naming the file and what to do: a file that holds no key or is accessible to group
 *   or others, a missing one whose key the journal's open stays or payments were matched under, one that cannot be
 *   read or created.
 */
export function loadFingerprintKey(
  journal: SqliteJournal,
  path: string,
  options: { settings: Pick<FlowSettings, 'tariff'>; logger?: Logger },
): Buffer {
  try {
    return fileKeyProvider(path, {
      configKey: 'journal.path',
      beforeCreate: () => {
        const lost = lostWithFingerprintKey(journal, options.settings);
        if (losesAny(lost))
          throw new JournalError(
            'JOURNAL_KEY',
            `${path}: the card fingerprint key is missing, and the journal keeps ${lost.stays.open.length} open ` +
              `tap-and-go stay(s), ${lost.stays.closed.length} closed stay(s) the exit still finds and ` +
              `${lost.offlinePayments.length} open offline payment(s) matched by card under it, which a new key ` +
              `would not match; restore the key file from a backup, or write a new key with \`${REPLACE_FINGERPRINT_KEY_COMMAND}\` ` +
              '(it records and prints what will no longer match)',
          );
        if (keepsFingerprints(journal))
          options.logger?.warn(
            { keyFile: path },
            'the card fingerprint key is missing: a new one is created; the journal keeps only settled tap-and-go ' +
              'stays and offline payments, which no card is matched against any more',
          );
      },
    }).loadKey();
  } catch (e) {
    // A file that holds no key: its key is lost as surely as a missing file's.
    if (e instanceof JournalError && e.code === 'JOURNAL_KEY' && holdsNoKey(path))
      throw new JournalError(
        'JOURNAL_KEY',
        `${e.message}; without a backup, write a new key with \`${REPLACE_FINGERPRINT_KEY_COMMAND}\``,
        { cause: e },
      );
    throw e;
  }
}

/** Most ids of each kind the audit record of a replacement names (its details stay within the log's size). */
const AUDITED_IDS = 8;

/**
 * What {@link replaceFingerprintKey} did, printed for the operator: no key, no card data (ids, times and amounts only).
 */
export interface FingerprintKeyReplacement {
  readonly replaced: true;
  readonly keyFile: string;
  /** What the file was: missing, or present holding no key. */
  readonly previousFile: 'missing' | 'no-key';
  /** Open stays, no longer found at their exit: each hold is released (reversed) at its expiry. */
  readonly openStays: {
    holdId: string;
    transactionId: string;
    enteredAt: string;
    expiresAt: string;
    authorizedMinor: number;
    currency: string;
  }[];
  /** Closed stays the card's exit would still have found, and what it would have found. */
  readonly closedStays: { holdId: string; transactionId: string; exitFinds: string }[];
  /** TransactionIds of the open offline payments that no longer count against their card's limit. */
  readonly offlinePayments: string[];
  /** What the operator must do about them, one line each. */
  readonly operator: string[];
}

/** What is lost, as the replacement reports it (before `replaced`). */
export type FingerprintKeyLoss = Omit<FingerprintKeyReplacement, 'replaced'>;

function lossReport(
  keyFile: string,
  previousFile: 'missing' | 'no-key',
  lost: LostWithFingerprintKey,
): FingerprintKeyLoss {
  const { open, closed } = lost.stays;
  const operator: string[] = [];
  if (open.length > 0)
    operator.push(
      `${open.length} open tap-and-go stay(s) will not be found at the exit: their cars cannot pay there by card. ` +
        'Let each out by hand and collect its fee otherwise, then release its stay in operator mode (open stays); ' +
        'a stay not released is reversed at its expiry (expiresAt), charging nothing.',
    );
  if (closed.some((c) => c.exitFinds === 'outstayed'))
    operator.push(
      'The stays that outlasted their hold (exitFinds "outstayed") will not be charged at their card\'s exit: ' +
        'collect their fee otherwise.',
    );
  if (closed.some((c) => c.exitFinds !== 'outstayed'))
    operator.push(
      'The exits already paid (exitFinds "captured", "paid-by-link") will not open again for their card: ' +
        'let a paid car out by hand.',
    );
  if (lost.offlinePayments.length > 0)
    operator.push(
      `${lost.offlinePayments.length} open offline payment(s) are still forwarded, but no longer count against ` +
        "their card's offline limit (offline.maxCountPerCard).",
    );
  return {
    keyFile,
    previousFile,
    openStays: open.map((h) => ({
      holdId: h.holdId,
      transactionId: h.transactionId,
      enteredAt: new Date(h.enteredAtMs).toISOString(),
      expiresAt: new Date(h.expiresAtMs).toISOString(),
      authorizedMinor: h.authorizedMinor,
      currency: h.currency,
    })),
    closedStays: closed.map((c) => ({
      holdId: c.hold.holdId,
      transactionId: c.hold.transactionId,
      exitFinds: c.exitFinds,
    })),
    offlinePayments: lost.offlinePayments,
    operator,
  };
}

/**
 * The operator's deliberate way forward when the card fingerprint key is lost and no backup exists (`offline
 * replace-fingerprint-key`): writes a new key to `keyFile` where the file is missing or holds no key — never over a key
 * (`JOURNAL_KEY`, writing nothing) — and records in the audit log (`fingerprint-key-replace`) what will no longer match
 * ({@link lostWithFingerprintKey}: counts and the first ids, no card data), in one transaction with the key's writing:
 * the record exists when the key was written. `confirm` is shown what would be lost first and throws to write nothing.
 * Run under the journal's sender lock (the terminal, which fingerprints cards under its key, is not running).
 */
export function replaceFingerprintKey(
  journal: SqliteJournal,
  options: {
    keyFile: string;
    settings: Pick<FlowSettings, 'tariff'>;
    confirm: (loss: FingerprintKeyLoss) => void;
  },
): FingerprintKeyReplacement {
  const { keyFile } = options;
  const previousFile = keyFileHolds(keyFile);
  if (previousFile === 'key')
    throw new JournalError(
      'JOURNAL_KEY',
      `${keyFile}: holds a card fingerprint key, which is never replaced (what the journal matches by card would ` +
        'no longer match); nothing to do',
    );
  // Read before the transaction, which `confirm` may stop by throwing: under the sender lock no terminal changes it.
  const loss = lossReport(keyFile, previousFile, lostWithFingerprintKey(journal, options.settings));
  options.confirm(loss);
  const audit = new AuditStore(journal);
  return journal.atomically(true, () => {
    audit.append({
      actor: 'operator',
      action: 'fingerprint-key-replace',
      result: 'ok',
      details: {
        previousFile,
        openStays: loss.openStays.length,
        closedStays: loss.closedStays.length,
        offlinePayments: loss.offlinePayments.length,
        openHoldIds: loss.openStays.slice(0, AUDITED_IDS).map((h) => h.holdId),
        closedHoldIds: loss.closedStays.slice(0, AUDITED_IDS).map((h) => h.holdId),
        offlineTransactionIds: loss.offlinePayments.slice(0, AUDITED_IDS),
      },
    });
    // Last in the transaction: a key that cannot be written rolls the record back.
    writeKeyFileInPlaceOfLost(keyFile);
    return { replaced: true, ...loss };
  });
}
