import { describe, expect, it } from 'vitest';
import { decodeStatus, isStatusByte, printerStatusOf, statusAnswers, statusRequest } from './status.js';

describe('ESC/POS real-time status (DLE EOT)', () => {
  it('requests status with 10 04 n', () => {
    expect([...statusRequest(2)]).toEqual([0x10, 0x04, 0x02]);
  });

  it('recognises answers by their fixed bits', () => {
    expect(isStatusByte(0x12)).toBe(true);
    expect(isStatusByte(0x16)).toBe(true); // cover open
    expect(isStatusByte(0x7e)).toBe(true); // paper end, near end
    expect(isStatusByte(0x00)).toBe(false); // a GS r answer
    expect(isStatusByte(0x13)).toBe(false); // bit 0 set
    expect(isStatusByte(0x92)).toBe(false); // bit 7 set
  });

  it('decodes a ready printer', () => {
    expect(printerStatusOf(decodeStatus({ printer: 0x12, offlineCause: 0x12, paperSensor: 0x12 }))).toBe(
      'ready',
    );
  });

  it('decodes paper out from the roll sensor (n = 4, bits 5 and 6)', () => {
    const d = decodeStatus({ printer: 0x1a, offlineCause: 0x12, paperSensor: 0x72 });
    expect(d.paperOut).toBe(true);
    expect(printerStatusOf(d)).toBe('paper-out');
  });

  it('decodes paper out from the offline cause (n = 2, bit 5)', () => {
    expect(printerStatusOf(decodeStatus({ printer: 0x1a, offlineCause: 0x32, paperSensor: 0x12 }))).toBe(
      'paper-out',
    );
  });

  it('decodes cover open (n = 2, bit 2) ahead of the paper end the sensor then reports', () => {
    expect(printerStatusOf(decodeStatus({ printer: 0x1a, offlineCause: 0x36, paperSensor: 0x7e }))).toBe(
      'cover-open',
    );
  });

  it('decodes near end as still ready', () => {
    const d = decodeStatus({ printer: 0x12, offlineCause: 0x12, paperSensor: 0x1e });
    expect(d.paperNearEnd).toBe(true);
    expect(printerStatusOf(d)).toBe('ready');
  });

  it('decodes an error state or plain offline as offline', () => {
    expect(printerStatusOf(decodeStatus({ printer: 0x1a, offlineCause: 0x52, paperSensor: 0x12 }))).toBe(
      'offline',
    );
    expect(printerStatusOf(decodeStatus({ printer: 0x1a, offlineCause: 0x12, paperSensor: 0x12 }))).toBe(
      'offline',
    );
  });

  it('round-trips every simulated state through the answer bytes', () => {
    for (const coverOpen of [false, true])
      for (const paper of ['ok', 'near-end', 'out'] as const) {
        const a = statusAnswers({ coverOpen, paper });
        expect([a.printer, a.offlineCause, a.paperSensor].every(isStatusByte)).toBe(true);
        const expected = coverOpen ? 'cover-open' : paper === 'out' ? 'paper-out' : 'ready';
        expect(printerStatusOf(decodeStatus(a))).toBe(expected);
      }
  });
});
