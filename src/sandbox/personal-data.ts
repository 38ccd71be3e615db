/**
 * The personal-data rule of spec 000 (Payment links): address, card number, national identification numbers, card
 * verification numbers and similar must not be placed in any payment-link field. This finds them.
 */
import { luhnValid } from './card.js';

/** Keys whose non-empty value is personal data whatever it looks like (compared without case and separators). */
const PERSONAL_KEYS = [
  'address',
  'address1',
  'address2',
  'street',
  'ssn',
  'nationalid',
  'nationalidentificationnumber',
  'passport',
  'passportnumber',
  'taxid',
  'cvv',
  'cvc',
  'cvv2',
  'securitycode',
  'cardnumber',
  'pan',
  'iban',
  'dateofbirth',
];

const CARD_RUN = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;
/** US social security number, UK national insurance number, IBAN. */
const NATIONAL_IDS = [
  /\b\d{3}-\d{2}-\d{4}\b/,
  /\b[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b/i,
  /\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b/,
];
const STREET_ADDRESS =
  /\b\d{1,5}\s+(?:[A-Za-zÀ-ÿ.'-]+\s+){0,4}(?:street|st\.?|avenue|ave\.?|road|rd\.?|lane|ln\.?|boulevard|blvd\.?|drive|dr\.?|strasse|straße|rue|via|calle)\b/i;

/** The dotted path of the first field holding personal data, with what it looks like; undefined when clean. */
export function findPersonalData(value: unknown, path = ''): { field: string; kind: string } | undefined {
  if (typeof value === 'string' || typeof value === 'number') {
    const text = String(value);
    for (const m of text.matchAll(CARD_RUN)) {
      if (luhnValid(m[0].replace(/[ -]/g, ''))) return { field: path, kind: 'card number' };
    }
    if (NATIONAL_IDS.some((re) => re.test(text)))
      return { field: path, kind: 'national identification number' };
    if (STREET_ADDRESS.test(text)) return { field: path, kind: 'address' };
    return undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findPersonalData(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const field = path ? `${path}.${k}` : k;
      const norm = k.toLowerCase().replace(/[^a-z0-9]/g, '');
      if (PERSONAL_KEYS.includes(norm) && v !== '' && v !== null && v !== undefined)
        return { field, kind: k };
      const found = findPersonalData(v, field);
      if (found) return found;
    }
  }
  return undefined;
}
