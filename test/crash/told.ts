import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the terminal told the people in front of it, as the crash driver saw it on the screen or in the operator
 * answer: the crash judge compares the gateway's ledger with this, never with the terminal's own journal alone.
 * The driver appends one JSON line per result the moment it is shown, so that a SIGKILL right after the screen still
 * leaves the record (an appended line is in the kernel's page cache before the next instruction runs).
 */
export type Told =
  | {
      who: 'customer';
      /** The result screen: `approved` (charged, or stored offline), `declined` or `error` (not charged). */
      screen: 'approved' | 'declined' | 'error';
      /** The amount on the result screen, in minor units. */
      amountMinor?: number;
      currency?: string;
      /**
       * Client transactionIds of the requests the terminal sent for this payment (from the journal at the moment of
       * the screen): the judge finds the charge among them. Empty when they could not be read.
       */
      transactionIds: string[];
      /**
       * An exit shown as paid by an earlier payment (the tap-and-go machine's reason): by the payment link of its fee
       * (`PAID_BY_LINK`), or by a capture already made (`ALREADY_PAID`). That payment stands at the gateway, and this
       * screen charges nothing of its own.
       */
      paidBefore?: 'PAID_BY_LINK' | 'ALREADY_PAID';
    }
  | {
      who: 'operator';
      action: 'refund' | 'void';
      /** The transactionId of the charge the operator acted on. */
      target: string;
      /** The outcome the operator was shown (`approved`, `declined`, `rejected`, `unknown`). */
      outcome: string;
      /** The follow-on's own transactionId, as the operator answer named it. */
      transactionId: string;
      /** The amount of the refund (or of the voided charge). */
      amountMinor?: number;
    };

export const TOLD_FILE = 'told.jsonl';

/** Appends one record to DIR/told.jsonl (synchronously: it must be written before the process can be killed). */
export function tell(dir: string, record: Told): void {
  appendFileSync(join(dir, TOLD_FILE), `${JSON.stringify(record)}\n`);
}

/** Every complete record of DIR/told.jsonl (a line cut short by a kill is not a record). */
export function readTold(dir: string): Told[] {
  const file = join(dir, TOLD_FILE);
  if (!existsSync(file)) return [];
  const out: Told[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as Told);
    } catch {
      // A torn last line: the record was not complete when the process died, so nobody saw it.
    }
  }
  return out;
}
