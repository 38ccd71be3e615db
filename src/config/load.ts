import { readFileSync } from 'node:fs';
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

/** Reads, parses (JSON, or YAML for .yml/.yaml) and validates a configuration file. */
export function loadConfigFile(path: string): Config {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new ConfigError(
      'CONFIG_UNREADABLE',
      `${file}: cannot read the configuration file`,
      file,
      undefined,
      { cause },
    );
  }
  let data: unknown;
  try {
    data = ['.yml', '.yaml'].includes(extname(file).toLowerCase()) ? parseYaml(text) : JSON.parse(text);
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
  return parseConfig(data, file);
}

/** The configuration for a run: the file when given, otherwise the embedded defaults. */
export function loadConfig(path?: string): Config {
  return path ? loadConfigFile(path) : parseConfig({});
}
