/**
 * Text into XML and HTML. Both reports are read by tools that stop at the first malformed byte (a CI server's JUnit
 * parser, the analyst's browser printing to PDF), and every value comes from a terminal under test or a test host, so
 * nothing is interpolated without going through here.
 */

/**
 * Characters XML 1.0 does not allow anywhere, not even as character references (XML 1.0 §2.2 "Char"): C0 controls
 * other than tab, line feed and carriage return, lone surrogates, U+FFFE and U+FFFF. HTML calls the same code points
 * parse errors, so both reports drop them.
 */
// With the `u` flag a surrogate pair is one code point, so the surrogate range matches only lone halves.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/gu;

/** `s` without the code points XML 1.0 forbids. */
export function stripForbiddenChars(s: string): string {
  return s.replace(FORBIDDEN, '');
}

const TEXT_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `s` as element content of XML or HTML: forbidden code points dropped, markup characters escaped. */
export function escapeText(s: string): string {
  return stripForbiddenChars(s).replace(/[&<>"']/g, (c) => TEXT_ENTITIES[c] ?? c);
}

/**
 * `s` as a quoted attribute value of XML or HTML. Tab, line feed and carriage return become character references
 * because an XML parser normalises them to spaces inside attributes (XML 1.0 §3.3.3), and a failure message that
 * lists one problem per line should keep its lines.
 */
export function escapeAttribute(s: string): string {
  return escapeText(s).replace(/[\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);
}
