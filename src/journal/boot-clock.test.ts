import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { linuxBootClock } from './boot-clock.js';

describe('linuxBootClock', () => {
  it.runIf(existsSync('/proc/uptime') && existsSync('/proc/sys/kernel/random/boot_id'))(
    'reads the same boot and a time since it that never goes back',
    () => {
      const a = linuxBootClock();
      const b = linuxBootClock();
      expect(a?.bootId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b?.bootId).toBe(a?.bootId);
      expect(Number.isSafeInteger(a?.sinceBootMs)).toBe(true);
      expect(b?.sinceBootMs).toBeGreaterThanOrEqual(a?.sinceBootMs ?? Infinity);
    },
  );
});
