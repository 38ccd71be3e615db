import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

function present(db: Database.Database): boolean {
  return db
    .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('authorization_data')")
    .all()
    .some((c) => c.name === 'dcc_disclosure');
}

/**
 * `authorization_data.dcc_disclosure`: what the receipts of a converted authorization state beyond the terms its
 * follow-ons repeat (`dcc_terms`) — the offer's margin over the wholesale rate and the gateway's disclaimer, as the
 * customer was shown them (kiosk.md §1; gateway.md §5: the disclaimer is printed without modification) — so that a
 * receipt of one of its transactions issued after a restart (its refund, its capture, the operator's reprint) states
 * the disclosure of the first. JSON in clear (`{"marginRate", "disclaimer"}`), which refused a disclaimer holding a
 * card number; since dcc-disclosure-sealed.ts the store writes NULL here and the disclosure sealed in a column of its
 * own, and reads this one for rows written before. Written with the terms, in their one statement; deleted with the
 * row.
 *
 * A column apart rather than keys of `dcc_terms`: the previous terminal refuses terms with a key it does not know (so
 * that nothing else reaches that clear column), and would then fail the capture or refund of a converted payment. It
 * names its columns when it reads and writes this table, so it never sees this one: the file keeps its version and that
 * terminal still opens it. NULL in rows written before (and by that terminal): their receipts leave the disclosure out.
 * A plain column without a CHECK (one would be evaluated by every write of a tag set): the store checks each value
 * before it writes it.
 */
export const dccDisclosure: SchemaRewrite = {
  name: 'dcc-disclosure',
  needed: (db) => !present(db),
  apply(db) {
    db.exec('ALTER TABLE authorization_data ADD COLUMN dcc_disclosure TEXT');
  },
};
