/**
 * Whether a text shows and prints as something: it holds a character other than blanks and control characters
 * (which print as nothing or as one space: devices/printer layout.ts `printableText`, and show as nothing on a
 * screen). Written once for the configured receipt texts (src/config/schema.ts) and the gateway's DCC disclaimer
 * (./dcc-disclaimer.ts), each of which must never reach a customer as nothing.
 */
export function showsSomething(text: string): boolean {
  return /[^\s\p{Cc}]/u.test(text);
}
