import { describe, expect, it } from 'vitest';
import { createReader, DEFAULT_READER_OPTIONS, getSimulatorControl, VIRTUAL_CARD_NAMES } from './index.js';

describe('createReader', () => {
  it('builds the simulated reader of the defaults, with its control', async () => {
    const reader = createReader(DEFAULT_READER_OPTIONS);
    const control = getSimulatorControl(reader);
    expect(control?.card).toBe('n2-contact');
    expect(reader.health).toBe('disconnected');
    await reader.close();
  });

  it('refuses an unknown virtual card with READER_UNAVAILABLE naming the known ones', () => {
    try {
      createReader({ ...DEFAULT_READER_OPTIONS, sim: { ...DEFAULT_READER_OPTIONS.sim, card: 'gold' } });
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'READER_UNAVAILABLE' });
      expect(String(e)).toContain(VIRTUAL_CARD_NAMES[0]);
    }
  });

  it('refuses a name an object inherits (constructor, toString) as an unknown virtual card', () => {
    for (const card of ['constructor', 'toString', '__proto__'])
      expect(() =>
        createReader({ ...DEFAULT_READER_OPTIONS, sim: { ...DEFAULT_READER_OPTIONS.sim, card } }),
      ).toThrow(expect.objectContaining({ code: 'READER_UNAVAILABLE' }));
  });

  it('refuses a serial reader without a path', () => {
    expect(() => createReader({ ...DEFAULT_READER_OPTIONS, kind: 'serial' })).toThrow(
      expect.objectContaining({ code: 'READER_UNAVAILABLE' }),
    );
  });

  it('gives no simulator control for a real reader', async () => {
    const reader = createReader({
      ...DEFAULT_READER_OPTIONS,
      kind: 'serial',
      serial: { path: '/dev/ttyUSB9', baudRate: 9600 },
    });
    expect(getSimulatorControl(reader)).toBeUndefined();
    await reader.close();
  });

  it('reports a HID reader whose device cannot be opened as READER_UNAVAILABLE', async () => {
    const reader = createReader(
      { ...DEFAULT_READER_OPTIONS, kind: 'hid' },
      { openHidDevice: () => Promise.reject(new Error('no device')) },
    );
    await expect(reader.connect()).rejects.toMatchObject({ code: 'READER_UNAVAILABLE' });
    await reader.close();
  });
});
