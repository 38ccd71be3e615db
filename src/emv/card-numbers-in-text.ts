/**
 * Card numbers inside free text: the one reading shared by the receipt text cleaner (src/host/receipts.ts) and the
 * personal-data guard of payment links (src/gateway/personal-data.ts). Luhn and the network table are those of
 * card.ts.
 *
 * Text is read as runs of digit groups joined by separators; a card number is a sequence of whole groups whose digits
 * (13–19 of them) pass Luhn. Groups are never split: a 22-digit gateway id stays whole, and a PAN run together with
 * other digits without any separator is not recognised.
 */
import { detectNetwork, luhnValid } from './card.js';

/** How card numbers are looked for. */
export interface CardNumberSearch {
  /**
   * What may join two digit groups of one number: `space-or-dash` one space or dash ("4111 1111 1111 1111", the
   * texts the terminal writes itself); `any` up to three characters that are neither letters nor digits, mixed
   * freely ("4111.1111-1111 1111", "4111 / 1111 / …", for text that comes from elsewhere).
   */
  separators?: 'space-or-dash' | 'any';
  /**
   * Only numbers whose prefix belongs to a card network count (default true), so that ticket numbers and timestamps
   * (they start with the year, a prefix no network issues under) stay readable. False: any Luhn-valid run counts.
   */
  knownNetworkOnly?: boolean;
}

const RUNS = {
  'space-or-dash': /\d+(?:[ -]\d+)*/g,
  any: /\d+(?:[^\p{L}\p{N}]{1,3}\d+)*/gu,
} as const;

/** Whether `digits` (digits only) is a card number: 13–19 digits, Luhn-valid, of a known network unless told not to. */
export function isCardNumber(digits: string, knownNetworkOnly = true): boolean {
  return (
    digits.length >= 13 &&
    digits.length <= 19 &&
    luhnValid(digits) &&
    (!knownNetworkOnly || detectNetwork(digits).network !== 'unknown')
  );
}

/** The groups and separators of one run, and which groups belong to a card number. */
function markRun(run: string, search: CardNumberSearch): { parts: string[]; masked: boolean[] } {
  const parts = run.split(/(\D+)/u);
  const groups = parts.filter((_, i) => i % 2 === 0);
  const masked = groups.map(() => false);
  const known = search.knownNetworkOnly ?? true;
  for (let i = 0; i < groups.length; i++) {
    let digits = '';
    for (let j = i; j < groups.length && digits.length <= 19; j++) {
      digits += groups[j] ?? '';
      if (isCardNumber(digits, known)) masked.fill(true, i, j + 1);
    }
  }
  return { parts, masked };
}

/** Whether `text` holds a card number. */
export function containsCardNumber(text: string, search: CardNumberSearch = {}): boolean {
  for (const m of text.matchAll(RUNS[search.separators ?? 'space-or-dash'])) {
    if (markRun(m[0], search).masked.includes(true)) return true;
  }
  return false;
}

/**
 * `text` with every card number replaced by `mask`; the separators inside a masked number go with it
 * ("card 4761 7390 0101 0119 used" → "card **** used").
 */
export function maskCardNumbers(text: string, mask = '****', search: CardNumberSearch = {}): string {
  return text.replace(RUNS[search.separators ?? 'space-or-dash'], (run) => {
    const { parts, masked } = markRun(run, search);
    if (!masked.includes(true)) return run;
    const groups = parts.filter((_, i) => i % 2 === 0);
    let out = '';
    groups.forEach((group, i) => {
      if (i > 0 && !(masked[i] && masked[i - 1])) out += parts[2 * i - 1] ?? ' ';
      if (!masked[i]) out += group;
      else if (i === 0 || !masked[i - 1]) out += mask;
    });
    return out;
  });
}
