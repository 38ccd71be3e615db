import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.js';
import { LimitedWarnings } from './limited-warnings.js';

afterEach(() => {
  vi.useRealTimers();
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'warn',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { lines, logger };
}

describe('LimitedWarnings', () => {
  it('logs its burst, then one a second, and counts the rest for one summary line', () => {
    const { lines, logger } = capture();
    let t = Date.parse('2030-01-01T08:00:00Z');
    const warnings = new LimitedWarnings(logger, 'refusals', { burst: 3, perSecond: 1, now: () => t });
    for (let i = 0; i < 10; i++) warnings.warn({ i }, 'refused');
    t += 1_000;
    warnings.warn({ i: 10 }, 'refused');
    expect(lines.map((l) => l.i)).toEqual([0, 1, 2, 10]);
    warnings.flush();
    expect(lines.at(-1)).toMatchObject({
      dropped: 7,
      since: '2030-01-01T08:00:00.000Z',
      msg: '7 refusals not logged one by one since 2030-01-01T08:00:00.000Z',
    });
    // Nothing left out since: no second summary.
    warnings.flush();
    expect(lines).toHaveLength(5);
  });

  it('logs the summary by itself a minute after the first warning left out', () => {
    vi.useFakeTimers();
    const { lines, logger } = capture();
    const warnings = new LimitedWarnings(logger, 'refusals', { burst: 1, perSecond: 0, now: () => 0 });
    warnings.warn({}, 'refused');
    warnings.warn({}, 'refused');
    vi.advanceTimersByTime(59_999);
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(lines.at(-1)).toMatchObject({ dropped: 1 });
  });
});
