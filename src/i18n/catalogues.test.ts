import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { CATALOGUES, MESSAGE_KEYS } from './catalogues.js';
import { BASE_LOCALE, intlLocale, SUPPORTED_LOCALES, type SupportedLocale } from './locales.js';

type Ast = ReturnType<IntlMessageFormat['getAst']>;

/** What a message asks of its parameters: the names it places and, per plural, the categories it covers. */
interface Shape {
  placeholders: Set<string>;
  plurals: { name: string; categories: string[] }[];
}

function shapeOf(ast: Ast, shape: Shape = { placeholders: new Set(), plurals: [] }): Shape {
  for (const element of ast) {
    const e = element as unknown as {
      type: number;
      value?: unknown;
      options?: Record<string, { value: Ast }>;
      pluralType?: string;
      children?: Ast;
    };
    // Literals (type 0) and `#` (type 7) name no parameter; every other element names one in `value`.
    if (typeof e.value === 'string' && e.type !== 0 && e.type !== 7) shape.placeholders.add(e.value);
    if (e.options !== undefined) {
      if (e.pluralType === 'cardinal')
        shape.plurals.push({
          name: e.value as string,
          categories: Object.keys(e.options).filter((k) => !k.startsWith('=')),
        });
      for (const option of Object.values(e.options)) shapeOf(option.value, shape);
    }
    if (e.children !== undefined) shapeOf(e.children, shape);
  }
  return shape;
}

function parse(locale: SupportedLocale, key: (typeof MESSAGE_KEYS)[number]): Shape {
  return shapeOf(new IntlMessageFormat(CATALOGUES[locale][key], intlLocale(locale)).getAst());
}

describe('message catalogues', () => {
  it.each(SUPPORTED_LOCALES.map((l) => [l]))('%s has exactly the keys of en_GB', (locale) => {
    expect(Object.keys(CATALOGUES[locale]).sort()).toEqual([...MESSAGE_KEYS].sort());
  });

  it.each(SUPPORTED_LOCALES.map((l) => [l]))(
    '%s: every message parses as ICU and places the same parameters as en_GB',
    (locale) => {
      for (const key of MESSAGE_KEYS) {
        const base = parse(BASE_LOCALE, key);
        const own = parse(locale, key);
        expect([...own.placeholders].sort(), key).toEqual([...base.placeholders].sort());
      }
    },
  );

  it.each(SUPPORTED_LOCALES.map((l) => [l]))(
    "%s: every plural covers the locale's CLDR plural categories",
    (locale) => {
      const categories = new Intl.PluralRules(intlLocale(locale)).resolvedOptions().pluralCategories;
      for (const key of MESSAGE_KEYS)
        for (const plural of parse(locale, key).plurals)
          expect(plural.categories, `${key}: ${plural.name}`).toEqual(
            expect.arrayContaining([...categories]),
          );
    },
  );

  it('finds a missing parameter and a missing plural category (the check itself)', () => {
    const shape = shapeOf(
      new IntlMessageFormat('{a} {n, plural, one {# x} other {# {b}}}', 'pl-PL').getAst(),
    );
    expect([...shape.placeholders].sort()).toEqual(['a', 'b', 'n']);
    expect(shape.plurals).toEqual([{ name: 'n', categories: ['one', 'other'] }]);
    expect(() => new IntlMessageFormat('{n, plural, one {# x}', 'en-GB')).toThrow();
  });
});
