import { describe, expect, it } from 'vitest';
import { escapeAttribute, escapeText, stripForbiddenChars } from './markup.js';

describe('escapeText', () => {
  it('escapes every markup character', () => {
    expect(escapeText(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('drops the control characters XML 1.0 forbids and keeps tab, line feed and carriage return', () => {
    expect(escapeText('a\u0000b\u0008c\u000Bd\u001Fe\t\n\rf')).toBe('abcde\t\n\rf');
  });
});

describe('stripForbiddenChars', () => {
  it('drops lone surrogates and U+FFFE/U+FFFF but keeps characters outside the BMP', () => {
    expect(stripForbiddenChars('a\uD800b\uDC00c\uFFFEd\uFFFF😀é')).toBe('abcd😀é');
  });
});

describe('escapeAttribute', () => {
  it('keeps line breaks and tabs as character references so an XML parser does not turn them into spaces', () => {
    expect(escapeAttribute('one\ntwo\tthree\r"')).toBe('one&#10;two&#9;three&#13;&quot;');
  });
});
