/**
 * JSON text of parsed request bodies, written by the sandbox itself where a body is serialised on every request (the
 * canonical text of its fingerprint, ids.ts; its masked copy, masking.ts): the same text `JSON.stringify` gives.
 */

/**
 * What may make `JSON.stringify` escape a character of a string: a quote, a backslash, a control character (it
 * escapes U+0000–U+001F) or a lone surrogate. Without any, the JSON text of a string is the string in quotes; with one,
 * `JSON.stringify` itself writes it.
 */
const ESCAPED_IN_JSON = /["\\\p{Cc}\p{Cs}]/u;

/** `JSON.stringify(s)`, without calling it for the usual string that needs no escape. */
export function jsonString(s: string): string {
  return ESCAPED_IN_JSON.test(s) ? JSON.stringify(s) : `"${s}"`;
}
