import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { findCardData, scanForCardData, TEST_PANS } from './card-scan.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('card data scan of the crash suite files', () => {
  it('knows the simulator, sample and declining test card numbers', () => {
    for (const pan of [
      '4761739001010119',
      '5413339000001513',
      '3566002020360505',
      '4111111111111111',
      '4000000000000002',
    ])
      expect(TEST_PANS).toContain(pan);
  });

  it('finds a PAN written in clear in a log line, a PAN packed in BCD in a database page, tracks and security codes', () => {
    dir = mkdtempSync(join(tmpdir(), 'scan-'));
    mkdirSync(join(dir, 'var'));
    writeFileSync(join(dir, 'terminal.log'), '{"level":30,"msg":"card 5413339000001513 read"}\n');
    writeFileSync(
      join(dir, 'var', 'journal.db-wal'),
      Buffer.concat([Buffer.alloc(64, 1), Buffer.from('4761739001010119', 'hex'), Buffer.alloc(64, 2)]),
    );
    writeFileSync(join(dir, 'holds.json'), '{"t":";4999990000000000=30122011234?"}');
    writeFileSync(join(dir, 'b.log'), '{"paymentInformation":{"card":{"securityCode":"123"}}}');
    writeFileSync(join(dir, 'c.log'), '%B4999990000000000^CARDHOLDER/VISA^3012201');
    const { findings } = scanForCardData(dir);
    expect(findings.map((f) => `${f.file}:${f.kind}`).sort()).toEqual([
      'b.log:cvv',
      'c.log:track1',
      'holds.json:track2',
      'terminal.log:pan',
      'var/journal.db-wal:pan-bcd',
    ]);
  });

  it('finds nothing in what the redacting logger writes about a card', async () => {
    dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const file = join(dir, 'terminal.log');
    const logger = createLogger({ level: 'debug', destination: file });
    logger.info(
      {
        pan: '4761739001010119',
        track2: '4761739001010119=30122011758928889',
        note: 'card 5413339000001513',
      },
      'read 3566002020360505',
    );
    // The destination opens its file asynchronously: wait (bounded) for the line to land before scanning.
    for (let i = 0; i < 200 && !(existsSync(file) && readFileSync(file, 'utf8').includes('\n')); i++)
      await new Promise((res) => setTimeout(res, 10));
    await new Promise<void>((done) => logger.flush(() => done()));
    expect(readFileSync(file, 'utf8')).toContain('[REDACTED]');
    const { files, findings } = scanForCardData(dir);
    expect(files).toEqual(['terminal.log']);
    expect(findings).toEqual([]);
  });

  it('ignores masked PANs, transaction ids and timestamps', () => {
    const text =
      '{"maskedPan":"476173******0119","transactionId":"T01M80J9CM7NC91BNHM28NG2JSR","time":1795315511829}';
    expect(findCardData(Buffer.from(text))).toEqual([]);
  });
});
