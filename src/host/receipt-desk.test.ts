import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createPrinter, getPrinterSimulator, PrinterError } from '../../devices/printer/index.js';
import { parseConfig } from '../config/index.js';
import type { ReceiptData } from '../flows/index.js';
import type { CardRead } from '../../devices/reader.js';
import { hexToBytes } from '../emv/index.js';
import {
  AuthorizationDataStore,
  JournaledSender,
  openJournal,
  type BeginEntry,
  type RecordedOutcome,
} from '../journal/index.js';
import { createLogger, silentLogger } from '../log/index.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { readPrintedReceipt } from '../../test/integration/printed-receipt.js';
import { findTransaction } from './operator-desk.js';
import {
  journaledReceiptFacts,
  journaledReceiptNotes,
  journaledReceipts,
  ReceiptDesk,
} from './receipt-desk.js';
import { RECEIPT_LABELS, receiptCardOf } from './receipts.js';

const SALE: ReceiptData = {
  service: 'sale',
  comments: 'Parking Sale',
  amountMinor: 600,
  currency: 'GBP',
  maskedPan: '476173******0119',
  transactionId: 'T01TESTRECEIPT',
  gatewayId: '7012345678901234567890',
  atMs: Date.parse('2026-11-24T10:00:00Z'),
  lines: [{ label: 'Ticket', value: '2026112408000001' }],
};

let desk: ReceiptDesk | undefined;
afterEach(async () => {
  await desk?.close();
  desk = undefined;
});

async function start(overrides: Record<string, unknown> = {}): Promise<ReceiptDesk> {
  desk = new ReceiptDesk(parseConfig({ printer: { kind: 'sim' }, ...overrides }), silentLogger());
  await desk.start();
  return desk;
}

const CARD_READ: CardRead = {
  entryMode: 'contactless',
  tlvs: [
    { tag: '4F', value: hexToBytes('A0000000031010') },
    { tag: '50', value: new TextEncoder().encode('VISA DEBIT') },
    { tag: '9F34', value: hexToBytes('1F0302') },
  ],
  maskedPan: '476173******0119',
  fallback: false,
  readerStatus: 'online-requested',
};

describe('ReceiptDesk', () => {
  it('prints the receipt of a payment with its QR, the card as its last four digits only', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const printed = sim.nextReceipt();
    const issued = d.issue(SALE);
    expect(issued.paper).toBe('printing');
    const paper = await printed;
    const text = paper.lines.join('\n');
    expect(text).toContain('0119');
    expect(text).not.toContain('476173');
    expect(text).toContain('T01TESTRECEIPT');
    expect(paper.qrCodes).toHaveLength(1);
    expect(d.summary()).toEqual({ kind: 'sim', status: 'ready' });
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
    // The screen's QR code carries what the printed one does.
    expect(d.issued(SALE.transactionId)?.qr?.payload).toBe(paper.qrCodes[0]);
  });

  it('tells the screen when the paper receipt could not be printed, and the e-receipt is still there', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    let changes = 0;
    d.onChange(() => (changes += 1));
    sim.setCover('open');
    d.issue(SALE, 'de_DE');
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('unavailable');
    await expect.poll(() => d.issued(SALE.transactionId)?.qr).toBeDefined();
    expect(d.issued(SALE.transactionId)?.document.locale).toBe('de_DE');
    expect(changes).toBeGreaterThanOrEqual(2);
  });

  it('prints nothing below receipts.noReceiptBelowMinor at an unattended terminal, and says so', async () => {
    const d = await start({ receipts: { noReceiptBelowMinor: 1_000 } });
    const sim = getPrinterSimulator(d.printer!)!;
    expect(d.issue(SALE).paper).toBe('not-offered');
    await expect.poll(() => d.issued(SALE.transactionId)?.qr).toBeDefined();
    expect(sim.receipts).toHaveLength(0);
  });

  it('reprints the receipt of the customer just served, not offered on paper for its amount, never the one before', async () => {
    const d = await start({ receipts: { noReceiptBelowMinor: 1_000 } });
    const sim = getPrinterSimulator(d.printer!)!;
    const before = { ...SALE, transactionId: 'T01BEFORE', amountMinor: 5_000 };
    expect(d.issue(before).paper).toBe('printing');
    await expect.poll(() => d.issued(before.transactionId)?.paper).toBe('printed');
    expect(d.issue(SALE).paper).toBe('not-offered');
    const again = sim.nextReceipt();
    await d.reprint();
    const copy = (await again).lines.join('\n');
    expect(copy).toContain(SALE.transactionId);
    expect(copy).not.toContain(before.transactionId);
    expect(copy).toContain('COPY');
  });

  it('reports paper out to the operator and loses nothing: the receipt can be printed again', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    sim.setPaper('out');
    d.issue(SALE);
    await expect.poll(() => d.summary().lastError ?? '').toContain('PRINTER_PAPER_OUT');
    expect(d.summary().status).toBe('paper-out');
    sim.setPaper('ok');
    const again = sim.nextReceipt();
    await d.reprint();
    const copy = (await again).lines.join('\n');
    expect(copy).toContain('T01TESTRECEIPT');
    // Printed again: marked as a copy, in the receipt's language.
    expect(copy).toContain('COPY');
    expect(d.summary().lastError).toBeUndefined();
  });

  it('polls the idle printer, so paper that ran out after the last receipt shows before the next customer', async () => {
    // Only the poll's interval is faked: the driver's status requests keep their real timeouts.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const d = await start({ printer: { kind: 'sim', statusPollSeconds: 20 } });
      const sim = getPrinterSimulator(d.printer!)!;
      let changes = 0;
      d.onChange(() => (changes += 1));
      const printed = sim.nextReceipt();
      d.issue(SALE);
      await printed;
      await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
      const before = changes;
      // The roll ends after the receipt was torn off: nothing is printing, nothing asks the printer.
      sim.setPaper('out');
      expect(d.summary().status).toBe('ready');
      vi.advanceTimersByTime(20_000);
      await expect.poll(() => d.summary().status).toBe('paper-out');
      // The host hears of it (status bar, operator status, fleet heartbeat), and the receipt's state is untouched.
      expect(changes).toBeGreaterThan(before);
      expect(d.issued(SALE.transactionId)?.paper).toBe('printed');
      // Refilled: the next poll says so.
      sim.setPaper('ok');
      vi.advanceTimersByTime(20_000);
      await expect.poll(() => d.summary().status).toBe('ready');
    } finally {
      vi.useRealTimers();
    }
  });

  it('clears the connection error of a printer missing at the start once the poll finds it back', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const config = parseConfig({ printer: { kind: 'sim', statusPollSeconds: 20 } });
      const printer = createPrinter(config.printer)!;
      // Unplugged at the start: the device cannot be opened.
      vi.spyOn(printer, 'connect').mockRejectedValueOnce(
        new PrinterError('PRINTER_UNAVAILABLE', 'cannot open /dev/usb/lp0: ENOENT'),
      );
      desk = new ReceiptDesk(config, silentLogger(), printer);
      const d = desk;
      await d.start();
      expect(d.summary().status).toBe('offline');
      expect(d.summary().lastError).toContain('ENOENT');
      // Plugged in between customers: the idle poll opens it and reads it ready, and no receipt has printed since.
      vi.advanceTimersByTime(20_000);
      await expect.poll(() => d.summary().status).toBe('ready');
      expect(d.summary()).toEqual({ kind: 'sim', status: 'ready' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves no status poll behind when closed while it was starting', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const d = new ReceiptDesk(parseConfig({ printer: { kind: 'sim' } }), silentLogger());
      const starting = d.start();
      await d.close();
      await starting;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never asks the printer for its status while a receipt prints: the receipt is not refused busy', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const d = await start({ printer: { kind: 'sim', statusPollSeconds: 20 } });
      const sim = getPrinterSimulator(d.printer!)!;
      const printed = sim.nextReceipt();
      d.issue(SALE);
      // The poll's time comes while the job is queued and printing.
      vi.advanceTimersByTime(20_000);
      await printed;
      await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
      expect(d.summary().lastError).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('marks a second paper receipt of one payment as a copy (a tap-and-go exit shown paid again)', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const first = sim.nextReceipt();
    d.issue(SALE);
    expect((await first).lines.join('\n')).not.toContain('COPY');
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
    const second = sim.nextReceipt();
    // The screen shows what prints: the copy.
    expect(d.issue(SALE).document.title).toBe('Parking - COPY');
    expect((await second).lines.join('\n')).toContain('COPY');
    // The operator's reprint of it is marked once.
    const third = sim.nextReceipt();
    await d.reprint();
    expect((await third).lines.filter((l) => l.includes('COPY'))).toEqual([
      expect.not.stringMatching(/COPY.*COPY/),
    ]);
  });

  it('marks the receipt issued again after one cut short by a paper end as a copy: its first part is on paper', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    sim.runOutOfPaperAfter(6);
    d.issue(SALE);
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('unavailable');
    expect(sim.pendingLines.join('\n')).not.toContain('COPY');
    // Paper loaded: the printer prints the rest of the job it held, and the customer holds that receipt whole.
    sim.setPaper('ok');
    expect(sim.receipts).toHaveLength(1);
    const second = sim.nextReceipt();
    expect(d.issue(SALE).document.title).toBe('Parking - COPY');
    expect((await second).lines.join('\n')).toContain('COPY');
  });

  it('issues the receipt again as the original when the printer refused it before printing any of it', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    sim.setCover('open');
    d.issue(SALE);
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('unavailable');
    sim.setCover('closed');
    const again = sim.nextReceipt();
    expect(d.issue(SALE).document.title).toBe('Parking');
    expect((await again).lines.join('\n')).not.toContain('COPY');
  });

  it('prints a receipt whose e-receipt link is too long for a QR code, without a code', async () => {
    const d = await start({ receipts: { eReceiptUrl: `https://receipts.example/${'r'.repeat(3_000)}` } });
    const sim = getPrinterSimulator(d.printer!)!;
    const printed = sim.nextReceipt();
    d.issue(SALE);
    const paper = await printed;
    expect(paper.lines.join('\n')).toContain('T01TESTRECEIPT');
    expect(paper.qrCodes).toEqual([]);
    await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
    expect(d.issued(SALE.transactionId)?.qr).toBeUndefined();
  });

  it('prints the pay-later slip with the link as text alone when its URL is too long for a QR code', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const slip = {
      linkId: 'L1',
      reference: '2026112408000001',
      amountMinor: 600,
      currency: 'GBP',
      expiresAtMs: SALE.atMs + 900_000,
      atMs: SALE.atMs,
    };
    const short = sim.nextReceipt();
    expect(await d.printLink({ ...slip, url: 'https://pay.example/L1' })).toBe(true);
    expect((await short).qrCodes).toEqual(['https://pay.example/L1']);
    const long = sim.nextReceipt();
    expect(await d.printLink({ ...slip, url: `https://pay.example/L1?pad=${'x'.repeat(4_000)}` })).toBe(true);
    const paper = await long;
    expect(paper.qrCodes).toEqual([]);
    expect(paper.lines.join('')).toContain('https://pay.example/L1?pad=');
  });

  it('issues the receipt of a sale journaled by an earlier process with its approval code and application', async () => {
    const j = openJournal(':memory:');
    const sender = new JournaledSender(j, {
      transmit: () =>
        Promise.resolve({
          kind: 'approved',
          gatewayId: SALE.gatewayId,
          status: 'AUTHORIZED',
          approvalCode: '831000',
        }),
    });
    await sender.send(
      {
        service: 'sale',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from('{}'),
        comments: SALE.comments,
        transactionId: SALE.transactionId,
        amountMinor: SALE.amountMinor,
        currency: SALE.currency,
        moneyMoving: true,
      },
      { card: receiptCardOf(CARD_READ) },
    );
    // The desk of a new process: nothing noted in memory.
    desk = new ReceiptDesk(parseConfig({}), silentLogger(), null, journaledReceiptFacts(j));
    const lines = desk.issue(SALE).document.fields;
    expect(lines).toEqual(
      expect.arrayContaining([
        { label: RECEIPT_LABELS.application, value: 'VISA DEBIT' },
        { label: RECEIPT_LABELS.aid, value: 'A0000000031010' },
        { label: RECEIPT_LABELS.entry, value: 'Contactless' },
        { label: RECEIPT_LABELS.approvalCode, value: '831000' },
      ]),
    );
    j.close();
  });

  it("states a converted sale's disclosure from the journal database, or none at all when it is not kept whole", () => {
    const j = openJournal(':memory:');
    const followOns = journalFollowOnStore(new AuthorizationDataStore(j, Buffer.alloc(32, 5)), 'A');
    const warnings: { transactionId?: string; msg: string }[] = [];
    const logger = createLogger({
      destination: { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string }) },
    });
    const offer = {
      offerId: 'offer-1',
      localAmountMinor: 600,
      localCurrency: 'GBP',
      billingAmountMinor: 799,
      billingCurrency: 'USD',
      exchangeRate: '1.331838',
      exchangeRateInverted: false,
      marginRate: '3.5',
      exchangeRateTimeStamp: '20261124080000',
      expiresAtUtc: '2026-11-24T08:10:00Z',
      disclaimer: 'I have chosen to pay in the card currency. The conversion is provided by the merchant.',
    };
    for (const tx of ['S1', 'S2']) {
      const e = j.begin({
        transactionId: tx,
        service: 'sale',
        comments: 'Parking Sale',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from('{}'),
        moneyMoving: true,
        amountMinor: 799,
        currency: 'USD',
      });
      j.recordOutcome(e.id, { state: 'approved', gatewayId: `G${tx}`, status: 'AUTHORIZED' });
    }
    followOns.putDcc('S1', { indicator: '1', offer });
    // Terms kept without the disclosure: by the previous terminal, or before the disclosure was kept.
    new AuthorizationDataStore(j, Buffer.alloc(32, 5)).putDccTerms('S2', {
      indicator: '1',
      family: 'A',
      localAmountMinor: 600,
      localCurrency: 'GBP',
      billingAmountMinor: 799,
      billingCurrency: 'USD',
      exchangeRate: '1.331838',
      exchangeRateInverted: false,
      exchangeRateTimeStamp: '2026-11-24T08:00:00Z',
    });
    desk = new ReceiptDesk(
      parseConfig({}),
      silentLogger(),
      null,
      journaledReceiptFacts(j, followOns, logger),
    );
    const { expiresAtUtc: _expiry, ...shown } = offer;
    expect(desk.facts.factsFor('S1').conversion).toEqual(shown);
    const converted = desk.issue({ ...SALE, transactionId: 'S1', lines: [] }).document;
    expect(converted.fields).toContainEqual({ label: RECEIPT_LABELS.disclaimer, value: offer.disclaimer });
    expect(converted.fields).toContainEqual({
      label: RECEIPT_LABELS.convertedAmount('USD'),
      value: 'US$7.99',
    });
    expect(warnings).toEqual([]);

    const withheld = desk.issue({ ...SALE, transactionId: 'S2', lines: [] }).document;
    expect(withheld.converted).toBe(false);
    const labels = withheld.fields.map((f) => f.label);
    for (const label of [RECEIPT_LABELS.rate, RECEIPT_LABELS.markup, RECEIPT_LABELS.disclaimer])
      expect(labels).not.toContain(label);
    desk.issue({ ...SALE, transactionId: 'S2', lines: [] });
    expect(warnings).toMatchObject([{ transactionId: 'S2', level: 40 }]);
    expect(warnings[0]?.msg).toContain('leave the currency conversion disclosure out');
    j.close();
  });

  describe('after a restart, the last receipt printed again from the journal', () => {
    const journal = openJournal(':memory:');
    afterAll(() => journal.close());
    function journaled(
      entry: Omit<BeginEntry, 'method' | 'path' | 'body' | 'moneyMoving'>,
      outcome: RecordedOutcome,
    ): void {
      const e = journal.begin({
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from('{}'),
        moneyMoving: true,
        ...entry,
      });
      journal.recordOutcome(e.id, outcome);
    }
    /** A desk of a process that has issued no receipt, printing on the simulator. */
    async function restarted(): Promise<{ d: ReceiptDesk; reprinted: () => Promise<Map<string, string>> }> {
      const config = parseConfig({ printer: { kind: 'sim' }, receipts: { noReceiptBelowMinor: 100 } });
      const find = (tx: string) =>
        findTransaction(journal, tx, {
          now: new Date(),
          timeZone: 'Europe/London',
          currency: 'GBP',
          authorizedTotal: () => undefined,
        });
      desk = new ReceiptDesk(
        config,
        silentLogger(),
        undefined,
        journaledReceiptFacts(journal),
        journaledReceipts(journal, find),
      );
      await desk.start();
      const d = desk;
      const sim = getPrinterSimulator(d.printer!)!;
      return {
        d,
        reprinted: async () => {
          const next = sim.nextReceipt();
          await d.reprint();
          return new Map(readPrintedReceipt((await next).lines).fields.map((f) => [f.label, f.value]));
        },
      };
    }
    const card = receiptCardOf(CARD_READ);

    it('has nothing to print before the journal holds a receipt', async () => {
      const { d } = await restarted();
      await expect(d.reprint()).rejects.toMatchObject({ code: 'PRINTER_UNAVAILABLE' });
    });

    it("prints a capture made after its card read was gone with its authorization's card and approval code", async () => {
      journaled(
        {
          transactionId: 'A1',
          service: 'preauth',
          comments: 'Parking Auth',
          amountMinor: 598,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        {
          state: 'approved',
          gatewayId: 'g-A1',
          status: 'AUTHORIZED',
          authorizedMinor: 598,
          approvalCode: '831000',
          card,
        },
      );
      journaled(
        {
          transactionId: 'C1',
          service: 'capture',
          comments: 'Parking Capture Less Than Auth',
          referencedTransactionId: 'A1',
          parentGatewayId: 'g-A1',
          amountMinor: 300,
          currency: 'GBP',
        },
        { state: 'approved', gatewayId: 'g-C1', status: 'PENDING', authorizedMinor: 300 },
      );
      const { reprinted } = await restarted();
      const fields = await reprinted();
      expect(
        Object.fromEntries(
          [...fields].filter(([label]) => label !== RECEIPT_LABELS.date && label !== RECEIPT_LABELS.time),
        ),
      ).toMatchObject({
        [RECEIPT_LABELS.type]: 'Payment',
        [RECEIPT_LABELS.amount]: '£3.00',
        [RECEIPT_LABELS.card]: '**** **** **** 0119',
        [RECEIPT_LABELS.application]: 'VISA DEBIT',
        [RECEIPT_LABELS.approvalCode]: '831000',
        [RECEIPT_LABELS.transaction]: 'C1',
        [RECEIPT_LABELS.reference]: 'g-C1',
      });
    });

    it("prints the newest receipt, not offered on paper for its small amount, rather than an older customer's", async () => {
      // Newer, and below the amount a receipt is offered for: its customer's receipt all the same.
      journaled(
        {
          transactionId: 'S1',
          service: 'sale',
          comments: 'Parking Sale',
          amountMinor: 50,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        { state: 'approved', gatewayId: 'g-S1', status: 'AUTHORIZED', approvalCode: '831001', card },
      );
      const { reprinted } = await restarted();
      const fields = await reprinted();
      expect(fields.get(RECEIPT_LABELS.transaction)).toBe('S1');
      expect(fields.get(RECEIPT_LABELS.amount)).toBe('£0.50');
    });

    it('prints a refund with its original and no card, and passes over a payment voided since', async () => {
      journaled(
        {
          transactionId: 'R1',
          service: 'refund-capture',
          comments: 'REFUND Capture',
          referencedTransactionId: 'C1',
          parentGatewayId: 'g-C1',
          amountMinor: 200,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        { state: 'approved', gatewayId: 'g-R1', status: 'PENDING', authorizedMinor: 200 },
      );
      journaled(
        {
          transactionId: 'S2',
          service: 'sale',
          comments: 'Parking Sale',
          amountMinor: 700,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        { state: 'approved', gatewayId: 'g-S2', status: 'AUTHORIZED', approvalCode: '831002', card },
      );
      journaled(
        {
          service: 'void-payment',
          comments: 'VOID Payment',
          referencedTransactionId: 'S2',
          parentGatewayId: 'g-S2',
          amountMinor: 700,
          currency: 'GBP',
        },
        { state: 'approved', gatewayId: 'g-V2', status: 'VOIDED' },
      );
      const { reprinted } = await restarted();
      const fields = await reprinted();
      expect(fields.get(RECEIPT_LABELS.transaction)).toBe('R1');
      expect(fields.get(RECEIPT_LABELS.amount)).toBe('£2.00');
      expect(fields.get('Original')).toBe('C1');
      expect(fields.has(RECEIPT_LABELS.card)).toBe(false);
    });

    it("prints what the first receipt said: the customer's language, the ticket and its stay, marked as a copy", async () => {
      journaled(
        {
          transactionId: 'S3',
          service: 'sale',
          comments: 'Parking Sale',
          amountMinor: 900,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        { state: 'approved', gatewayId: 'g-S3', status: 'AUTHORIZED', approvalCode: '831003', card },
      );
      const kiosk: ReceiptData = {
        ...SALE,
        amountMinor: 900,
        transactionId: 'S3',
        gatewayId: 'g-S3',
        lines: [
          { label: 'Ticket', value: '2026112408000003' },
          { label: 'Stay', value: '95 min' },
        ],
      };
      // The process that took the payment: its receipt in the customer's German, journaled as it was issued.
      const config = parseConfig({ printer: { kind: 'sim' }, receipts: { noReceiptBelowMinor: 100 } });
      const first = new ReceiptDesk(
        config,
        silentLogger(),
        undefined,
        journaledReceiptFacts(journal),
        () => [],
        journaledReceiptNotes(journal),
      );
      await first.start();
      const printed = getPrinterSimulator(first.printer!)!.nextReceipt();
      first.issue(kiosk, 'de_DE');
      const original = readPrintedReceipt((await printed).lines);
      await first.close();
      expect(original.fields).toContainEqual({ label: 'Parkdauer', value: '95 min' });

      const { d } = await restarted();
      const next = getPrinterSimulator(d.printer!)!.nextReceipt();
      await d.reprint();
      const copy = readPrintedReceipt((await next).lines);
      expect(copy.title).toBe(`${original.title} - KOPIE`);
      // Field for field, in German; its date and time are the answer's as the journal holds it.
      const dated = new Set(['Datum', 'Uhrzeit']);
      const undated = (fields: typeof original.fields) => fields.filter((f) => !dated.has(f.label));
      expect(copy.fields.map((f) => f.label)).toEqual(original.fields.map((f) => f.label));
      expect(undated(copy.fields)).toEqual(undated(original.fields));
      expect(undated(copy.fields)).toContainEqual({ label: 'Ticket', value: '2026112408000003' });
    });

    it('marks a receipt issued again after a restart as a copy when the journal notes one issued before', async () => {
      journaled(
        {
          transactionId: 'S4',
          service: 'sale',
          comments: 'Parking Sale',
          amountMinor: 800,
          currency: 'GBP',
          maskedPan: '476173******0119',
        },
        { state: 'approved', gatewayId: 'g-S4', status: 'AUTHORIZED', approvalCode: '831004', card },
      );
      const exit: ReceiptData = { ...SALE, amountMinor: 800, transactionId: 'S4', gatewayId: 'g-S4' };
      const config = parseConfig({ printer: { kind: 'sim' } });
      const desks = () =>
        new ReceiptDesk(
          config,
          silentLogger(),
          undefined,
          journaledReceiptFacts(journal),
          () => [],
          journaledReceiptNotes(journal),
        );
      // The process that took the payment printed its receipt.
      const first = desks();
      await first.start();
      const printed = getPrinterSimulator(first.printer!)!.nextReceipt();
      first.issue(exit);
      expect((await printed).lines.join('\n')).not.toContain('COPY');
      await first.close();
      // Restarted, the exit is shown paid again: the second paper receipt of the payment is a copy.
      desk = desks();
      await desk.start();
      const again = getPrinterSimulator(desk.printer!)!.nextReceipt();
      expect(desk.issue(exit).document.title).toBe('Parking - COPY');
      expect((await again).lines.join('\n')).toContain('COPY');
      // A receipt of no journal entry (a payment link's) is no copy for it.
      expect(desk.issue({ ...exit, transactionId: 'LINK1' }).document.title).toBe('Parking');
    });

    it("prints the receipt issued in this process rather than the journal's", async () => {
      const { d, reprinted } = await restarted();
      d.issue(SALE);
      await expect.poll(() => d.issued(SALE.transactionId)?.paper).toBe('printed');
      expect((await reprinted()).get(RECEIPT_LABELS.transaction)).toBe(SALE.transactionId);
    });
  });

  it('refuses a merchant name the printer cannot print, rather than print it as "?"', () => {
    const greek = parseConfig({
      printer: { kind: 'sim', codepage: 'cp858' },
      receipts: { merchantName: 'Καφέ Parking' },
    });
    expect(() => new ReceiptDesk(greek, silentLogger())).toThrowError(
      expect.objectContaining({
        name: 'ConfigError',
        code: 'CONFIG_INVALID',
        key: 'receipts.merchantName',
        message: expect.stringContaining('"Κ" (U+039A)') as string,
      }) as Error,
    );
    // Without a printer nothing prints it: the screen shows it as it is.
    desk = new ReceiptDesk({ ...greek, printer: { ...greek.printer, kind: 'none' } }, silentLogger());
    expect(desk.issue(SALE).document.title).toBe('Καφέ Parking');
  });

  it("prints the test receipt in the terminal's language, or in en_GB when the printer cannot print that", async () => {
    const d = await start({ terminal: { locale: 'de_DE' } });
    const test = getPrinterSimulator(d.printer!)!.nextReceipt();
    await d.testPrint();
    const text = (await test).lines.join('\n');
    expect(text).toContain('Testbeleg');
    expect(text).toContain('Drucker');
    await d.close();
    desk = await start({ terminal: { locale: 'ar_AE' } });
    const arabic = getPrinterSimulator(desk.printer!)!.nextReceipt();
    await desk.testPrint();
    expect((await arabic).lines.join('\n')).toContain('Test receipt');
  });

  it('prints a test receipt, and works without a printer', async () => {
    const d = await start();
    const sim = getPrinterSimulator(d.printer!)!;
    const test = sim.nextReceipt();
    await d.testPrint();
    expect((await test).lines.join('\n')).toContain('Test receipt');
    await d.close();
    desk = await start({ printer: { kind: 'none' } });
    expect(desk.summary()).toEqual({ kind: 'none', status: 'none' });
    expect(desk.issue(SALE).paper).toBe('none');
    await expect(desk.testPrint()).rejects.toMatchObject({ code: 'PRINTER_UNAVAILABLE' });
  });
});
