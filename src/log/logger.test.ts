import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { redactString } from './redact.js';

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
  });
});
