/** Cross-edit rules: fields of one message that must agree with each other (and the session's terminal). */
import { currencyByAlpha, currencyByNumeric } from '../../src/money/index.js';
import { isServiceName } from '../../src/vocabulary/services.js';
import type { Finding } from '../session.js';
import { finding, tagField } from './catalog.js';
import { field, minorUnits, tagDigits, text, type MessageView } from './message.js';
import { mayHold, type SessionState } from './session-state.js';
import {
  ALLOWED_COMMENTS,
  ATTENDED_ENVIRONMENTS,
  CAT_LEVEL_BY_ATTENDANCE,
  CURRENCY_COUNTRIES,
  OPERATING_ENVIRONMENTS,
  buildsTags,
  TRANSACTION_TYPE,
} from './tables.js';

const AMOUNTS = 'orderInformation.amountDetails';

/**
 * The (amount, currency) pairs 9F02/5F2A may stand for: the amount of the message, and with a currency conversion
 * the original (family A) or foreign (family B) amount as well (spec 001, DCC).
 */
function amountPairs(view: MessageView): Array<{ amount: unknown; currency: string | undefined }> {
  const body = view.message.body;
  return [
    { amount: field(body, `${AMOUNTS}.totalAmount`), currency: text(body, `${AMOUNTS}.currency`) },
    { amount: field(body, `${AMOUNTS}.originalAmount`), currency: text(body, `${AMOUNTS}.originalCurrency`) },
    { amount: field(body, `${AMOUNTS}.foreignAmount`), currency: text(body, `${AMOUNTS}.foreignCurrency`) },
  ].filter((p) => p.currency !== undefined);
}

function amountAndCurrency(view: MessageView, state: SessionState): Finding[] {
  const out: Finding[] = [];
  const pairs = amountPairs(view);
  // A follow-on repeats its original's tags: 5F2A may be the original's currency (a reversal of a converted family A
  // authorization is in the billing currency, its repeated 5F2A the local one).
  const original = view.targetId !== undefined ? state.byGatewayId.get(view.targetId)?.view : undefined;
  const currencyPairs =
    original !== undefined && !buildsTags(view.service) ? [...pairs, ...amountPairs(original)] : pairs;
  if (buildsTags(view.service)) {
    const amount = tagDigits(view.tags, '9F02');
    const candidates = pairs
      .map((p) => minorUnits(p.amount, p.currency))
      .filter((m): m is number => m !== undefined);
    if (amount !== undefined && candidates.length > 0 && !candidates.includes(Number(amount)))
      out.push(
        finding('CE-9F02-TOTAL', tagField('9F02'), `9F02 must equal ${AMOUNTS}.totalAmount in minor units`),
      );
  }
  const code = tagDigits(view.tags, '5F2A');
  const numerics = currencyPairs
    .map((p) => (p.currency !== undefined ? currencyByAlpha(p.currency)?.numeric : undefined))
    .filter((n): n is string => n !== undefined);
  if (code !== undefined && numerics.length > 0 && !numerics.some((n) => Number(n) === Number(code)))
    out.push(
      finding(
        'CE-5F2A-CURRENCY',
        tagField('5F2A'),
        `5F2A must be the ISO 4217 numeric code of ${AMOUNTS}.currency`,
      ),
    );
  return out;
}

function dates(view: MessageView, state: SessionState): Finding[] {
  const out: Finding[] = [];
  const local = text(view.message.body, 'merchantInformation.transactionLocalDateTime');
  const date = tagDigits(view.tags, '9A');
  if (buildsTags(view.service) && local !== undefined && date !== undefined) {
    if (/^\d{14}$/.test(local) && local.slice(2, 8) !== date)
      out.push(
        finding(
          'CE-9A-LOCAL-DATE',
          tagField('9A'),
          '9A must be the date (YYMMDD) of merchantInformation.transactionLocalDateTime',
        ),
      );
  }
  const country = tagDigits(view.tags, '9F1A');
  const currencyCode = tagDigits(view.tags, '5F2A');
  const pricing =
    currencyCode !== undefined ? currencyByNumeric(currencyCode.padStart(4, '0').slice(1)) : undefined;
  const countries = pricing !== undefined ? CURRENCY_COUNTRIES[pricing.alpha] : undefined;
  if (
    buildsTags(view.service) &&
    country !== undefined &&
    countries !== undefined &&
    !countries.includes(country.padStart(4, '0').slice(1))
  )
    out.push(
      finding(
        'CE-9F1A-COUNTRY',
        tagField('9F1A'),
        `9F1A ${country} is not the country of a terminal pricing in ${pricing?.alpha ?? ''} (5F2A)`,
      ),
    );
  else if (country !== undefined && state.country !== undefined && state.country.digits !== country)
    out.push(
      finding(
        'CE-9F1A-COUNTRY',
        tagField('9F1A'),
        `9F1A differs from the terminal country sent in message ${state.country.index}`,
      ),
    );
  return out;
}

function transactionType(view: MessageView): Finding[] {
  if (!isServiceName(view.service)) return [];
  const expected = TRANSACTION_TYPE[view.service];
  const actual = tagDigits(view.tags, '9C');
  if (expected === null || actual === undefined || actual === expected) return [];
  return [finding('CE-9C-SERVICE', tagField('9C'), `9C must be ${expected} for ${view.service}`)];
}

function cardSequence(view: MessageView): Finding[] {
  if (view.tags === undefined) return [];
  const path = 'pointOfSaleInformation.emv.cardSequenceNumber';
  const sequence = text(view.message.body, path);
  const tag = tagDigits(view.tags, '5F34');
  if (!buildsTags(view.service)) {
    if (sequence !== undefined && tag !== undefined && Number(sequence) !== Number(tag))
      return [finding('CE-CARD-SEQUENCE-5F34', path, `${path} must be the value of 5F34`)];
    return [];
  }
  if (tag !== undefined && sequence === undefined)
    return [finding('CE-CARD-SEQUENCE-5F34', path, `5F34 is sent: ${path} must carry its value`)];
  if (tag === undefined && sequence !== undefined)
    return [finding('CE-CARD-SEQUENCE-5F34', path, `${path} is sent without 5F34 in the tags`)];
  if (tag !== undefined && sequence !== undefined && Number(sequence) !== Number(tag))
    return [finding('CE-CARD-SEQUENCE-5F34', path, `${path} must be the value of 5F34`)];
  return [];
}

function attendance(view: MessageView): Finding[] {
  const body = view.message.body;
  const out: Finding[] = [];
  const catLevel = text(body, 'pointOfSaleInformation.catLevel');
  const environment = text(body, 'pointOfSaleInformation.operatingEnvironment');
  const knownEnvironment = environment !== undefined && OPERATING_ENVIRONMENTS.includes(environment);
  if (catLevel !== undefined && knownEnvironment) {
    const expected = ATTENDED_ENVIRONMENTS.includes(environment)
      ? CAT_LEVEL_BY_ATTENDANCE.attended
      : CAT_LEVEL_BY_ATTENDANCE.unattended;
    if (catLevel !== expected)
      out.push(
        finding(
          'CE-CAT-LEVEL-ATTENDED',
          'pointOfSaleInformation.catLevel',
          `operatingEnvironment ${environment} needs catLevel ${expected}`,
        ),
      );
  }
  // 9F35 (Terminal Type), when sent: its second digit is 1-3 for an attended terminal, 4-6 for an unattended one
  // (EMV Book 4, Annex A1).
  const terminalType = tagDigits(view.tags, '9F35');
  const operated =
    terminalType !== undefined && /^[123][1-6]$/.test(terminalType) ? terminalType[1] : undefined;
  if (catLevel !== undefined && operated !== undefined && out.length === 0) {
    const expected = operated <= '3' ? CAT_LEVEL_BY_ATTENDANCE.attended : CAT_LEVEL_BY_ATTENDANCE.unattended;
    if (catLevel !== expected)
      out.push(
        finding(
          'CE-CAT-LEVEL-ATTENDED',
          'pointOfSaleInformation.catLevel',
          `9F35 ${terminalType} is an ${operated <= '3' ? 'attended' : 'unattended'} terminal: catLevel ${expected}`,
        ),
      );
  }
  const attended =
    catLevel === CAT_LEVEL_BY_ATTENDANCE.attended ||
    (knownEnvironment && ATTENDED_ENVIRONMENTS.includes(environment));
  const path = 'pointOfSaleInformation.isDedicatedHardwareTerminal';
  if (
    attended &&
    text(body, 'paymentInformation.card.type') === '002' &&
    field(body, path) === undefined &&
    buildsTags(view.service)
  )
    out.push(
      finding('CE-DEDICATED-HARDWARE', path, `card type 002 on an attended terminal requires ${path}`),
    );
  return out;
}

function comments(view: MessageView, state: SessionState): Finding[] {
  if (!isServiceName(view.service)) return [];
  const path = 'clientReferenceInformation.comments';
  const value = field(view.message.body, path);
  if (value === undefined) return [];
  const allowed = ALLOWED_COMMENTS[view.service];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    return [
      finding(
        'CE-COMMENTS-SERVICE',
        path,
        `${view.service} must carry comments ${allowed.map((a) => `"${a}"`).join(' or ')}`,
      ),
    ];
  if (view.service !== 'capture' || view.targetId === undefined) return [];
  // spec 001 comments table: a capture below the authorized amount says so (the gateway reverses the rest).
  const auth = state.byGatewayId.get(view.targetId);
  const amount = minorUnits(
    field(view.message.body, `${AMOUNTS}.totalAmount`),
    text(view.message.body, `${AMOUNTS}.currency`),
  );
  // After a capture of it was voided, what that capture left held is the authorization's amount.
  const held = auth?.heldAfterVoidMinor ?? auth?.authorizedMinor;
  if (held === undefined || amount === undefined || amount > held) return [];
  const expected = amount < held ? 'Parking Capture Less Than Auth' : 'Parking Capture';
  if (value === expected) return [];
  // After an increment whose outcome is unknown, a capture of a total the authorization may hold without it is of
  // exactly the authorized amount, or of less: either comment is right.
  if (
    auth !== undefined &&
    auth.heldAfterVoidMinor === undefined &&
    value === 'Parking Capture' &&
    auth.uncertainMinor.length > 0 &&
    mayHold(auth, amount)
  )
    return [];
  const what =
    auth?.heldAfterVoidMinor !== undefined ? 'what a voided capture left held' : 'the authorized amount';
  return [
    finding(
      'CE-COMMENTS-SERVICE',
      path,
      `a capture of ${amount < held ? 'less than' : 'exactly'} ${what} carries "${expected}"`,
    ),
  ];
}

/** Every cross-edit rule of one message. */
export function checkCrossEdits(view: MessageView, state: SessionState): Finding[] {
  return [
    ...amountAndCurrency(view, state),
    ...dates(view, state),
    ...transactionType(view),
    ...cardSequence(view),
    ...attendance(view),
    ...comments(view, state),
  ];
}
