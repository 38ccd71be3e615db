import type { PaymentLinkStore, StoredLink } from '../journal/index.js';

/**
 * The ids of this terminal's payment links, and which links are the terminal's own.
 *
 * A link's id is its purchase number (spec 000), unique among all the links of the merchant — and a fleet shares one
 * merchant id at the gateway, while a meter, lost-ticket or gate reference is unique only to the second on one
 * terminal. So the purchase number carries the terminal's id (`terminal.id`: 1–8 letters and digits, unique in the
 * fleet) before the reference: `PT000001_GATE20261124T130500`. The terminal id ends at the first `_` (it has none of
 * its own), so two terminals never make the same link id, and a link id of this terminal says whose it is. An `_`,
 * not a `-`: "PT000001-A" would read as a UK national insurance number (two letters, three pairs of digits, a letter
 * from A to D, separators `-`, `.` or space allowed), which the personal-data guard refuses.
 *
 * Ids of the format before terminal ids (the reference alone) stay in the journal after an upgrade and are read as
 * before; they only prove nothing about whose a link of that id at the gateway is (see {@link isOwnLink}).
 */

/** Longest link id (the gateway client's rule for the path segment: 1–64 letters, digits, `.`, `_`, `-`). */
const MAX_LINK_ID = 64;

/** What `terminal.id` is (the configuration's rule): the part of a link id before its first `_`. */
const TERMINAL_ID = /^[A-Za-z0-9]{1,8}$/;

/** A purchase number's reference part: letters, digits, `.`, `_`, `-` only (it becomes a path segment). */
export function purchaseNumberBase(reference: string): string {
  const base = reference
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_LINK_ID);
  return base === '' ? 'PARKING' : base;
}

/** Most digits a purchase number carries without a letter between them: fewer than any card number has (13). */
const MAX_DIGIT_RUN = 12;

/**
 * `id` with a letter `N` put into every run of more than 12 digits (digits joined by `.`, `_`, `-` count as one run,
 * as the personal-data guard and the gateway read them), so that no purchase number can have the shape of a card
 * number: a kiosk ticket (`YYYYMMDDhhmm` and up to 8 digits of serial) is Luhn-valid one time in ten, and the gateway
 * suspends the merchant for a Luhn-valid run of 13–19 digits (spec 000). "2026112413050001" → "202611241305N0001".
 */
export function withoutLongDigitRuns(id: string): string {
  let out = '';
  let digits = 0;
  for (const ch of id) {
    if (/[A-Za-z]/.test(ch)) digits = 0;
    else if (/\d/.test(ch)) {
      if (digits === MAX_DIGIT_RUN) {
        out += 'N';
        digits = 0;
      }
      digits += 1;
    }
    out += ch;
  }
  return out;
}

/**
 * The `n`-th purchase number of `reference` on terminal `terminalId` (`n` > 1 when the terminal used the earlier ones):
 * `<terminal id>_<reference>[-n]`, at most 64 characters (the reference part shortened to fit), with no run of more
 * than 12 digits — across the `_` after the terminal id too. The `N` that breaks a run never falls into the terminal id
 * (at most 8 characters), so the id keeps its terminal's prefix whatever the reference.
 * "PT000001", "2026112413050005" → "PT000001_202611N2413050005".
 * @throws RangeError when `terminalId` is not 1–8 letters and digits (the configuration allows nothing else).
 */
export function purchaseNumber(terminalId: string, reference: string, n = 1): string {
  if (!TERMINAL_ID.test(terminalId))
    throw new RangeError(`a terminal id in a link id is 1–8 letters and digits, got "${terminalId}"`);
  const suffix = n > 1 ? `-${n}` : '';
  let base = purchaseNumberBase(reference);
  for (;;) {
    const id = withoutLongDigitRuns(`${terminalId}_${base}${suffix}`);
    if (id.length <= MAX_LINK_ID || base.length <= 1) return id;
    base = base.slice(0, -1);
  }
}

/** Whether `linkId` is one that terminal `terminalId` makes: it begins with that terminal id and its `_`. */
export function carriesTerminalId(linkId: string, terminalId: string): boolean {
  return TERMINAL_ID.test(terminalId) && linkId.startsWith(`${terminalId}_`);
}

/**
 * Whether a link of the journal is provably this terminal's, so that the terminal may adopt it, deactivate it or
 * count its payments. Another terminal's link of the same id would belong to that terminal's customer: deactivating it
 * stops that customer paying, and counting or refunding its payment takes money the other terminal counted.
 * - `failed`: never — the gateway refused the create (an id in use, by another terminal of the merchant for one) or had
 *   no such link; whatever link of that id the gateway has is not this terminal's.
 * - `creating` (the create's outcome not known yet): only when its id carries this terminal's id — then no other
 *   terminal can have made it. A create left by the format before terminal ids may have been the other terminal's.
 * - `active`, `paid`, `deactivated`: yes — the gateway answered this terminal's create (or the id proved it).
 */
export function isOwnLink(link: StoredLink, terminalId: string): boolean {
  switch (link.state) {
    case 'failed':
      return false;
    case 'creating':
      return carriesTerminalId(link.linkId, terminalId);
    case 'active':
    case 'paid':
    case 'deactivated':
      return true;
  }
}

/** The journal's record of `linkId` when it is provably this terminal's link ({@link isOwnLink}), else undefined. */
export function ownLink(
  store: Pick<PaymentLinkStore, 'get'> | undefined,
  terminalId: string,
  linkId: string,
): StoredLink | undefined {
  const link = store?.get(linkId);
  return link !== undefined && isOwnLink(link, terminalId) ? link : undefined;
}
