import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperatorPin } from './operator-pin.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-pin-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function pinFile(text: string, mode: number): string {
  const file = join(dir, 'operator.pin');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

describe('OperatorPin', () => {
  it('checks the PIN of an owner-only file', () => {
    const pin = new OperatorPin(pinFile('2468\n', 0o600));
    expect(pin.generated).toBeUndefined();
    expect(pin.check('2468')).toBe('ok');
    expect(pin.check('1357')).toBe('wrong');
  });

  it.runIf(process.platform !== 'win32')('refuses a PIN file readable by group or others', () => {
    const file = pinFile('2468\n', 0o644);
    expect(() => new OperatorPin(file)).toThrowError(
      expect.objectContaining({
        code: 'SECRET_FILE_EXPOSED',
        key: 'terminal.operatorPinFile',
        file,
      }) as Error,
    );
  });

  it('names the key and the file when the PIN file is missing', () => {
    const file = join(dir, 'absent.pin');
    expect(() => new OperatorPin(file)).toThrowError(
      expect.objectContaining({
        code: 'SECRET_FILE_UNREADABLE',
        key: 'terminal.operatorPinFile',
        file,
      }) as Error,
    );
  });

  it('refuses a file that holds no 4 to 8 digit PIN', () => {
    expect(() => new OperatorPin(pinFile('12ab\n', 0o600))).toThrowError(
      expect.objectContaining({ code: 'OPERATOR_PIN_FILE' }) as Error,
    );
  });

  it('generates a six-digit PIN when no file is configured', () => {
    const pin = new OperatorPin(undefined);
    expect(pin.generated).toMatch(/^\d{6}$/);
    expect(pin.check(pin.generated!)).toBe('ok');
  });
});
