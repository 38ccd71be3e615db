/**
 * The sandbox's bounds under abuse (README, section "Sandbox gateway", "Limits"): how large a request body may be,
 * how much of a rejected request the ledger keeps, how many faults may be queued, how deep a JSON body may nest, and
 * which content type an API body must carry. Pure values and functions; the server and the store apply them.
 */

/** Largest request body read; a larger one is answered 413 without being buffered. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Requests kept in `unmatchedRequests` (authentication failures, rejected requests, faults before commit): the last ones. */
export const MAX_UNMATCHED_REQUESTS = 1000;
/** Bytes of the masked body JSON kept for a rejected or unmatched request; beyond, the body is cut and marked. */
export const MAX_KEPT_BODY_BYTES = 4096;
/** Faults that may wait in the queue at once. */
export const MAX_QUEUED_FAULTS = 1000;
/** Deepest nesting of objects and arrays accepted in a JSON body. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when the JSON text in `bytes` nests objects or arrays deeper than `max` levels. A byte scan without recursion
 * (brackets inside strings do not count), so that a body nested thousands of levels deep is refused before anything
 * recursive (parsing, masking, validation, serialising the ledger) sees it. Says nothing about whether the text is
 * valid JSON.
 */
export function jsonDepthExceeds(bytes: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * True for a `content-type` of `application/json`, with or without parameters (`; charset=utf-8`), in any case.
 * reference/gateway.md and the specs say nothing of the answer to another content type; the sandbox refuses one as
 * 400 INVALID_REQUEST naming the content type (server.ts).
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = header.split(';', 1)[0] ?? '';
  return mediaType.trim().toLowerCase() === 'application/json';
}

/** What the ledger keeps of a rejected request's masked body: the text itself, or its first bytes, marked cut. */
export interface KeptBody {
  json: string;
  /** Byte length of the whole masked body when it was cut. */
  truncatedFrom?: number;
}

/**
 * Cuts masked body JSON longer than `limit` bytes to at most its first `limit` bytes, whole characters (a copy: the
 * whole text is not retained).
 */
export function keptBody(json: string, limit: number = MAX_KEPT_BODY_BYTES): KeptBody {
  if (json.length <= limit / 3) return { json };
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length <= limit) return { json };
  // Cut at a character boundary: never inside a UTF-8 sequence (its continuation bytes are 10xxxxxx).
  let end = limit;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { json: bytes.subarray(0, end).toString('utf8'), truncatedFrom: bytes.length };
}
