import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

function present(db: Database.Database): boolean {
  return db
    .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('authorization_data')")
    .all()
    .some((c) => c.name === 'dcc_disclosure_enc');
}

/**
 * `authorization_data.dcc_disclosure_enc`: the disclosure of a converted authorization (see {@link dccDisclosure} in
 * dcc-disclosure.ts: the margin and the gateway's disclaimer its receipts state) encrypted with AES-256-GCM under the
 * at-rest key and bound to its row, as the tag set is. The disclaimer is the gateway's text, printed without
 * modification (gateway.md §5); a date, time, phone number or reference in it can read as a Luhn-valid run of 13–19
 * digits, which a clear column must not hold (DESIGN.md, money safety rule 4), so it is kept sealed whatever digits it
 * holds instead of being refused (which left the conversion off every receipt after a restart). The store writes this
 * column and NULL in `dcc_disclosure`; rows written before keep their clear value there (checked when it was written,
 * and again when read).
 *
 * An added column the previous terminal never names: it reads `dcc_disclosure` only, NULL in rows written here, so
 * its receipts of those leave the conversion out with a warning, as for rows written before the disclosure was kept.
 */
export const dccDisclosureSealed: SchemaRewrite = {
  name: 'dcc-disclosure-sealed',
  needed: (db) => !present(db),
  apply(db) {
    db.exec('ALTER TABLE authorization_data ADD COLUMN dcc_disclosure_enc BLOB');
  },
};
