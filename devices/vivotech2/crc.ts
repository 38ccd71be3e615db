/**
 * CRC-16/CCITT-FALSE (reader-protocol.md, Frame): polynomial 0x1021, initial value 0xFFFF, no reflection, no final
 * XOR. Computed over the whole frame from the first header byte through the last data byte.
 */

const TABLE = buildTable();

function buildTable(): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
}

/**
 * CRC of `bytes[start, end)`, continuing from `initial` (0xFFFF for a fresh computation) so that a frame can be
 * checked in pieces. Returns an unsigned 16-bit value.
 */
export function crc16CcittFalse(bytes: Uint8Array, start = 0, end = bytes.length, initial = 0xffff): number {
  let crc = initial & 0xffff;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] as number)) & 0xff] as number);
  }
  return crc;
}
