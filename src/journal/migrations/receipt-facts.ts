import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/** The columns {@link receiptFacts} adds to `journal_entries`, each NULL unless written with an outcome. */
export const RECEIPT_FACT_COLUMNS: readonly string[] = [
  'approval_code',
  'card_entry_mode',
  'card_aid',
  'card_label',
  'card_cvm_results',
];

function missing(db: Database.Database): string[] {
  const present = new Set(
    db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('journal_entries')")
      .all()
      .map((c) => c.name),
  );
  return RECEIPT_FACT_COLUMNS.filter((c) => !present.has(c));
}

/**
 * What a receipt states of an approval that only its answer and the card read told the terminal, journaled with the
 * outcome (in the outcome's one UPDATE: no statement and no commit of its own), so that a receipt issued again after a
 * restart — a tap-and-go exit shown paid again, the capture of an authorization made before it — states what the first
 * one did:
 *
 * - `approval_code`: the issuer's approval code of the answer (`processorInformation.approvalCode`);
 * - `card_entry_mode`, `card_aid`, `card_label`, `card_cvm_results`: the receipt's view of the card the request was
 *   made with: how it was read, its application (AID, tag 4F or 84, and label, tag 50) and its CVM results (9F34), from
 *   which the receipt words the cardholder verification. None of them is card data: they name the card's product and
 *   what the terminal did, never the card (DESIGN.md rule 4; the PAN stays masked, in `masked_pan`).
 *
 * NULL in every row written before, and in the rows of requests made without a card read or answered without a code:
 * the receipt leaves the line out then, as it did. Plain columns without CHECKs (a CHECK is evaluated by every outcome
 * of the money path): the journal checks each value before it writes it.
 *
 * Added columns that the previous terminal never names: it reads its rows with `SELECT *` (a column it does not know
 * is ignored) and writes them by named columns (the new ones stay NULL), so the file keeps its version and that
 * terminal still opens it (an update that fails its trial is rolled back to it).
 */
export const receiptFacts: SchemaRewrite = {
  name: 'receipt-facts',
  needed: (db) => missing(db).length > 0,
  apply(db) {
    for (const column of missing(db)) db.exec(`ALTER TABLE journal_entries ADD COLUMN ${column} TEXT`);
  },
};
