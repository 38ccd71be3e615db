import { createHash } from 'node:crypto';
import type { CaseResult } from '../results.js';
import { CAPTURE_FORMAT } from '../session.js';

/** A case id that is a file name as it is: the pack schema allows only these, but the report does not rely on it. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The base file name (no extension) of each case's evidence, in case order. An id made of `[A-Za-z0-9._-]` (not
 * starting with a dot, at most 100 characters) is used as it is; any other id, and a second case whose id names the
 * same file on a case-insensitive file system, gets `case-<position>-<hash of the id>` instead, so no id can reach
 * outside `cases/` or overwrite another case's evidence.
 */
export function caseFileNames(cases: readonly Pick<CaseResult, 'id'>[]): string[] {
  const taken = new Set<string>();
  return cases.map(({ id }, position) => {
    let name =
      SAFE_NAME.test(id) && !taken.has(id.toLowerCase())
        ? id
        : `case-${String(position + 1).padStart(3, '0')}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
    // Only a pathological pack (an id equal to another case's fallback name) gets here.
    while (taken.has(name.toLowerCase())) name = `${name}-${position + 1}`;
    taken.add(name.toLowerCase());
    return name;
  });
}

/** One message of a capture file: what `certify check` reads (certification/session.ts, `parseSession`). */
export interface CaptureMessage {
  method: string;
  path: string;
  body: Record<string, unknown>;
  response?: unknown;
  httpStatus: number | null;
  at: string;
}

/** `cases/<ID>.capture.json`: the case's session in the format `certify check FILE` accepts. */
export interface CaptureFile {
  format: typeof CAPTURE_FORMAT;
  case: string;
  messages: CaptureMessage[];
}

/** The capture file of one case: its messages in the order sent, masked as the runner captured them. */
export function captureFile(result: CaseResult): CaptureFile {
  return {
    format: CAPTURE_FORMAT,
    case: result.id,
    messages: [...result.messages]
      .sort((a, b) => a.index - b.index)
      .map((m) => ({
        method: m.method,
        path: m.path,
        body: m.body,
        ...(m.response !== undefined ? { response: m.response } : {}),
        httpStatus: m.httpStatus,
        at: m.at,
      })),
  };
}
