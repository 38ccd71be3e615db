import { containsCardNumber } from '../emv/index.js';
import { isRateText } from '../money/index.js';
import { isDisclaimerText, MAX_DISCLAIMER } from '../vocabulary/dcc-disclaimer.js';
import { KEY_BYTES, open as openSealed, seal } from './encryption.js';
import { JournalError } from './errors.js';
import {
  checkBoolean,
  checkCurrency,
  checkIdentifier,
  checkMinor,
  checkObject,
  checkText,
  readOn,
  type JournalConnection,
} from './field-checks.js';

/**
 * The DCC terms of a converted payment, kept so that its capture, refund or reversal repeats them (spec 001: "DCC
 * capture and refund require the same field set … use the exchange rate of the authorization"; DESIGN.md, money
 * safety rule 7): the gateway client's `DccFields` with indicator `1` (which the journal may not import) plus the
 * offer's local amount and currency and the rate's direction. No card data: stored in clear.
 */
export interface StoredDccTerms {
  indicator: '1';
  /** Processor family of the acquirer (spec 001): A sends original*, B sends foreign*. */
  family: 'A' | 'B';
  /**
   * The local price the offer converted, minor units of `localCurrency`: with `billingAmountMinor` it converts a
   * follow-on's own (partial) amount at the authorization's rate.
   */
  localAmountMinor: number;
  /** ISO 4217 alpha code of the merchant's price. */
  localCurrency: string;
  /** The converted amount, minor units of `billingCurrency`. */
  billingAmountMinor: number;
  /** ISO 4217 alpha code of the card's billing currency; never `localCurrency`. */
  billingCurrency: string;
  /** Exchange rate of the offer (margin included), exactly as the offer gave it. */
  exchangeRate: string;
  /** Whether `exchangeRate` is units of `localCurrency` per unit of `billingCurrency` (as the offer said). */
  exchangeRateInverted: boolean;
  /**
   * `exchangeRateTimeStamp` as the authorization sent it, which its follow-ons repeat: 14 digits `yyyyMMddHHmmss` in
   * UTC; a payment converted by an earlier version keeps the offer's ISO 8601 text it sent then (never rewritten).
   */
  exchangeRateTimeStamp: string;
  offerId?: string;
  reconciliationId?: string;
}

const DCC_KEYS = new Set([
  'indicator',
  'family',
  'localAmountMinor',
  'localCurrency',
  'billingAmountMinor',
  'billingCurrency',
  'exchangeRate',
  'exchangeRateInverted',
  'exchangeRateTimeStamp',
  'offerId',
  'reconciliationId',
]);

/**
 * What the receipts of a converted payment state beyond its {@link StoredDccTerms}, as the customer was shown them
 * (kiosk.md §1; gateway.md §5), so that a receipt of one of its transactions issued after a restart states the
 * disclosure of the first one. Stored encrypted, as the tag set is: the disclaimer is the gateway's text, kept
 * verbatim, and a date, time or phone number in it can read as a card number (migrations/dcc-disclosure-sealed.ts).
 */
export interface StoredDccDisclosure {
  /** The offer's margin over the wholesale rate, percent, exactly as the gateway wrote it. */
  marginRate: string;
  /** The gateway's disclaimer, exactly as it came (printed without modification). */
  disclaimer: string;
}

/**
 * The disclosure as the journal keeps it, or undefined when it would refuse it ({@link checkDccDisclosure}): a margin
 * that is not a decimal, an empty or overlong disclaimer. The caller keeps the terms without it then — a converted
 * payment's outcome is never refused for its receipt's wording.
 */
export function storableDccDisclosure(
  disclosure: StoredDccDisclosure | undefined,
): StoredDccDisclosure | undefined {
  if (disclosure === undefined) return undefined;
  try {
    return checkDccDisclosure(disclosure);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a disclosure of the wrong shape; returns a copy with the known keys only. Whatever digits its disclaimer
 * holds: it is kept sealed ({@link AuthorizationDataStore.putDccTerms}), never in a clear column.
 */
export function checkDccDisclosure(disclosure: StoredDccDisclosure): StoredDccDisclosure {
  checkObject(disclosure, 'dcc disclosure');
  const { marginRate, disclaimer } = disclosure;
  if (!isRateText(marginRate))
    throw new JournalError('JOURNAL_INVALID', 'dcc disclosure: marginRate must be a decimal string');
  if (!isDisclaimerText(disclaimer))
    throw new JournalError(
      'JOURNAL_INVALID',
      `dcc disclosure: disclaimer must be a text of at most ${MAX_DISCLAIMER} characters that shows as something`,
    );
  return { marginRate, disclaimer };
}

/**
 * A disclosure read from the clear column of a row written before it was sealed: {@link checkDccDisclosure}, and no
 * Luhn-valid run of 13 to 19 digits, however grouped (the rule those rows were written under: nothing that could be a
 * card number is returned from a clear column).
 */
function checkClearDccDisclosure(disclosure: StoredDccDisclosure): StoredDccDisclosure {
  const checked = checkDccDisclosure(disclosure);
  if (containsCardNumber(checked.disclaimer, { separators: 'any', knownNetworkOnly: false }))
    throw new JournalError('JOURNAL_INVALID', 'dcc disclosure: the disclaimer holds a card number');
  return checked;
}

/** Longest tag set kept, in hex digits (a card-present tag set is a few hundred bytes; 4 KiB leaves room). */
const MAX_TAGS_HEX = 8192;

/**
 * Refuses terms that are not a converted payment's, and any key beyond the known ones (so that nothing else, card
 * data least of all, reaches the clear column). Returns a copy with only the known keys.
 */
export function checkDccTerms(terms: StoredDccTerms): StoredDccTerms {
  checkObject(terms, 'dcc terms');
  for (const key of Object.keys(terms))
    if (!DCC_KEYS.has(key)) throw new JournalError('JOURNAL_INVALID', `dcc terms: unknown field "${key}"`);
  if (terms.indicator !== '1')
    throw new JournalError(
      'JOURNAL_INVALID',
      'dcc terms are kept for converted payments only (indicator "1"); follow-ons of others carry none',
    );
  if (terms.family !== 'A' && terms.family !== 'B')
    throw new JournalError('JOURNAL_INVALID', 'dcc terms: family must be "A" or "B"');
  checkMinor(terms.localAmountMinor, 'dcc terms: localAmountMinor');
  checkCurrency(terms.localCurrency, 'dcc terms: localCurrency');
  checkMinor(terms.billingAmountMinor, 'dcc terms: billingAmountMinor');
  checkCurrency(terms.billingCurrency, 'dcc terms: billingCurrency');
  if (terms.billingCurrency === terms.localCurrency)
    throw new JournalError(
      'JOURNAL_INVALID',
      'dcc terms: a conversion has a billing currency other than the local one',
    );
  if (!isRateText(terms.exchangeRate))
    throw new JournalError('JOURNAL_INVALID', 'dcc terms: exchangeRate must be a decimal string');
  checkBoolean(terms.exchangeRateInverted, 'dcc terms: exchangeRateInverted');
  checkText(terms.exchangeRateTimeStamp, 'dcc terms: exchangeRateTimeStamp', 64);
  if (terms.offerId !== undefined) checkIdentifier(terms.offerId, 'dcc terms: offerId', 128);
  if (terms.reconciliationId !== undefined)
    checkIdentifier(terms.reconciliationId, 'dcc terms: reconciliationId', 128);
  return {
    indicator: '1',
    family: terms.family,
    localAmountMinor: terms.localAmountMinor,
    localCurrency: terms.localCurrency,
    billingAmountMinor: terms.billingAmountMinor,
    billingCurrency: terms.billingCurrency,
    exchangeRate: terms.exchangeRate,
    exchangeRateInverted: terms.exchangeRateInverted,
    exchangeRateTimeStamp: terms.exchangeRateTimeStamp,
    ...(terms.offerId !== undefined ? { offerId: terms.offerId } : {}),
    ...(terms.reconciliationId !== undefined ? { reconciliationId: terms.reconciliationId } : {}),
  };
}

/** Even-length hex, not empty, at most {@link MAX_TAGS_HEX} digits. */
export function checkTagsHex(tagsHex: string): void {
  if (
    typeof tagsHex !== 'string' ||
    tagsHex.length === 0 ||
    tagsHex.length > MAX_TAGS_HEX ||
    tagsHex.length % 2 !== 0 ||
    !/^[0-9A-Fa-f]+$/.test(tagsHex)
  )
    throw new JournalError(
      'JOURNAL_INVALID',
      `tags must be a non-empty even-length hex string of at most ${MAX_TAGS_HEX} digits`,
    );
}

/** Associated data of a sealed tag set: the row it belongs to, so that a ciphertext moved to another row fails. */
export function tagsContext(transactionId: string): string {
  return `authorization-tags:${transactionId}`;
}

/** Associated data of a sealed disclosure: its row, and what it is (a tag set of the row does not open as one). */
export function disclosureContext(transactionId: string): string {
  return `dcc-disclosure:${transactionId}`;
}

/** Seals a tag set for the row of `transactionId`. */
export function sealTags(key: Buffer, transactionId: string, tagsHex: string): Buffer {
  return seal(key, Buffer.from(tagsHex, 'utf8'), tagsContext(transactionId));
}

function checkKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES)
    throw new JournalError('JOURNAL_KEY', `the at-rest key must be ${KEY_BYTES} bytes`);
}

interface Row {
  transaction_id: string;
  tags_enc: Buffer | null;
  dcc_terms: string | null;
  dcc_disclosure: string | null;
  dcc_disclosure_enc: Buffer | null;
}

/** The statements of the authorization_data table; shared with the import of the former side file. */
export function authorizationDataStatements(connection: JournalConnection) {
  const db = connection.db;
  return {
    get: db.prepare<[string], Row>(
      `SELECT transaction_id, tags_enc, dcc_terms, dcc_disclosure, dcc_disclosure_enc FROM authorization_data
        WHERE transaction_id = ?`,
    ),
    putTags: db.prepare<{ tx: string; tags: Buffer; at: number }>(`INSERT INTO authorization_data
        (transaction_id, tags_enc, created_at, updated_at) VALUES (@tx, @tags, @at, @at)
      ON CONFLICT (transaction_id) DO UPDATE SET tags_enc = excluded.tags_enc, updated_at = excluded.updated_at`),
    putDcc: db.prepare<{ tx: string; terms: string; disclosure: Buffer | null; at: number }>(`INSERT INTO
        authorization_data (transaction_id, dcc_terms, dcc_disclosure, dcc_disclosure_enc, created_at, updated_at)
        VALUES (@tx, @terms, NULL, @disclosure, @at, @at)
      ON CONFLICT (transaction_id) DO UPDATE SET dcc_terms = excluded.dcc_terms, dcc_disclosure = NULL,
        dcc_disclosure_enc = excluded.dcc_disclosure_enc, updated_at = excluded.updated_at`),
    forget: db.prepare<[string]>('DELETE FROM authorization_data WHERE transaction_id = ?'),
  };
}

/**
 * What follow-ons must repeat of their original, per original payment's transactionId, in the journal database
 * (DESIGN.md, money safety rules 6 and 7; replaces the side file `authorization-tags.json`): the EMV tag set sent with
 * it (gateway.md §7: the capture of an EMV contact pre-authorization and the reversal of an original with EMV data
 * carry its tags), encrypted with AES-256-GCM under the at-rest key and bound to the row, the DCC terms of a
 * converted payment in clear, and the disclosure its receipts state encrypted as the tags are.
 *
 * Every method is synchronous; writes go through {@link JournalConnection.atomically}, so inside
 * `journal.atomically(true, () => …)` they commit with the journal outcome they belong to (e.g. the approved
 * authorization and its tags; the settled authorization and the wipe).
 */
export class AuthorizationDataStore {
  private readonly stmts: ReturnType<typeof authorizationDataStatements>;
  private readonly key: Buffer;

  /**
   * @param key the journal's AES-256 at-rest key (the host loads it from `offline.keyFile`); the same key must be
   *   given after a restart, otherwise reading stored tags throws `JOURNAL_DECRYPT`.
   */
  constructor(
    private readonly connection: JournalConnection,
    key: Buffer,
  ) {
    checkKey(key);
    this.key = Buffer.from(key);
    this.stmts = authorizationDataStatements(connection);
  }

  /** Keeps (replaces) the tag set sent with the authorization `transactionId`, durably. */
  putTags(transactionId: string, tagsHex: string): void {
    checkIdentifier(transactionId, 'transactionId');
    checkTagsHex(tagsHex);
    const sealed = sealTags(this.key, transactionId, tagsHex);
    this.connection.atomically(true, () =>
      this.stmts.putTags.run({ tx: transactionId, tags: sealed, at: this.connection.now().getTime() }),
    );
  }

  /** The tag set kept for `transactionId`, decrypted; undefined when none. `JOURNAL_DECRYPT` under another key. */
  tags(transactionId: string): string | undefined {
    checkIdentifier(transactionId, 'transactionId');
    const row = readOn(this.connection, () => this.stmts.get.get(transactionId));
    if (row === undefined || row.tags_enc === null) return undefined;
    return openSealed(this.key, row.tags_enc, tagsContext(transactionId)).toString('utf8');
  }

  /**
   * Keeps (replaces) the DCC terms of the converted payment `transactionId`, and what its receipts state beyond them
   * (`disclosure`; none: its receipts leave the conversion out), durably, in one statement. The disclosure is sealed
   * under the at-rest key: its disclaimer is kept as the gateway wrote it, whatever digits it holds.
   */
  putDccTerms(transactionId: string, terms: StoredDccTerms, disclosure?: StoredDccDisclosure): void {
    checkIdentifier(transactionId, 'transactionId');
    const json = JSON.stringify(checkDccTerms(terms));
    const shown =
      disclosure === undefined
        ? null
        : seal(
            this.key,
            Buffer.from(JSON.stringify(checkDccDisclosure(disclosure)), 'utf8'),
            disclosureContext(transactionId),
          );
    this.connection.atomically(true, () =>
      this.stmts.putDcc.run({
        tx: transactionId,
        terms: json,
        disclosure: shown,
        at: this.connection.now().getTime(),
      }),
    );
  }

  /**
   * What the receipts of the converted payment `transactionId` state beyond its terms; undefined when none is kept (not
   * converted, or kept before the disclosure was, or by the previous terminal). `JOURNAL_DECRYPT` under another key.
   */
  dccDisclosure(transactionId: string): StoredDccDisclosure | undefined {
    checkIdentifier(transactionId, 'transactionId');
    const row = readOn(this.connection, () => this.stmts.get.get(transactionId));
    if (row === undefined) return undefined;
    if (row.dcc_disclosure_enc !== null) {
      const json = openSealed(this.key, row.dcc_disclosure_enc, disclosureContext(transactionId)).toString(
        'utf8',
      );
      try {
        return checkDccDisclosure(JSON.parse(json) as StoredDccDisclosure);
      } catch (cause) {
        throw new JournalError('JOURNAL_IO', `the dcc disclosure of ${transactionId} is malformed`, {
          cause,
        });
      }
    }
    if (row.dcc_disclosure === null) return undefined;
    try {
      return checkClearDccDisclosure(JSON.parse(row.dcc_disclosure) as StoredDccDisclosure);
    } catch (cause) {
      throw new JournalError('JOURNAL_IO', `the dcc disclosure of ${transactionId} is malformed`, { cause });
    }
  }

  /** The DCC terms kept for `transactionId`; undefined when none. */
  dccTerms(transactionId: string): StoredDccTerms | undefined {
    checkIdentifier(transactionId, 'transactionId');
    const row = readOn(this.connection, () => this.stmts.get.get(transactionId));
    if (row === undefined || row.dcc_terms === null) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.dcc_terms);
    } catch (cause) {
      throw new JournalError('JOURNAL_IO', `the dcc terms of ${transactionId} are not JSON`, { cause });
    }
    try {
      return checkDccTerms(parsed as StoredDccTerms);
    } catch (cause) {
      throw new JournalError('JOURNAL_IO', `the dcc terms of ${transactionId} are malformed`, { cause });
    }
  }

  /**
   * Deletes the row of `transactionId` (tags and DCC terms), durably, once its authorization is settled and no
   * follow-on needs them (DESIGN.md, money safety rule 4: data kept for follow-ons is wiped when the authorization
   * completes). Returns whether a row existed.
   */
  forget(transactionId: string): boolean {
    checkIdentifier(transactionId, 'transactionId');
    return this.connection.atomically(true, () => this.stmts.forget.run(transactionId).changes === 1);
  }
}
