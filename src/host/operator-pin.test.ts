import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

  it('takes the PIN of a file replaced while the terminal runs, and no longer the one it replaced', () => {
    const file = pinFile('2468\n', 0o600);
    const pin = new OperatorPin(file);
    expect(pin.check('2468')).toBe('ok');
    // Written beside and renamed over, as an administrator replaces a secret …
    const next = join(dir, 'operator.pin.new');
    writeFileSync(next, '97531\n', { mode: 0o600 });
    renameSync(next, file);
    expect(pin.check('97531')).toBe('ok');
    expect(pin.check('2468')).toBe('wrong');
    // … or written in place.
    writeFileSync(file, '864200\n');
    expect(pin.check('864200')).toBe('ok');
    expect(pin.check('97531')).toBe('wrong');
  });

  it('refuses to check a PIN against a file that became unusable, with the typed error of the start', () => {
    const file = pinFile('2468\n', 0o600);
    const pin = new OperatorPin(file);
    writeFileSync(file, '12ab\n');
    expect(() => pin.check('2468')).toThrowError(
      expect.objectContaining({ code: 'OPERATOR_PIN_FILE' }) as Error,
    );
    rmSync(file);
    expect(() => pin.check('2468')).toThrowError(
      expect.objectContaining({ code: 'SECRET_FILE_UNREADABLE', key: 'terminal.operatorPinFile' }) as Error,
    );
    pinFile('2468\n', 0o600);
    expect(pin.check('2468')).toBe('ok');
  });

  it('generates a six-digit PIN when no file is configured', () => {
    const pin = new OperatorPin(undefined);
    expect(pin.generated).toMatch(/^\d{6}$/);
    expect(pin.check(pin.generated!)).toBe('ok');
  });
});

describe('OperatorPin: lockouts that escalate', () => {
  const MIN = 60_000;
  let t = 0;
  function pin(): OperatorPin {
    t = 1_000_000;
    return new OperatorPin(pinFile('2468\n', 0o600), () => t);
  }
  function fiveWrong(p: OperatorPin): void {
    for (let i = 0; i < 5; i++) expect(p.check('1357')).toBe('wrong');
  }
  /** How long the lockout that has just begun lasts, to the minute. */
  function lockMinutes(p: OperatorPin): number {
    const until = p.lockedUntil();
    expect(until).toBeDefined();
    return (until! - t) / MIN;
  }

  it('doubles each consecutive lockout from five minutes, up to a day, until a good PIN', () => {
    const p = pin();
    const lengths: number[] = [];
    for (let i = 0; i < 11; i++) {
      fiveWrong(p);
      lengths.push(lockMinutes(p));
      expect(p.check('2468')).toBe('locked');
      t = p.lockedUntil()!;
      expect(p.lockEnd()).toBe(t);
      expect(p.lockedUntil()).toBeUndefined();
    }
    expect(lengths).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440]);
    expect(p.check('2468')).toBe('ok');
    fiveWrong(p);
    expect(lockMinutes(p)).toBe(5);
  });

  it('holds a lockout no longer than its own length when the clock is stepped back during it', () => {
    const p = pin();
    fiveWrong(p);
    t -= 60 * MIN;
    expect(p.check('2468')).toBe('locked');
    expect(lockMinutes(p)).toBe(5);
    t = p.lockedUntil()!;
    expect(p.check('2468')).toBe('ok');
  });

  it('does not lock again when the clock is stepped back after a good PIN ended the lockout', () => {
    const p = pin();
    fiveWrong(p);
    t = p.lockedUntil()!;
    expect(p.check('2468')).toBe('ok');
    t -= MIN;
    expect(p.lockedUntil()).toBeUndefined();
    expect(p.check('2468')).toBe('ok');
  });

  it('replays the escalation at a restart from the recorded checks', () => {
    const before = pin();
    const past: { atMs: number; ok: boolean }[] = [];
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 5; j++) {
        before.check('1357');
        past.push({ atMs: t, ok: false });
      }
      if (i === 0) t = before.lockedUntil()!;
    }
    const after = new OperatorPin(pinFile('2468\n', 0o600), () => t);
    after.restore(past);
    expect(after.lockedUntil()).toBe(before.lockedUntil());
    expect(lockMinutes(after)).toBe(10);
    expect(after.check('2468')).toBe('locked');
  });
});
