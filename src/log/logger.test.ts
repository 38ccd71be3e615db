import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containsCardNumber } from '../emv/index.js';
import { createLogger, type Logger } from './logger.js';
import { redactCardNumbers, redactString, redactValue } from './redact.js';

const TEST_PANS = [
  '4111111111111111',
  '5555555555554444',
  '2222420000001113',
  '4761739001010119',
  '6279257749132343',
];

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { lines, stream };
}

describe('log redaction', () => {
  it('removes every PAN, track and EMV card tag from a logged full card read', async () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream, level: 'trace' });
    const cardRead = {
      entryMode: 'contact',
      maskedPan: '476173******0119',
      track1: '%B4761739001010119^VISA ACQUIRER TEST/CARD 01^22122011758928889?',
      track2: ';4761739001010119=22122011758928889?',
      tlvs: [
        { tag: '5A', value: '4761739001010119' },
        { tag: '57', value: '4761739001010119D22122011758928889' },
        { tag: '9F02', value: '000000001250' },
      ],
      raw: '5A0847617390010101195713476173900101011 9D22122011758928889'.replace(' ', ''),
      frameHex:
        '56695600' + Buffer.from('B6279257749132343^TEST CARD/VIVOTECH^10128130072104350000').toString('hex'),
    };
    log.info({ cardRead }, 'card read');
    log.debug(`card data ${TEST_PANS.join(' ')} and track ;5555555555554444=25121011234?`);
    log.warn({ err: new Error('declined for 2222420000001113') }, 'failure');
    log.error({ request: { paymentInformation: { card: { number: '4111 1111 1111 1111' } } } }, 'request');
    log.info('track2 no sentinels 6279257749132343=10128130072104350000');
    log.info('tag57 form 4761739001010119D22122011758928889F');
    await new Promise((r) => setImmediate(r));
    const out = lines.join('');
    expect(lines.length).toBe(6);
    for (const pan of TEST_PANS) expect(out).not.toContain(pan);
    expect(out).not.toContain('4111 1111 1111 1111');
    expect(out).not.toContain('22122011758928889');
    expect(out).toContain('476173******0119');
    expect(out).toContain('card read');
  });

  it('leaves ordinary numbers, amounts and ids alone', () => {
    expect(redactString('amount 12.50 EUR, transaction 20261122020500')).toBe(
      'amount 12.50 EUR, transaction 20261122020500',
    );
    expect(redactString('id 08c94330-f618-42a3-b09d-e1e43be5efda')).toBe(
      'id 08c94330-f618-42a3-b09d-e1e43be5efda',
    );
    for (const text of [
      'amounts 4.50, 12.00, 3.20, 5.00, 1.10 GBP',
      'at 2026-11-24T10:15:30.123Z',
      'at 2026-11-22 02:05:00', // its 14 digits pass Luhn
      'at 1764000000123 (epoch ms)',
      'ulid 01JD5Z8C4M3Q7R9T1V2W3X4Y5Z',
      'link 202611241305N0005 at http://127.0.0.1:41234/pay/202611241305N0005',
      'call +44 20 7946 0958 or +1 (555) 010-0199 or +49 170 1234 5678',
      'masked 476173******0119, version 20.19.0, counts 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12',
      'ｆｕｌｌ-ｗｉｄｔｈ text and ﬁ ligature, left as written',
    ])
      expect(redactString(text), text).toBe(text);
  });

  it('keeps a digit run longer than any card number (a 22-digit gateway id) and removes a PAN joined to it', () => {
    const id = '7412345678901234567890';
    for (const text of [`transaction ${id}`, `ids ${id},${id}`, `payment ${id} captured`])
      expect(redactString(text), text).toBe(text);
    expect(redactString(`${id} 4111 1111 1111 1111`)).toBe(`${id} [REDACTED]`);
    expect(redactString(`${id}-5555.5555.5555.4444`)).toBe(`${id}-[REDACTED]`);
    // Hex of EMV card tags holds letters (tags 5A and 57), so it is still removed whole.
    expect(redactString('tags 5A0847617390010101195F3401019F02060000000012')).toBe('tags [REDACTED]');
  });

  // Text an operator types, e.g. the fleet's out-of-service notice, carried by the heartbeat (src/fleet/link.ts). The
  // terminal's own reading of card numbers in free text (containsCardNumber, separators 'any', after NFKC) calls each
  // of these a card number; the redaction used to know only single spaces and dashes.
  it.each([
    'works on the barrier, call 4111.1111.1111.1111',
    'works on the barrier, call 4111/1111/1111/1111',
    'works on the barrier, call 4111  1111  1111  1111',
    'works on the barrier, call 4111 / 1111 / 1111 / 1111',
    'works on the barrier, call ４１１１１１１１１１１１１１１１',
    'works on the barrier, call ４１１１．１１１１．１１１１．１１１１',
  ])('removes a card number written with other separators or full-width digits: %s', (notice) => {
    expect(containsCardNumber(notice.normalize('NFKC'), { separators: 'any' })).toBe(true);
    const published = JSON.stringify(redactValue({ inService: false, outOfService: notice }));
    expect(published).not.toMatch(/4111|４１１１/);
    expect(published).toContain('works on the barrier, call [REDACTED]');
  });

  it('keeps a UUID whole, though its digit groups read as a card number, and still removes a card number beside it', () => {
    // Random UUIDs (fleet command ids) of which about one in 400 lost a part to the card-number rule.
    for (const id of [
      '0ed27026-6790-4560-99df-b05353501037',
      '05388344-6221-4597-a91d-2251fec88cc8',
      '37ebab00-c3f5-4855-9359-07041befe1ae',
    ]) {
      expect(redactString(id)).toBe(id);
      expect(redactCardNumbers(`command ${id} refused`)).toBe(`command ${id} refused`);
      expect(redactString(`command ${id} card 4111 1111 1111 1111`)).toBe(`command ${id} card [REDACTED]`);
    }
    // Not a UUID (no version digit): read as any text.
    expect(redactString('27026-6790-4560-99')).not.toContain('6790');
  });

  it('still removes a Luhn-valid run of a network the card table does not know (Mir), spaced or not', () => {
    for (const pan of ['2200000000000004', '2200 0000 0000 0004'])
      expect(redactString(`card ${pan} read`)).toBe('card [REDACTED] read');
  });
});

describe('a typed error in the log', () => {
  /** The journal's error as src/journal/errors.ts makes it (src/log imports nothing of the journal). */
  class JournalError extends Error {
    override readonly name = 'JournalError';
    constructor(
      readonly code: string,
      message: string,
      options?: { cause?: unknown },
    ) {
      super(message, options);
    }
  }
  const eio = (): Error => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

  it('is one line of its type, code and message and its cause’s, with no stack trace', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    const error = new JournalError('JOURNAL_IO', 'the journal could not sync its log to disk', {
      cause: eio(),
    });
    log.error({ err: error }, 'journal log sync failed');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line.err).toEqual({
      type: 'JournalError',
      code: 'JOURNAL_IO',
      message: 'the journal could not sync its log to disk',
      cause: { type: 'Error', code: 'EIO', message: 'EIO: i/o error, fdatasync' },
    });
    expect(lines[0]).not.toMatch(/\bat .*\.ts:\d+|\\n\s+at /);
  });

  it('keeps the stack of an error without a code: a fault in the code, not a failure it expects', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    log.error({ err: new TypeError('x is undefined') }, 'parking machine failed');
    const line = JSON.parse(lines[0] ?? '{}') as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({ type: 'TypeError', message: 'x is undefined' });
    expect(String(line.err.stack)).toContain('x is undefined');
  });
});

describe('a log file (log.file)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pt-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  type FileStream = { flushSync(): void; flush(cb: (err?: Error) => void): void };
  const streamOf = (log: Logger): FileStream => {
    const stream = (log as unknown as Record<symbol, FileStream | undefined>)[pino.symbols.streamSym];
    if (stream === undefined) throw new Error('the logger has no stream');
    return stream;
  };
  /** What pino's exit hook does with a file destination: writes what is pending, synchronously, as the process ends. */
  const flushAsAtExit = (log: Logger): void => streamOf(log).flushSync();
  const written = (log: Logger): Promise<void> =>
    new Promise((done, fail) => streamOf(log).flush((err) => (err ? fail(err) : done())));
  const linesOf = (file: string): Record<string, unknown>[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('is created with its directory and written from the first line', async () => {
    const file = join(dir, 'var', 'terminal.log');
    const log = createLogger({ destination: file });
    log.info('started');
    flushAsAtExit(log);
    await written(log);
    expect(linesOf(file)).toEqual([expect.objectContaining({ level: 30, msg: 'started' })]);
  });

  it('that cannot be opened is replaced by standard error, which says so: no line lost, no throw at exit', async () => {
    // Standard error, as a file: a stream of the kind pino writes to descriptor 2 with.
    const stderr = join(dir, 'stderr');
    const log = createLogger({
      destination: '/proc/nope/terminal.log',
      standardError: pino.destination({ dest: stderr, sync: true }),
    });
    log.info('started');
    expect(() => flushAsAtExit(log)).not.toThrow();
    await written(log);
    expect(linesOf(stderr)).toEqual([
      expect.objectContaining({
        level: 40,
        file: '/proc/nope/terminal.log',
        err: expect.objectContaining({ code: 'ENOENT' }) as unknown,
        msg: 'log.file /proc/nope/terminal.log cannot be opened (ENOENT): logging to standard error instead',
      }),
      expect.objectContaining({ level: 30, msg: 'started' }),
    ]);
  });

  // A FIFO as log.file (a log shipper's): opened for writing, it waits for a reader — and the start with it, before
  // its first line, deaf to SIGTERM (the blocking open is restarted after the signal).
  it.runIf(process.platform !== 'win32')(
    'that is a FIFO nobody reads yet does not hold the start: standard error instead, at once',
    async () => {
      const fifo = join(dir, 'terminal.log');
      execFileSync('mkfifo', [fifo]);
      // Its reader comes only later.
      const late = spawn('sh', ['-c', `sleep 3; exec cat '${fifo}' > /dev/null`], { stdio: 'ignore' });
      try {
        const stderr = join(dir, 'stderr');
        const began = Date.now();
        const log = createLogger({
          destination: fifo,
          standardError: pino.destination({ dest: stderr, sync: true }),
        });
        expect(Date.now() - began).toBeLessThan(1_000);
        log.info('started');
        await written(log);
        expect(linesOf(stderr)).toEqual([
          expect.objectContaining({
            level: 40,
            file: fifo,
            msg: `log.file ${fifo} cannot be opened (ENXIO): logging to standard error instead`,
          }),
          expect.objectContaining({ level: 30, msg: 'started' }),
        ]);
      } finally {
        late.kill('SIGKILL');
      }
    },
  );

  it.runIf(process.platform !== 'win32')('that is a FIFO with its reader gets the lines', async () => {
    const fifo = join(dir, 'terminal.log');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const log = createLogger({ destination: fifo });
      log.info('started');
      // Written in the background: read once it has arrived.
      const buf = Buffer.alloc(4096);
      let n = 0;
      for (let tries = 0; n === 0 && tries < 100; tries++) {
        try {
          n = readSync(reader, buf);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect(JSON.parse(buf.subarray(0, n).toString('utf8'))).toMatchObject({ level: 30, msg: 'started' });
    } finally {
      closeSync(reader);
    }
  });

  /**
   * A process that logs to `file` through createLogger (the script's `log`), as the terminal does; its exit and its
   * standard error. It logs `first` (unless told not to) at once, and runs `steps` when the test's `go` sends a line to
   * its standard input.
   */
  function loggingProcess(
    file: string,
    steps: string,
    first = true,
  ): {
    go(): void;
    ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
    kill(): void;
  } {
    const logger = fileURLToPath(new URL('./logger.ts', import.meta.url));
    const script = `import { createLogger } from ${JSON.stringify(logger)};
      const log = createLogger({ destination: ${JSON.stringify(file)} });
      ${first ? "log.info('first');" : ''}
      process.stdin.once('data', () => { ${steps} });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
      (done) => child.once('close', (code, signal) => done({ code, signal, stderr })),
    );
    return { go: () => child.stdin.write('go\n'), ended, kill: () => child.kill('SIGKILL') };
  }
  const messagesOf = (stderr: string): string[] =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => String((JSON.parse(l) as { msg?: unknown }).msg));
  /** Resolves with what `ended` gives, or with 'hung' after `ms`. */
  const within = <T>(ended: Promise<T>, ms: number): Promise<T | 'hung'> =>
    Promise.race([ended, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))]);

  // A log file whose writes fail once the terminal runs: the disk full (ENOSPC: /dev/full answers every write so), its
  // device gone (EIO), a log shipper's FIFO whose reader went away (EPIPE). The lines go to standard error from then
  // on, after one warning saying why; the process is neither crashed by the stream's error nor held at its exit.
  it.runIf(existsSync('/dev/full'))(
    'whose writes fail later (ENOSPC) is replaced by standard error, which says so once, and the run goes on',
    async () => {
      const stderr = join(dir, 'stderr');
      const log = createLogger({
        destination: '/dev/full',
        standardError: pino.destination({ dest: stderr, sync: true }),
      });
      log.info('started');
      log.info('card read');
      // The failure comes back from the write in the background.
      const warned = (): boolean => readFileSync(stderr, 'utf8').includes('standard error instead');
      for (let tries = 0; tries < 100 && !warned(); tries++) await new Promise((r) => setTimeout(r, 20));
      log.info('sale approved');
      log.error('reader disconnected');
      await written(log);
      expect(linesOf(stderr)).toEqual([
        expect.objectContaining({
          level: 40,
          file: '/dev/full',
          err: expect.objectContaining({ code: 'ENOSPC' }) as unknown,
          msg: 'log.file /dev/full could not be written (ENOSPC): logging to standard error instead',
        }),
        // The lines the file did not take, then the later ones.
        expect.objectContaining({ msg: 'started' }),
        expect.objectContaining({ msg: 'card read' }),
        expect.objectContaining({ msg: 'sale approved' }),
        expect.objectContaining({ level: 50, msg: 'reader disconnected' }),
      ]);
    },
  );

  it.runIf(existsSync('/dev/full'))(
    'whose writes fail (ENOSPC) as the process exits does not hold the exit: its lines go to standard error',
    async () => {
      // Nothing written before: the first failure is met by pino's flush at exit (the first line's write is under
      // way then, the second waits for it).
      const child = loggingProcess(
        '/dev/full',
        `log.info('stopping'); log.info('stopped'); process.exit(0);`,
        false,
      );
      try {
        child.go();
        const end = await within(child.ended, 10_000);
        expect(end).not.toBe('hung');
        if (end === 'hung') return;
        expect(end.code, end.stderr).toBe(0);
        expect(messagesOf(end.stderr)).toEqual(
          expect.arrayContaining([
            'log.file /dev/full could not be written (ENOSPC): logging to standard error instead',
            'stopped',
          ]),
        );
      } finally {
        child.kill();
      }
    },
  );

  it.runIf(process.platform !== 'win32')(
    'that is a FIFO whose reader goes away (EPIPE) is replaced by standard error: no SIGPIPE, no line lost silently',
    async () => {
      const fifo = join(dir, 'terminal.log');
      execFileSync('mkfifo', [fifo]);
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      let readerOpen = true;
      const child = loggingProcess(
        fifo,
        `log.info('second'); log.info('third');
         setTimeout(() => { log.info('still running'); setTimeout(() => process.exit(0), 200); }, 300);`,
      );
      try {
        // The shipper reads the first line, then goes away.
        const buf = Buffer.alloc(4096);
        let n = 0;
        // 0 before the process opens it (no writer yet), EAGAIN while it has written nothing.
        for (let tries = 0; n === 0 && tries < 500; tries++) {
          try {
            n = readSync(reader, buf);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
          }
          if (n === 0) await new Promise((r) => setTimeout(r, 20));
        }
        expect(buf.subarray(0, n).toString('utf8')).toContain('"msg":"first"');
        closeSync(reader);
        readerOpen = false;
        child.go();
        const end = await within(child.ended, 10_000);
        expect(end).not.toBe('hung');
        if (end === 'hung') return;
        expect({ code: end.code, signal: end.signal }, end.stderr).toEqual({ code: 0, signal: null });
        expect(messagesOf(end.stderr)).toEqual([
          `log.file ${fifo} could not be written (EPIPE): logging to standard error instead`,
          'second',
          'third',
          'still running',
        ]);
      } finally {
        if (readerOpen) closeSync(reader);
        child.kill();
      }
    },
  );
});
