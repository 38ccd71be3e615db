import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { bytesToHex, encodeTlv, hexToBytes } from '../../src/emv/index.js';
import { encodeActivateReply } from '../../devices/vivotech2/commands.js';
import { encodeReaderFrame } from '../../devices/vivotech2/frame.js';

async function run(args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  const stderr = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await main(args, { stdout, stderr, signal: new AbortController().signal });
  return { code, json: JSON.parse(out) as Record<string, unknown> };
}

describe('parking-terminal reader', () => {
  it('decodes the published Ping reply', async () => {
    expect(await run(['reader', 'decode', '5669564F7465636832001800 0000FA83'])).toEqual({
      code: 0,
      json: { cmd: '18', status: '00', length: 0, data: '', crc: 'FA83', crcOk: true },
    });
  });

  it('decodes a host frame with --from-host (CRC low byte first)', async () => {
    expect(await run(['reader', 'decode', '5669564F74656368320018010000B3CD', '--from-host'])).toEqual({
      code: 0,
      json: { cmd: '18', sub: '01', length: 0, data: '', crc: 'CDB3', crcOk: true },
    });
  });

  it('prints no card data of a card read: the PAN in tag 5A and 57, and in the tracks', async () => {
    const pan = '4761739001010119';
    const data = encodeActivateReply({
      track2: `;${pan}=25122010000000000000?`,
      track3Field: false,
      de055Present: true,
      tlvs: encodeTlv([
        { tag: '5A', length: 8, value: hexToBytes(pan) },
        { tag: '57', length: 19, value: hexToBytes(`${pan}D25122010000000000000F`) },
        { tag: '9F02', length: 6, value: hexToBytes('000000001250') },
      ]),
    });
    const frame = bytesToHex(encodeReaderFrame({ cmd: 0x02, status: 0x23, data }));
    const { code, json } = await run(['reader', 'decode', frame]);
    expect(code).toBe(0);
    expect(json).toMatchObject({
      cmd: '02',
      status: '23',
      length: data.length,
      crcOk: true,
    });
    expect(json.data).toMatch(/^(\[REDACTED\])+$/);
    const printed = JSON.stringify(json);
    for (const clear of [pan, bytesToHex(new TextEncoder().encode(pan)), pan.slice(6, 12)])
      expect(printed).not.toContain(clear);
  });

  it('exits 1 and says crcOk false for a frame with a wrong CRC', async () => {
    const { code, json } = await run(['reader', 'decode', '5669564F74656368320018000000FA84']);
    expect(code).toBe(1);
    expect(json.crcOk).toBe(false);
  });

  it('exits 2 with a typed error for bad hex and for bytes that are not a frame', async () => {
    expect(await run(['reader', 'decode', 'XYZ'])).toMatchObject({
      code: 2,
      json: { error: { code: 'BAD_HEX' } },
    });
    expect(await run(['reader', 'decode', '0102'])).toMatchObject({
      code: 2,
      json: { error: { code: 'FRAME_HEADER' } },
    });
    expect(await run(['reader', 'decode', '5669564F7465636832001800FFFF'])).toMatchObject({
      code: 2,
      json: { error: { code: 'FRAME_TOO_LONG' } },
    });
  });

  it('encodes the published Ping command', async () => {
    expect(await run(['reader', 'encode', '--cmd', '18', '--sub', '01'])).toEqual({
      code: 0,
      json: { frame: '5669564F74656368320018010000B3CD' },
    });
  });

  it('encodes a frame with data and refuses a bad command byte', async () => {
    const { json } = await run(['reader', 'encode', '--cmd', '01', '--sub', '01', '--data', '01']);
    expect(String(json.frame)).toMatch(/^5669564F7465636832000101000101/);
    expect(await run(['reader', 'encode', '--cmd', '123', '--sub', '01'])).toMatchObject({
      code: 2,
      json: { error: { code: 'BAD_ARGUMENTS' } },
    });
  });

  it('tests the simulator when no port is given', async () => {
    expect(await run(['reader', 'test'])).toMatchObject({
      code: 0,
      json: { transport: 'simulator', ok: true },
    });
  });

  it('reports a port that cannot be opened as a failed check', async () => {
    expect(
      await run(['reader', 'test', '--port', '/nonexistent/ttyREADER', '--timeout', '100']),
    ).toMatchObject({
      code: 1,
      json: { ok: false, error: { code: 'READER_UNAVAILABLE' } },
    });
  });

  it('refuses --port together with --hid, and an unknown subcommand', async () => {
    expect(await run(['reader', 'test', '--port', 'x', '--hid', '0ACD'])).toMatchObject({ code: 2 });
    expect(await run(['reader', 'frobnicate'])).toMatchObject({ code: 2 });
  });
});
