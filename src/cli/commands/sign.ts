import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertSignedIdentity, GatewayError, signRequest } from '../../gateway/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type Command } from '../output.js';

/** RFC 1123 as `Date#toUTCString()` prints it: `Thu, 18 Jul 2019 00:18:03 GMT`. */
const RFC1123 =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

const command: Command = {
  name: 'sign',
  summary: 'print the HTTP-signature headers the terminal would send for a request',
  usage: `parking-terminal sign --method M --path P --host H --date D --merchant-id ID --key-id K
                        (--secret S | --secret-file F) [--body-file F]
  --path       path with query string, e.g. /pts/v2/payments
  --host       bare host as sent (no scheme; port only when not the default)
  --date       RFC 1123 date, e.g. "Thu, 18 Jul 2019 00:18:03 GMT" (default: now)
  --secret     the shared secret as issued (base64); --secret-file reads it from a file instead
  --body-file  the exact body bytes (POST, PUT, PATCH); digest is computed over them
  prints {"headers": {"host", "date", "digest"?, "v-c-merchant-id", "signature"}}`,
  run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        method: { type: 'string' },
        path: { type: 'string' },
        host: { type: 'string' },
        date: { type: 'string' },
        'merchant-id': { type: 'string' },
        'key-id': { type: 'string' },
        secret: { type: 'string' },
        'secret-file': { type: 'string' },
        'body-file': { type: 'string' },
      },
      false,
    );
    for (const key of ['method', 'path', 'host', 'merchant-id', 'key-id'] as const) {
      if (values[key] === undefined || values[key] === '')
        throw new UsageError('BAD_ARGUMENTS', `--${key} is required`);
    }
    const method = (values.method ?? '').toUpperCase();
    if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
      throw new UsageError('BAD_ARGUMENTS', '--method must be GET, POST, PUT, PATCH or DELETE');
    }
    const path = values.path ?? '';
    if (!path.startsWith('/')) throw new UsageError('BAD_ARGUMENTS', '--path must start with /');
    const host = values.host ?? '';
    if (/[/\s]/.test(host) || host.includes('://')) {
      throw new UsageError('BAD_ARGUMENTS', '--host is the bare host, without scheme or path');
    }
    const date = values.date ?? new Date().toUTCString();
    if (!RFC1123.test(date))
      throw new UsageError(
        'BAD_ARGUMENTS',
        '--date must be an RFC 1123 date such as "Thu, 18 Jul 2019 00:18:03 GMT"',
      );
    for (const [option, what] of [
      ['merchant-id', 'merchant id'],
      ['key-id', 'key id'],
    ] as const) {
      try {
        assertSignedIdentity(what, values[option] ?? '');
      } catch (e) {
        if (e instanceof GatewayError) throw new UsageError('BAD_ARGUMENTS', `--${option}: ${e.message}`);
        throw e;
      }
    }
    if ((values.secret === undefined) === (values['secret-file'] === undefined)) {
      throw new UsageError('BAD_ARGUMENTS', 'give exactly one of --secret and --secret-file');
    }
    const readFile = (option: string, file: string): Buffer => {
      try {
        return readFileSync(resolve(io.cwd, file));
      } catch {
        throw new UsageError('FILE_UNREADABLE', `${option}: cannot read ${file}`);
      }
    };
    const secretBase64 =
      values.secret ??
      readFile('--secret-file', values['secret-file'] ?? '')
        .toString('utf8')
        .trim();
    const body = values['body-file'] !== undefined ? readFile('--body-file', values['body-file']) : undefined;
    if (body !== undefined && (method === 'GET' || method === 'DELETE')) {
      throw new UsageError('BAD_ARGUMENTS', `--body-file is not used with ${method}`);
    }
    try {
      const headers = signRequest({
        method,
        path,
        host,
        date,
        merchantId: values['merchant-id'] ?? '',
        keyId: values['key-id'] ?? '',
        secretBase64,
        ...(body !== undefined ? { body } : {}),
      });
      printJson(io, { headers });
    } catch (e) {
      if (e instanceof GatewayError) throw new UsageError('BAD_SECRET', e.message);
      throw e;
    }
    return Promise.resolve(EXIT_OK);
  },
};
export default command;
