import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openJournal, type SqliteJournal } from './journal.js';
import { TicketPaymentStore, type TicketPayment } from './ticket-payments.js';

const now = (): Date => new Date(Date.parse('2030-01-01T08:00:00Z'));
const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

function open(path = ':memory:') {
  const journal = openJournal(path, { now });
  journals.push(journal);
  return { journal, tickets: new TicketPaymentStore(journal) };
}

const payment = (over: Partial<TicketPayment> = {}): TicketPayment => ({
  ticket: '2030010108000042',
  method: 'card',
  paymentRef: 'S-1',
  amountMinor: 600,
  currency: 'GBP',
  paidAtMs: 1_000,
  ...over,
});

describe('TicketPaymentStore', () => {
  it("records a ticket's payments once each, oldest first, and keeps them across a reopen", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'pt-tickets-')), 'journal.db');
    const first = open(path);
    first.tickets.record(payment());
    first.tickets.record(payment()); // the same outcome written again adds nothing
    first.tickets.record(payment({ paymentRef: 'S-2', amountMinor: 300, paidAtMs: 2_000 }));
    first.tickets.record(payment({ ticket: 'OTHER', paymentRef: 'S-3' }));
    first.journal.close();
    const { tickets } = open(path);
    expect(tickets.forTicket('2030010108000042')).toEqual([
      payment(),
      payment({ paymentRef: 'S-2', amountMinor: 300, paidAtMs: 2_000 }),
    ]);
    expect(tickets.forTicket('NEVER-PAID')).toEqual([]);
  });

  it('is written in the transaction of the outcome: rolled back with it', () => {
    const { journal, tickets } = open();
    expect(() =>
      journal.atomically(true, () => {
        tickets.record(payment());
        throw new Error('the outcome failed');
      }),
    ).toThrow();
    expect(tickets.forTicket('2030010108000042')).toEqual([]);
  });

  it('refuses what is not a ticket, a method or an amount', () => {
    const { tickets } = open();
    expect(() => tickets.record(payment({ ticket: 'not a ticket' }))).toThrow(/ticket/);
    expect(() => tickets.record(payment({ method: 'cash' as never }))).toThrow(/method/);
    expect(() => tickets.record(payment({ amountMinor: -1 }))).toThrow(/amountMinor/);
    expect(tickets.forTicket('not a ticket')).toEqual([]);
  });
});
