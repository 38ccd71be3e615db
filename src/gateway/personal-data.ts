/**
 * The personal-data guard of payment links (spec 000, Payment links; issue 14, item 4): "address, card number,
 * national identification numbers, card verification numbers and similar must not be placed in any payment-link
 * field … A merchant found doing so has its account suspended immediately and every later transaction request is
 * rejected." One such value would stop every card payment of the merchant, so the client refuses it before a byte
 * leaves the terminal, and errs on the side of refusing: a refused link costs one customer the pay-by-phone choice.
 *
 * What is refused, in any string field of the request body (the walk covers every field, so a field added later is
 * guarded too). Text is read after Unicode NFKC normalisation, so full-width digits and letters count as ASCII ones.
 * - **Card numbers**: Luhn-valid runs of 13–19 digits of any network or none, written in groups joined by up to three
 *   non-alphanumeric characters of any kind, mixed ("4111 1111-1111.1111") — src/emv's reading of card numbers.
 * - **National ids** (and similar identifiers):
 *   US social security number `###-##-####` (dashes, spaces or dots); UK national insurance number `AB 12 34 56 C`;
 *   IBAN shapes (two letters, two digits, three to seven groups of four); French social security number (NIR, 15
 *   digits with its mod-97 key); Spanish DNI (8 digits and the check letter) and NIE (X/Y/Z, 7 digits, letter);
 *   Italian codice fiscale (16 characters, `RSSMRA85T10A562S`); and any of the words SSN, national insurance, national
 *   id, passport, tax id, NIF, DNI, NIE, BSN, PESEL, personal number followed by a token with a digit.
 * - **Addresses**: a house number before a street word ("221B Baker Street", "5 rue de Rivoli", "10 Downing St.") or
 *   after one ("Hauptstraße 5", "Via Roma 10", "Calle Mayor 7", "Damstraat 12"); a postcode (UK, US ZIP, 4–5 digit
 *   European, Dutch `1234 AB`) in the same field as a street word or a comma-separated locality; a full UK postcode
 *   ("SW1A 1AA") on its own.
 * - **Security codes**: 3–4 digits next to a card-verification word ("CVV 123", "cvc: 1234", "security code 123",
 *   "CVV2/CVC2", "CID", "CSC"), and 3–4 digit runs in text that also carries card-like facts (a card word — card,
 *   Visa, Mastercard, Amex … — with an expiry "12/27" or a masked number "**** 1111").
 *
 * Not covered (documented limits): card numbers run together with other digits without a separator, national ids
 * whose shape is only a plain digit run (German tax id, Dutch BSN, … — too close to ticket numbers; they are refused
 * when a naming word precedes them), addresses without a street word or postcode.
 */
import { containsCardNumber } from '../emv/index.js';
import { GatewayError } from './errors.js';

/** What a refused value looks like. */
export type PersonalDataKind = 'card-number' | 'national-id' | 'address' | 'security-code';

/**
 * A payment-link request that was not sent because a field holds what spec 000 forbids. `field` is its dotted path
 * in the request body (e.g. `orderInformation.lineItems[0].productName`). The value itself is never in the message.
 */
export class PersonalDataError extends GatewayError {
  override readonly name = 'PersonalDataError';
  constructor(
    readonly field: string,
    readonly kind: PersonalDataKind,
  ) {
    super(
      'LINK_PERSONAL_DATA',
      `${field} looks like ${KIND_WORDS[kind]}: spec 000 forbids personal data in payment-link fields; nothing was sent`,
    );
  }
}

const KIND_WORDS: Readonly<Record<PersonalDataKind, string>> = {
  'card-number': 'a card number',
  'national-id': 'a national identification number',
  address: 'a postal address',
  'security-code': 'a card security code',
};

const SSN = /(?<![\p{L}\p{N}])\d{3}[-\s.]\d{2}[-\s.]\d{4}(?![\p{L}\p{N}])/u;
// Same first-letter class for both letters as the gateway sandbox: a superset of the official prefix rules.
const UK_NINO = /\b[A-CEGHJ-PR-TW-Z]{2}[\s.-]?\d{2}[\s.-]?\d{2}[\s.-]?\d{2}[\s.-]?[A-D]\b/i;
const IBAN = /\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}/;
const FR_NIR = /(?<!\d)([12])\s?(\d{2})\s?(\d{2})\s?(\d{2}|2[AB])\s?(\d{3})\s?(\d{3})\s?(\d{2})(?!\d)/i;
const ES_DNI = /(?<![\p{L}\p{N}])(\d{8})[-\s]?([A-Z])(?![\p{L}\p{N}])/iu;
const ES_NIE = /(?<![\p{L}\p{N}])([XYZ])[-\s]?(\d{7})[-\s]?([A-Z])(?![\p{L}\p{N}])/iu;
const IT_CF = /\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b/i;
const ID_WORDS =
  /\b(?:ssn|social\s+security|national\s+insurance|nino|national\s+id(?:entity|entification)?|passport|tax\s*id|tin|nif|dni|nie|bsn|pesel|personal\s+(?:id|number|code)|personnummer|steuer-?id|codice\s+fiscale)\b\W{0,6}(?:no\.?|number|nr\.?|num\.?)?\W{0,4}[\p{L}\p{N}-]*\d[\p{L}\p{N} -]*/iu;

const STREET_WORDS =
  'street|st\\.?|avenue|ave\\.?|av\\.?|road|rd\\.?|lane|ln\\.?|boulevard|blvd\\.?|drive|dr\\.?|way|place|pl\\.?|court|ct\\.?|square|sq\\.?|terrace|crescent|close|gardens|highway|hwy|parkway|pkwy|row|mews|strasse|straße|str\\.?|weg|gasse|platz|allee|ring|rue|chemin|quai|impasse|allée|via|viale|piazza|corso|calle|avenida|avda\\.?|paseo|plaza|carrer|rua|straat|laan|gracht|plein|ulica|ul\\.?';
const NUMBER_THEN_STREET = new RegExp(
  `(?<![\\p{L}\\p{N}])\\d{1,5}[a-z]?,?\\s+(?:[\\p{L}.'’-]+\\s+){0,4}(?:${STREET_WORDS})(?![\\p{L}\\p{N}])`,
  'iu',
);
// "Hauptstraße 5", "Damstraat 12", "Via Roma 10", "Calle Mayor 7": the words of languages that write the number
// after the street (English ones such as "place" are left out: "Parking place 12" is a product name).
const STREET_THEN_NUMBER = new RegExp(
  `(?:\\p{L}*(?:strasse|straße|str\\.|weg|gasse|platz|allee|straat|laan|gracht|plein)|(?<!\\p{L})(?:via|viale|piazza|corso|calle|avenida|avda\\.?|paseo|plaza|carrer|rua|rue|chemin|quai|ulica|ul\\.)\\s+(?:[\\p{L}.'’-]+\\s+){0,4})\\s*\\d{1,5}[a-z]?(?![\\p{L}\\p{N}])`,
  'iu',
);
const STREET_WORD = new RegExp(`(?<![\\p{L}])(?:${STREET_WORDS})(?![\\p{L}])`, 'iu');
const UK_POSTCODE = /\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b/i;
// ZIP and ZIP+4, 5-digit European codes (with a country letter: "D-10115"), Dutch "1234 AB".
const POSTCODE =
  /(?<![\p{L}\p{N}])(?:\d{5}(?:-\d{4})?|\d{4}\s?[A-Z]{2}|[A-Z]{1,2}-\d{4,5})(?![\p{L}\p{N}])/iu;
// 4-digit codes (Belgium, Switzerland, Austria, Denmark …) only beside a street word: alone they are years and bays.
const SHORT_POSTCODE = /(?<![\p{L}\p{N}])\d{4}(?![\p{L}\p{N}])/u;
const LOCALITY = /\p{L}{2,}\s*,|,\s*\p{L}{2,}/u;

const CVV_WORDS =
  /(?<!\p{L})(?:cvv2?|cvc2?|cvn|cav2?|cid|csc|security\s*code|card\s*(?:verification|security)(?:\s*(?:value|code|number))?|card\s*code|verification\s*code)\W{0,6}\d{3,4}(?!\d)/iu;
const CARD_WORDS =
  /(?<![\p{L}])(?:card|visa|master\s?card|amex|american\s+express|maestro|discover|diners|jcb|unionpay|credit|debit)(?![\p{L}])/iu;
const EXPIRY = /(?<!\d)(?:0[1-9]|1[0-2])\s?\/\s?(?:\d{2}|20\d{2})(?!\d)/;
const MASKED_PAN = /[*xX•]{4}[\s-]?\d{4}/;
const SHORT_CODE = /(?<![\p{N}])\d{3,4}(?![\p{N}])/gu;

function frenchNirKeyValid(m: RegExpExecArray): boolean {
  const [, sex, yy, mm, dept, commune, order, key] = m;
  const deptDigits = (dept ?? '').toUpperCase().replace('2A', '19').replace('2B', '18');
  const body = `${sex}${yy}${mm}${deptDigits}${commune}${order}`;
  return 97 - Number(BigInt(body) % 97n) === Number(key);
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

function nationalId(text: string): boolean {
  if (SSN.test(text) || UK_NINO.test(text) || IBAN.test(text) || IT_CF.test(text) || ID_WORDS.test(text))
    return true;
  const nir = FR_NIR.exec(text);
  if (nir && frenchNirKeyValid(nir)) return true;
  const dni = ES_DNI.exec(text);
  if (dni && DNI_LETTERS[Number(dni[1]) % 23] === dni[2]?.toUpperCase()) return true;
  const nie = ES_NIE.exec(text);
  if (nie) {
    const prefix = { X: '0', Y: '1', Z: '2' }[(nie[1] ?? '').toUpperCase() as 'X' | 'Y' | 'Z'];
    if (DNI_LETTERS[Number(`${prefix}${nie[2]}`) % 23] === nie[3]?.toUpperCase()) return true;
  }
  return false;
}

function address(text: string): boolean {
  if (NUMBER_THEN_STREET.test(text) || STREET_THEN_NUMBER.test(text) || UK_POSTCODE.test(text)) return true;
  if (!STREET_WORD.test(text)) return POSTCODE.test(text) && LOCALITY.test(text);
  return POSTCODE.test(text) || SHORT_POSTCODE.test(text);
}

function securityCode(text: string): boolean {
  if (CVV_WORDS.test(text)) return true;
  if (!CARD_WORDS.test(text) && !MASKED_PAN.test(text)) return false;
  const cardLike = EXPIRY.test(text) || MASKED_PAN.test(text);
  if (!cardLike) return false;
  // A masked number's own last four digits are not a code; anything else of 3–4 digits is.
  const rest = text.replace(MASKED_PAN, ' ').replace(EXPIRY, ' ');
  return [...rest.matchAll(SHORT_CODE)].length > 0;
}

/** What `text` looks like when it holds personal data; undefined when it looks clean. */
export function personalDataIn(text: string): PersonalDataKind | undefined {
  const t = text.normalize('NFKC');
  if (containsCardNumber(t, { separators: 'any', knownNetworkOnly: false })) return 'card-number';
  if (securityCode(t)) return 'security-code';
  if (nationalId(t)) return 'national-id';
  if (address(t)) return 'address';
  return undefined;
}

/**
 * Walks every string (and number) of a request body and throws {@link PersonalDataError} naming the first field that
 * holds personal data. Paths are dotted, array items as `[i]` (`orderInformation.lineItems[0].productName`).
 */
export function assertNoPersonalData(body: unknown, path = ''): void {
  if (typeof body === 'string' || typeof body === 'number') {
    const kind = personalDataIn(String(body));
    if (kind !== undefined) throw new PersonalDataError(path || '(body)', kind);
    return;
  }
  if (Array.isArray(body)) {
    body.forEach((item, i) => assertNoPersonalData(item, `${path}[${i}]`));
    return;
  }
  if (typeof body === 'object' && body !== null) {
    for (const [key, value] of Object.entries(body)) {
      const field = path ? `${path}.${key}` : key;
      // A key can carry text too (a free-form map); it is checked like a value.
      const keyKind = personalDataIn(key);
      if (keyKind !== undefined) throw new PersonalDataError(field, keyKind);
      assertNoPersonalData(value, field);
    }
  }
}
