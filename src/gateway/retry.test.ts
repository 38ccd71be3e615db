import { describe, expect, it } from 'vitest';
import { backoffDelayMs, shouldRetry } from './retry.js';

const base = { attempt: 1, maxAttempts: 3 };

describe('shouldRetry', () => {
  it('never retries a money-moving request, whatever the failure', () => {
    for (const failure of [
      { kind: 'status', httpStatus: 502 },
      { kind: 'error', code: 'GW_TIMEOUT', outcomeUnknown: true },
      { kind: 'error', code: 'GW_CONNECTION', outcomeUnknown: false },
    ] as const) {
      expect(shouldRetry({ ...base, moneyMoving: true, failure })).toBe(false);
    }
  });

  it('retries reads on 5xx, 408, 429, timeouts and connection failures', () => {
    for (const httpStatus of [500, 502, 503, 504, 408, 429]) {
      expect(shouldRetry({ ...base, moneyMoving: false, failure: { kind: 'status', httpStatus } })).toBe(
        true,
      );
    }
    for (const code of ['GW_TIMEOUT', 'GW_CONNECTION', 'GW_SERVER', 'GW_PARSE'] as const) {
      expect(
        shouldRetry({ ...base, moneyMoving: false, failure: { kind: 'error', code, outcomeUnknown: true } }),
      ).toBe(true);
    }
  });

  it('does not retry answers that would repeat: 400, 401, 404, invalid requests, cancellation', () => {
    for (const httpStatus of [400, 401, 403, 404]) {
      expect(shouldRetry({ ...base, moneyMoving: false, failure: { kind: 'status', httpStatus } })).toBe(
        false,
      );
    }
    for (const code of [
      'GW_INVALID_REQUEST',
      'GW_AUTH',
      'GW_CANCELLED',
      'GW_UNDOCUMENTED',
      'GW_OAUTH_TOKEN',
    ] as const) {
      expect(
        shouldRetry({ ...base, moneyMoving: false, failure: { kind: 'error', code, outcomeUnknown: false } }),
      ).toBe(false);
    }
  });

  it('stops when the attempts are spent', () => {
    expect(
      shouldRetry({
        attempt: 3,
        maxAttempts: 3,
        moneyMoving: false,
        failure: { kind: 'status', httpStatus: 503 },
      }),
    ).toBe(false);
  });
});

describe('backoffDelayMs', () => {
  it('doubles from the initial delay, capped, with half of it random', () => {
    const o = { initialDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelayMs(1, o, 0)).toBe(50);
    expect(backoffDelayMs(1, o, 1)).toBe(100);
    expect(backoffDelayMs(3, o, 1)).toBe(400);
    expect(backoffDelayMs(10, o, 1)).toBe(1000);
    expect(backoffDelayMs(10, o, 0)).toBe(500);
  });
});
