import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createPrinter,
  DEFAULT_PRINTER_OPTIONS,
  EscPosPrinter,
  getPrinterSimulator,
  PrinterError,
  receiptTextLines,
} from './index.js';
import { CONTRACT_RECEIPT, describePrinterContract } from './printer.contract.js';
import { PrinterSimulator } from './sim/printer-simulator.js';
import type { Transport } from '../transports/transport.js';
import { SimulatedPrinterTransport } from './sim/stream-transport.js';
import { statusAnswers } from './status.js';

// The contract against the ESC/POS driver over the in-memory stream to the simulator (printer kind `sim`).
describePrinterContract(
  'ESC/POS driver over the simulator (in-process stream)',
  () => {
    const printer = createPrinter({ ...DEFAULT_PRINTER_OPTIONS, kind: 'sim', statusTimeoutMs: 100 });
    if (!printer) throw new Error('no printer');
    const control = getPrinterSimulator(printer);
    return Promise.resolve({ printer, ...(control ? { control } : {}), widthChars: 42 });
  },
  true,
);

describePrinterContract(
  'ESC/POS driver over the simulator, 48 characters, windows-1252',
  () => {
    const printer = createPrinter({
      ...DEFAULT_PRINTER_OPTIONS,
      widthChars: 48,
      codepage: 'windows1252',
      statusTimeoutMs: 100,
    });
    if (!printer) throw new Error('no printer');
    const control = getPrinterSimulator(printer);
    return Promise.resolve({ printer, ...(control ? { control } : {}), widthChars: 48 });
  },
  true,
);

describe('createPrinter', () => {
  it('builds no printer for kind none', () => {
    expect(createPrinter({ ...DEFAULT_PRINTER_OPTIONS, kind: 'none' })).toBeNull();
  });

  it('refuses a serial printer without a path', () => {
    expect(() => createPrinter({ ...DEFAULT_PRINTER_OPTIONS, kind: 'serial' })).toThrow(
      expect.objectContaining({ code: 'PRINTER_UNAVAILABLE' }),
    );
  });

  it('rejects connect with PRINTER_UNAVAILABLE when the USB device file does not exist', async () => {
    const printer = createPrinter({
      ...DEFAULT_PRINTER_OPTIONS,
      kind: 'usb',
      usb: { path: '/nonexistent/lp9' },
    });
    await expect(printer?.connect()).rejects.toMatchObject({ code: 'PRINTER_UNAVAILABLE' });
    expect(printer?.status()).toBe('offline');
    expect(printer && getPrinterSimulator(printer)).toBeUndefined();
    await printer?.close();
  });

  it('reports a USB printer that never answers as offline, having written only status requests', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'printer-')), 'lp0');
    writeFileSync(path, '');
    const printer = createPrinter({
      ...DEFAULT_PRINTER_OPTIONS,
      kind: 'usb',
      usb: { path },
      statusTimeoutMs: 60,
    });
    await printer?.connect();
    expect(printer?.status()).toBe('offline');
    await expect(printer?.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_OFFLINE' });
    await printer?.close();
    // DLE EOT 1 (connect), DLE EOT 1 (print's check): nothing else was sent to a printer that did not answer.
    expect([...readFileSync(path)]).toEqual([0x10, 0x04, 0x01, 0x10, 0x04, 0x01]);
  });
});

describe('EscPosPrinter', () => {
  it('prints the next job and reports it whole after a job cut short by a paper end was lost with the printer switched off', async () => {
    const sim = new PrinterSimulator();
    // A job's end is bounded (printTimeoutMs) so that a job whose end marker is never matched fails rather than hangs.
    const printer = new EscPosPrinter(new SimulatedPrinterTransport(sim), {
      widthChars: 42,
      codepage: 'cp858',
      statusTimeoutMs: 100,
      printTimeoutMs: 2_000,
      printPollMs: 20,
    });
    await printer.connect();
    sim.runOutOfPaperAfter(2);
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_PAPER_OUT' });
    // Switched off, paper loaded, switched on, the serial cable in place: the rest of that job, and its end marker,
    // are gone. The next receipt's end marker answers for the next receipt.
    sim.powerCycle();
    sim.setPaper('ok');
    const printed = sim.nextReceipt();
    await expect(printer.print(CONTRACT_RECEIPT)).resolves.toBeUndefined();
    expect((await printed).lines).toEqual(receiptTextLines(CONTRACT_RECEIPT, 42));
    await printer.close();
  });
  it('closes a connection it gives up on, so that an exclusive device (usblp, a locked serial port) opens again', async () => {
    // A device file that allows one open at a time, as the usblp driver does (EBUSY), and that takes no receipt bytes
    // while `stalled` (the printer's buffer full: the write gives up after its timeout, the connection still open).
    let openConnections = 0;
    let stalled = true;
    const transport: Transport = {
      description: 'exclusive device file',
      open: (events) => {
        if (openConnections > 0) return Promise.reject(new Error('EBUSY: device or resource busy'));
        openConnections += 1;
        let open = true;
        return Promise.resolve({
          write: (bytes) => {
            if (!open) return Promise.reject(new PrinterError('PRINTER_OFFLINE', 'not open'));
            if (bytes[0] === 0x10 && bytes[1] === 0x04) {
              queueMicrotask(() => events.data(Uint8Array.of(0x12)));
              return Promise.resolve();
            }
            if (stalled)
              return Promise.reject(new PrinterError('PRINTER_OFFLINE', 'took no data for 10000 ms'));
            if (bytes[0] === 0x1d && bytes[1] === 0x72)
              queueMicrotask(() => events.data(Uint8Array.of(0x00)));
            return Promise.resolve();
          },
          close: () => {
            if (open) openConnections -= 1;
            open = false;
            return Promise.resolve();
          },
        });
      },
    };
    const printer = new EscPosPrinter(transport, {
      widthChars: 42,
      codepage: 'cp858',
      statusTimeoutMs: 100,
      printPollMs: 20,
    });
    await printer.connect();
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_OFFLINE' });
    stalled = false;
    expect(await printer.refreshStatus()).toBe('ready');
    await expect(printer.print(CONTRACT_RECEIPT)).resolves.toBeUndefined();
    await printer.close();
    expect(openConnections).toBe(0);
  });
  it("closes within a status request's time when the device never finishes closing: the terminal's stop waits for it", async () => {
    // A USB printer pulled out mid-write, or a network printer whose socket never ends: its close never settles.
    const transport: Transport = {
      description: 'printer whose close hangs',
      open: (events) =>
        Promise.resolve({
          write: (bytes) => {
            if (bytes[0] === 0x10 && bytes[1] === 0x04)
              queueMicrotask(() => events.data(Uint8Array.of(0x12)));
            return Promise.resolve();
          },
          close: () => new Promise<void>(() => undefined),
        }),
    };
    const printer = new EscPosPrinter(transport, { widthChars: 42, codepage: 'cp858', statusTimeoutMs: 50 });
    await printer.connect();
    const closed = await Promise.race([
      printer.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still closing'), 2_000)),
    ]);
    expect(closed).toBe('closed');
    expect(printer.status()).toBe('offline');
  });
  it('takes no automatic status back for the end of a job: a paper end during it fails the job', async () => {
    // A printer with automatic status back (ASB) enabled by its memory switches sends four status bytes on each change
    // of state. Its 2nd to 4th bytes have the fixed bits of a GS r answer (0**0****): the 3rd says "paper end" (0x0C)
    // exactly as GS r 1 would. The printer here stops at a paper end in the middle of the receipt.
    let paperOut = false;
    const transport: Transport = {
      description: 'printer with ASB',
      open: (events) =>
        Promise.resolve({
          write: (bytes) => {
            if (bytes[0] === 0x10 && bytes[1] === 0x04) {
              const a = statusAnswers({ coverOpen: false, paper: paperOut ? 'out' : 'ok' });
              const n = bytes[2];
              queueMicrotask(() =>
                events.data(Uint8Array.of(n === 1 ? a.printer : n === 2 ? a.offlineCause : a.paperSensor)),
              );
            } else if (!paperOut) {
              // Half the receipt printed, then the roll ends: offline, paper end (ASB bytes 1 to 4). The rest of the
              // job, its GS r 1 with it, waits in the buffer for paper.
              paperOut = true;
              queueMicrotask(() => events.data(Uint8Array.of(0x18, 0x00, 0x0c, 0x00)));
            }
            return Promise.resolve();
          },
          close: () => Promise.resolve(),
        }),
    };
    const printer = new EscPosPrinter(transport, {
      widthChars: 42,
      codepage: 'cp858',
      statusTimeoutMs: 100,
      printTimeoutMs: 2_000,
      printPollMs: 20,
    });
    await printer.connect();
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_PAPER_OUT' });
    await printer.close();
  });
  it('fails a print with PRINTER_PROTOCOL when the printer answers status requests with bytes that are no answer', async () => {
    // A printer at another baud rate (or not an ESC/POS printer) answers, but garbled: offline, and the operator is
    // told it is a protocol problem rather than a printer switched off.
    const written: number[] = [];
    const transport: Transport = {
      description: 'garbled printer',
      open: (events) =>
        Promise.resolve({
          write: (bytes) => {
            written.push(...bytes);
            queueMicrotask(() => events.data(Uint8Array.of(0xff, 0x00, 0x80)));
            return Promise.resolve();
          },
          close: () => Promise.resolve(),
        }),
    };
    const printer = new EscPosPrinter(transport, { widthChars: 42, codepage: 'cp858', statusTimeoutMs: 60 });
    await printer.connect();
    expect(printer.status()).toBe('offline');
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
      code: 'PRINTER_PROTOCOL',
      sent: false,
    });
    // Nothing but status requests was sent.
    expect(written).toEqual([0x10, 0x04, 0x01, 0x10, 0x04, 0x01]);
    await printer.close();
  });

  it('fails a print with PRINTER_OFFLINE, not PRINTER_PROTOCOL, once a printer that answered garbled is gone', async () => {
    let present = true;
    const transport: Transport = {
      description: 'garbled printer, then unplugged',
      open: (events) =>
        present
          ? Promise.resolve({
              write: () => {
                queueMicrotask(() => events.data(Uint8Array.of(0xff)));
                return Promise.resolve();
              },
              close: () => Promise.resolve(),
            })
          : Promise.reject(new Error('ENOENT: no such file or directory')),
    };
    const printer = new EscPosPrinter(transport, { widthChars: 42, codepage: 'cp858', statusTimeoutMs: 60 });
    await printer.connect();
    // Unplugged: the connection ends, and the device file is gone.
    present = false;
    await printer.close();
    await printer.connect().catch(() => undefined);
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_OFFLINE' });
    await printer.close();
  });
  it("takes no end of a job given up for the next job's: that job fails when the paper runs out during it", async () => {
    // A printer that stopped in the middle of a job (cover opened) holds the rest of it, its GS r 1 with it, and prints
    // it once the cover is closed: that answer comes while the next job waits for its own.
    let cover: 'open' | 'closed' = 'closed';
    let paper: 'ok' | 'out' = 'ok';
    let jobs = 0;
    const transport: Transport = {
      description: 'printer holding a job',
      open: (events) =>
        Promise.resolve({
          write: (bytes) => {
            if (bytes[0] === 0x10 && bytes[1] === 0x04) {
              const a = statusAnswers({ coverOpen: cover === 'open', paper });
              const n = bytes[2];
              queueMicrotask(() =>
                events.data(Uint8Array.of(n === 1 ? a.printer : n === 2 ? a.offlineCause : a.paperSensor)),
              );
            } else if (bytes[0] === 0x1b && bytes[1] === 0x40) {
              jobs += 1;
              // The first job: the cover is opened in the middle of it. The second: the first job's rest prints and
              // its end marker is answered, then the roll ends in the middle of the second.
              if (jobs === 1) cover = 'open';
              else {
                queueMicrotask(() => events.data(Uint8Array.of(0x00)));
                paper = 'out';
              }
            }
            return Promise.resolve();
          },
          close: () => Promise.resolve(),
        }),
    };
    const printer = new EscPosPrinter(transport, {
      widthChars: 42,
      codepage: 'cp858',
      statusTimeoutMs: 100,
      printTimeoutMs: 5_000,
      printPollMs: 20,
    });
    await printer.connect();
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
      code: 'PRINTER_COVER_OPEN',
      sent: true,
    });
    cover = 'closed';
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({
      code: 'PRINTER_PAPER_OUT',
      sent: true,
    });
    await printer.close();
  });
  it('asks for the status again when the connection it gave up on never finishes closing', async () => {
    let opens = 0;
    const transport: Transport = {
      description: 'device whose close never ends',
      open: (events) => {
        opens += 1;
        return Promise.resolve({
          write: (bytes) => {
            if (bytes[0] === 0x10 && bytes[1] === 0x04) {
              queueMicrotask(() => events.data(Uint8Array.of(0x12)));
              return Promise.resolve();
            }
            return Promise.reject(new PrinterError('PRINTER_OFFLINE', 'took no data'));
          },
          close: () => new Promise<void>(() => undefined),
        });
      },
    };
    const printer = new EscPosPrinter(transport, { widthChars: 42, codepage: 'cp858', statusTimeoutMs: 50 });
    await printer.connect();
    await expect(printer.print(CONTRACT_RECEIPT)).rejects.toMatchObject({ code: 'PRINTER_OFFLINE' });
    expect(await printer.refreshStatus()).toBe('ready');
    expect(opens).toBe(2);
  });
});

describe('PrinterSimulator', () => {
  it('holds a job while out of paper and prints it once paper is loaded', () => {
    const sim = new PrinterSimulator();
    const endpoint = sim.attach({ send: () => undefined, unplugged: () => undefined });
    sim.setPaper('out');
    endpoint.deliver(new TextEncoder().encode('held\n'));
    endpoint.deliver(Uint8Array.of(0x1d, 0x56, 0x01));
    expect(sim.receipts).toHaveLength(0);
    sim.setPaper('ok');
    expect(sim.receipts.map((r) => r.lines)).toEqual([['held']]);
  });

  it('answers status requests while it cannot print', () => {
    const sim = new PrinterSimulator();
    const answers: number[] = [];
    const endpoint = sim.attach({ send: (b) => answers.push(...b), unplugged: () => undefined });
    sim.setCover('open');
    endpoint.deliver(Uint8Array.of(0x41, 0x10, 0x04, 0x02));
    expect(answers).toEqual([0x16]);
  });

  it('records bytes it does not understand', () => {
    const sim = new PrinterSimulator();
    const endpoint = sim.attach({ send: () => undefined, unplugged: () => undefined });
    endpoint.deliver(Uint8Array.of(0x1b, 0x7e, 0x01));
    expect(sim.protocolErrors).not.toEqual([]);
  });

  it('refuses a second connection', () => {
    const sim = new PrinterSimulator();
    sim.attach({ send: () => undefined, unplugged: () => undefined });
    expect(() => sim.attach({ send: () => undefined, unplugged: () => undefined })).toThrow();
  });

  it('lays the contract receipt out within the width', () => {
    for (const line of receiptTextLines(CONTRACT_RECEIPT, 42)) expect(line.length).toBeLessThanOrEqual(42);
  });
});
