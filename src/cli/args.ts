import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './output.js';

/** `util.parseArgs` with strict options, turning its errors into a {@link UsageError} (exit 2). */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  allowPositionals = true,
): { values: { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string }; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals, strict: true });
    return { values: values, positionals };
  } catch (e) {
    throw new UsageError('BAD_ARGUMENTS', e instanceof Error ? e.message : String(e));
  }
}

/** Parses a decimal port number or throws a UsageError naming the option. */
export function parsePort(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new UsageError('BAD_ARGUMENTS', `${option} must be a port number`);
  return n;
}

/**
 * Parses a whole number of `unit` between `min` and `max` (inclusive); `fallback` when the option is absent.
 * @throws UsageError BAD_ARGUMENTS naming the option, the unit and the range.
 */
export function parseWholeNumber(
  value: string | undefined,
  option: string,
  range: { unit: 'minutes' | 'milliseconds'; min: number; max: number; fallback: number },
): number {
  if (value === undefined) return range.fallback;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max)
    throw new UsageError(
      'BAD_ARGUMENTS',
      `${option} takes whole ${range.unit} from ${range.min} to ${range.max}, got "${value}"`,
    );
  return n;
}
