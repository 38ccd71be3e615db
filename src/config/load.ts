import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { configSchema, type Config } from './schema.js';

/** A configuration that cannot be used. `key` is the dotted path of the offending key, `file` where it came from. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly code: 'CONFIG_UNREADABLE' | 'CONFIG_SYNTAX' | 'CONFIG_UNKNOWN_KEY' | 'CONFIG_INVALID',
    message: string,
    readonly file: string,
    readonly key?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const EMBEDDED = '<embedded defaults>';

/** The largest configuration file read: far above any real one, small enough that a wrong path cannot exhaust memory. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

function issueToError(issue: z.core.$ZodIssue, file: string): ConfigError {
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = base ? `${base}.${issue.keys[0] ?? ''}` : (issue.keys[0] ?? '');
    return new ConfigError('CONFIG_UNKNOWN_KEY', `${file}: unknown key "${key}"`, file, key);
  }
  return new ConfigError('CONFIG_INVALID', `${file}: "${base || '(root)'}": ${issue.message}`, file, base);
}

/** Validates a parsed configuration object; `file` names its origin in errors. */
export function parseConfig(input: unknown, file = EMBEDDED): Config {
  const result = configSchema.safeParse(input ?? {});
  if (!result.success) {
    const first = result.error.issues[0];
    if (!first) throw new ConfigError('CONFIG_INVALID', `${file}: invalid configuration`, file);
    throw issueToError(first, file);
  }
  return result.data;
}

/**
 * `text` without the byte order mark some editors put first in a UTF-8 file (Windows Notepad before 2019): JSON.parse
 * refuses it, so a file that shows nothing wrong in its editor would be refused as not JSON.
 */
export function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads and parses (JSON, or YAML for .yml/.yaml) a configuration file, unvalidated; `file` is its absolute path.
 * `CONFIG_UNREADABLE` (not a regular file, too large, unreadable) or `CONFIG_SYNTAX`.
 */
export function readConfigData(path: string): { file: string; data: unknown } {
  const file = resolve(path);
  const unreadable = (cause: unknown): ConfigError =>
    new ConfigError('CONFIG_UNREADABLE', `${file}: cannot read the configuration file`, file, undefined, {
      cause,
    });
  let text: string;
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, and reading it for its end — forever.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw unreadable(cause);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new ConfigError(
        'CONFIG_UNREADABLE',
        `${file}: cannot read the configuration file: not a regular file`,
        file,
      );
    if (stat.size > CONFIG_MAX_BYTES)
      throw new ConfigError(
        'CONFIG_UNREADABLE',
        `${file}: cannot read the configuration file: too large (${stat.size} bytes, at most ${CONFIG_MAX_BYTES})`,
        file,
      );
    text = readFileSync(fd, 'utf8');
  } catch (cause) {
    if (cause instanceof ConfigError) throw cause;
    throw unreadable(cause);
  } finally {
    closeSync(fd);
  }
  let data: unknown;
  try {
    const content = withoutByteOrderMark(text);
    data = ['.yml', '.yaml'].includes(extname(file).toLowerCase()) ? parseYaml(content) : JSON.parse(content);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ConfigError(
      'CONFIG_SYNTAX',
      `${file}: not valid ${extname(file) || 'JSON'}: ${detail}`,
      file,
      undefined,
      {
        cause,
      },
    );
  }
  // An empty YAML file (or one of comments only) and a JSON `null` parse to nothing: refused, not taken as the
  // embedded defaults — a truncated file would otherwise start a street terminal against the sandbox gateway.
  if (data === null || data === undefined)
    throw new ConfigError('CONFIG_INVALID', `${file}: the configuration file is empty`, file);
  return { file, data };
}

/** Reads, parses (JSON, or YAML for .yml/.yaml) and validates a configuration file. */
export function loadConfigFile(path: string): Config {
  const { file, data } = readConfigData(path);
  return parseConfig(data, file);
}

/**
 * The sections of a configuration file that are valid on their own, each with its defaults filled in (a section the
 * file leaves out is its default); a section that is not valid alone is left out. For a terminal whose configuration
 * as a whole is refused: what it can still use to say so (its language, the port of its screen, its log, its fleet
 * link) — never to take a card. A file that cannot be read or parsed gives nothing.
 */
export function usableSectionsOf(path: string): Partial<Config> {
  let data: unknown;
  try {
    data = readConfigData(path).data;
  } catch {
    return {};
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return {};
  const given = data as Record<string, unknown>;
  // Each section by its own schema: what one holds never depends on another (the schema has no cross-section rule).
  const usable: Partial<Record<keyof Config, unknown>> = {};
  for (const [key, section] of Object.entries(configSchema.shape) as [keyof Config, z.ZodType][]) {
    const parsed = section.safeParse(given[key]);
    if (parsed.success && parsed.data !== undefined) usable[key] = parsed.data;
  }
  return usable as Partial<Config>;
}

/** The configuration for a run: the file when given, otherwise the embedded defaults. */
export function loadConfig(path?: string): Config {
  return path ? loadConfigFile(path) : parseConfig({});
}
