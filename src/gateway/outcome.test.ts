import { describe, expect, it } from 'vitest';
import { classifyPaymentAnswer, errorForStatus, fieldProblems, parseJsonBody } from './outcome.js';
import type { PreparedRequest } from './services/types.js';

/**
 * The gateway answers in the currency of the request (the sandbox always does). An answer whose amount is stated in
 * another currency is an answer nobody documented: read as minor units of the request's currency, 12.50 USD would be
 * held, captured and reversed as 1250 euro cents.
 */
const sale = (currency: string, amountMinor: number): PreparedRequest => ({
  service: 'sale',
  method: 'POST',
  path: '/pts/v2/payments',
  body: Buffer.from('{}'),
  comments: 'SALE',
  transactionId: 't-1',
  amountMinor,
  currency,
  moneyMoving: true,
});
const answer = (body: unknown): Buffer => Buffer.from(JSON.stringify(body));

describe('an approval stated in another currency than requested', () => {
  it('in the same currency (in any case), is approved with its amount', () => {
    const o = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      answer({
        id: 'g1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '12.50', currency: 'eur' } },
      }),
    );
    expect(o).toMatchObject({ kind: 'approved', authorizedMinor: 1250, partial: false });
  });

  it('12.50 USD for a EUR 12.50 sale is not reported as an approval of 1250 EUR minor units', () => {
    const o = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      answer({
        id: 'g1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '12.50', currency: 'USD' } },
      }),
    );
    expect(o.kind).toBe('unknown');
  });

  it('1250 JPY for a EUR 12.50 sale is not a full approval of 1250 EUR minor units either', () => {
    const o = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      answer({
        id: 'g1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '1250', currency: 'JPY' } },
      }),
    );
    expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
  });

  it('a reversal whose reversed amount is stated in another currency is unreadable too', () => {
    const o = classifyPaymentAnswer(
      {
        ...sale('EUR', 1250),
        service: 'reversal',
        path: '/pts/v2/payments/g1/reversals',
        transactionId: undefined,
      },
      201,
      answer({
        id: 'r1',
        status: 'REVERSED',
        reversalAmountDetails: { reversedAmount: '12.50', currency: 'USD' },
      }),
    );
    expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE' } });
  });
});

describe('a risk decline (AUTHORIZED_RISK_DECLINED): the issuer holds what it authorized', () => {
  const riskDeclined = (amountDetails: Record<string, unknown> | undefined) =>
    classifyPaymentAnswer(
      sale('EUR', 321),
      201,
      answer({
        id: 'g1',
        status: 'AUTHORIZED_RISK_DECLINED',
        errorInformation: { reason: 'DECISION_PROFILE_REJECT' },
        ...(amountDetails !== undefined ? { orderInformation: { amountDetails } } : {}),
      }),
    );

  it('is a decline that states the amount held, which its reversal carries', () => {
    expect(riskDeclined({ authorizedAmount: '1.60', currency: 'EUR' })).toMatchObject({
      kind: 'declined',
      gatewayId: 'g1',
      status: 'AUTHORIZED_RISK_DECLINED',
      reason: 'DECISION_PROFILE_REJECT',
      authorizedMinor: 160,
    });
  });

  it('is still a decline when the amount is absent or unreadable, without an amount of its own', () => {
    for (const details of [
      undefined,
      { authorizedAmount: 'x', currency: 'EUR' },
      { authorizedAmount: '1.60', currency: 'USD' },
      // More than the 3.21 asked: minor units, not an amount of EUR.
      { authorizedAmount: '321', currency: 'EUR' },
    ]) {
      const o = riskDeclined(details);
      expect(o).toMatchObject({ kind: 'declined', status: 'AUTHORIZED_RISK_DECLINED' });
      expect(o).not.toHaveProperty('authorizedMinor');
    }
  });
});

describe('a payment held for review (PENDING_REVIEW): the review may yet accept and charge it', () => {
  it('is a decline that states the amount held, which its reversal carries', () => {
    const o = classifyPaymentAnswer(
      sale('EUR', 321),
      201,
      answer({
        id: 'g1',
        status: 'PENDING_REVIEW',
        orderInformation: { amountDetails: { authorizedAmount: '3.21', currency: 'EUR' } },
      }),
    );
    expect(o).toMatchObject({
      kind: 'declined',
      gatewayId: 'g1',
      status: 'PENDING_REVIEW',
      authorizedMinor: 321,
    });
  });

  it('without an id to reverse it by: unknown (a timeout reversal or void gives it up)', () => {
    for (const id of [undefined, 'g 1']) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        answer({ ...(id !== undefined ? { id } : {}), status: 'PENDING_REVIEW' }),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
  });

  it('answering an increment (a status not documented for it): unknown, its timeout reversal takes it back', () => {
    const increment: PreparedRequest = { ...sale('EUR', 500), service: 'incremental', method: 'PATCH' };
    for (const status of ['PENDING_REVIEW', 'AUTHORIZED_RISK_DECLINED']) {
      const o = classifyPaymentAnswer(increment, 201, answer({ id: 'g2', status }));
      expect(o).toMatchObject({ kind: 'unknown', error: { outcomeUnknown: true } });
    }
  });
});

/** Answers nobody documented: each is a typed outcome, and one that cannot be read is "unknown", never a guess. */
describe('an answer that cannot be read as it stands', () => {
  const raw = (text: string): Buffer => Buffer.from(text, 'utf8');
  const authorized = (amountDetails: Record<string, unknown>, id: unknown = 'g1') =>
    answer({ id, status: 'AUTHORIZED', orderInformation: { amountDetails } });

  it('states its currency as something else than a currency code: unknown, not read as the request currency', () => {
    for (const currency of [840, 978, true, { code: 'EUR' }]) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        authorized({ authorizedAmount: '12.50', currency }),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
  });

  it('authorizes more than was asked (an amount in minor units, or with the wrong exponent): unknown', () => {
    for (const authorizedAmount of ['1250', 1250, '125.0']) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        authorized({ authorizedAmount, currency: 'EUR' }),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
    const avr = classifyPaymentAnswer(
      { ...sale('EUR', 0), service: 'avr' },
      201,
      authorized({ authorizedAmount: '1.00', currency: 'EUR' }),
    );
    expect(avr).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE' } });
  });

  it('processes more than was asked (a capture of 9.00 answered with 900.00): unknown', () => {
    const o = classifyPaymentAnswer(
      { ...sale('EUR', 900), service: 'capture', path: '/pts/v2/payments/g1/captures' },
      201,
      answer({
        id: 'c1',
        status: 'PENDING',
        orderInformation: { amountDetails: { totalAmount: '900', currency: 'EUR' } },
      }),
    );
    expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
  });

  it('approves with an id the terminal cannot keep or send back: unknown (its follow-ons could not name it)', () => {
    for (const id of ['g1/../../refunds', 'g 1', 'x'.repeat(65), 7e21]) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        authorized({ authorizedAmount: '12.50', currency: 'EUR' }, id),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
    // An id sent as a JSON number loses its last digits in any parser that reads numbers as doubles.
    const numeric = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      raw('{"id":7000000000000000000001,"status":"AUTHORIZED"}'),
    );
    expect(numeric).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE' } });
  });

  it('risk-declines without an id to reverse the hold by: unknown (a timeout reversal releases it)', () => {
    for (const id of [undefined, 'g 1']) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        answer({ ...(id !== undefined ? { id } : {}), status: 'AUTHORIZED_RISK_DECLINED' }),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
  });

  it('declines with an id the terminal cannot keep: a decline without the id', () => {
    const o = classifyPaymentAnswer(sale('EUR', 1250), 201, answer({ id: 'g 1', status: 'DECLINED' }));
    expect(o).toMatchObject({ kind: 'declined', status: 'DECLINED' });
    expect(o).not.toHaveProperty('gatewayId');
  });

  it('names a key twice (which one counts is up to the parser): unknown, whichever comes last', () => {
    for (const text of [
      '{"id":"g1","status":"DECLINED","status":"AUTHORIZED"}',
      '{"id":"g1","status":"AUTHORIZED","status":"DECLINED"}',
      '{"id":"g1","status":"AUTHORIZED","orderInformation":{"amountDetails":{"authorizedAmount":"1.00","authorizedAmount":"12.50","currency":"EUR"}}}',
      '{"id":"g1","status":"AUTHORIZED","st\\u0061tus":"DECLINED"}',
    ]) {
      const o = classifyPaymentAnswer(sale('EUR', 1250), 201, raw(text));
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    }
    // The same names in different objects, or in the objects of an array, are no duplicates.
    const fine = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      raw(
        '{"id":"g1","status":"AUTHORIZED","a":[{"id":"x"},{"id":"y"}],"orderInformation":{"amountDetails":{"authorizedAmount":"12.50","currency":"EUR"},"currency":"x"}}',
      ),
    );
    expect(fine).toMatchObject({ kind: 'approved', gatewayId: 'g1', authorizedMinor: 1250 });
  });

  it('redirects, answers 2xx without a body, with a body that is not JSON, or with JSON that is not an object: unknown', () => {
    const cases: [number, string][] = [
      [301, ''],
      [302, '{"status":"AUTHORIZED","id":"g1"}'],
      [307, ''],
      [201, ''],
      [201, '<html>ok</html>'],
      [201, '["AUTHORIZED"]'],
      [201, '"AUTHORIZED"'],
      [201, 'null'],
      [201, '{"id":"g1","status":"AUTHORIZED"'],
      [202, '{"id":"g1","status":"AUTHORIZED"}'],
      [204, ''],
    ];
    for (const [httpStatus, text] of cases) {
      const o = classifyPaymentAnswer(sale('EUR', 1250), httpStatus, raw(text));
      expect(o).toMatchObject({ kind: 'unknown', error: { outcomeUnknown: true } });
    }
  });

  it('states huge amounts: unknown, never a rounded number', () => {
    for (const authorizedAmount of [
      1e21,
      '99999999999999999999.99',
      '9007199254740993',
      '1e3',
      '-12.50',
      '12.505',
    ]) {
      const o = classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        authorized({ authorizedAmount, currency: 'EUR' }),
      );
      expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE' } });
    }
    // A number past 2^53 in the JSON text itself: read as a double, it is not the amount sent.
    const past = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      raw(
        '{"id":"g1","status":"AUTHORIZED","orderInformation":{"amountDetails":{"authorizedAmount":90071992547409.93,"currency":"EUR"}}}',
      ),
    );
    expect(past).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE' } });
  });
});

describe('parseJsonBody and keys named twice', () => {
  it('reads keys as keys only: text inside strings, and equal names in other objects or array items, are no duplicates', () => {
    for (const text of [
      '{"a":"\\"a\\":1,{\\"a\\":2}","b":{"a":1}}',
      '{"a":[{"a":1},{"a":2}],"b":[["a","a"]],"c":{"b":{"c":1}}}',
      '{"a\\\\":1,"a":2}',
      '[{"a":1},{"a":1}]',
      '{}',
      '{"a:b":"c:d","e":"\\":","f":{"g":":"}}',
      '{"__proto__":{"a":1},"b":2}',
    ]) {
      expect(parseJsonBody(Buffer.from(text)), text).toEqual(JSON.parse(text));
    }
  });

  it('refuses an object that names a key twice at any depth', () => {
    for (const text of [
      '{"a":1,"a":1}',
      '{"x":[{"a":1,"b":2,"a":3}]}',
      '{"a\\u0062":1,"ab":2}',
      // The object the first naming held is gone from what JSON.parse made, its keys with it.
      '{"a":{"b":1,"c":2},"a":3}',
      '{"a":{"b":1},"a":{"c":1}}',
      '{"__proto__":1,"__proto__":2}',
    ]) {
      expect(parseJsonBody(Buffer.from(text)), text).toBeUndefined();
    }
  });

  it('reads nesting as deep as JSON.parse does, without recursion', () => {
    const deep = (inner: string) => Buffer.from(`${'['.repeat(100_000)}${inner}${']'.repeat(100_000)}`);
    expect(parseJsonBody(deep('{"a":1,"a":2}'))).toBeUndefined();
    expect(parseJsonBody(deep('{"a":1,"b":2}'))).toBeInstanceOf(Array);
  });

  it('reads the quotes and colons of the bytes as the text has them, undecodable bytes included', () => {
    // 0xC3 starts a two-byte character that the quote after it does not continue: U+FFFD, then the quote.
    const bytes = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xc3]), Buffer.from('","b":1}')]);
    expect(parseJsonBody(bytes)).toEqual({ a: 'x\ufffd', b: 1 });
    const twice = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xe2, 0x82]), Buffer.from('","a":1}')]);
    expect(parseJsonBody(twice)).toBeUndefined();
  });
});

describe('the reason of a decline or a rejection', () => {
  it('is the code the answer states, or its status when the answer states something that is no code', () => {
    const declined = (reason: unknown) =>
      classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        answer({ id: 'g1', status: 'DECLINED', errorInformation: { reason } }),
      );
    expect(declined('INSUFFICIENT_FUND')).toMatchObject({ kind: 'declined', reason: 'INSUFFICIENT_FUND' });
    // The journal keeps at most 512 characters of a reason: a longer one made the outcome impossible to record.
    for (const odd of ['X'.repeat(600), 'two words', 'NUL\u0000', 42]) {
      expect(declined(odd), JSON.stringify(odd)).toMatchObject({ kind: 'declined', reason: 'DECLINED' });
    }
    const rejected = classifyPaymentAnswer(
      sale('EUR', 1250),
      400,
      answer({ status: 'INVALID_REQUEST', reason: 'Y'.repeat(600) }),
    );
    expect(rejected).toMatchObject({ kind: 'rejected', reason: 'INVALID_REQUEST' });
    // A 502's reason goes into the error and its message, which the logs carry.
    expect(errorForStatus(502, { reason: 'SERVER_TIMEOUT' })).toMatchObject({ reason: 'SERVER_TIMEOUT' });
    const server = errorForStatus(502, { reason: 'Z'.repeat(600) });
    expect(server).toMatchObject({ code: 'GW_SERVER', reason: undefined, outcomeUnknown: true });
    expect(server.message).not.toContain('ZZZ');
  });
});

describe('the approval code of an approval', () => {
  it('is kept in the shape the journal and the receipt keep, and left out otherwise: the approval stands', () => {
    const approvedWith = (approvalCode: unknown) =>
      classifyPaymentAnswer(
        sale('EUR', 1250),
        201,
        answer({ id: 'g1', status: 'AUTHORIZED', processorInformation: { approvalCode } }),
      );
    expect(approvedWith('831000')).toMatchObject({ kind: 'approved', approvalCode: '831000' });
    // The flows and the receipt take the code from the outcome: one the journal refuses must not reach them.
    for (const odd of ['A'.repeat(100), 'two words', '4111111111111111', 'NUL\u0000', 831000]) {
      const o = approvedWith(odd);
      expect(o, JSON.stringify(odd)).toMatchObject({ kind: 'approved', gatewayId: 'g1' });
      expect(o, JSON.stringify(odd)).not.toHaveProperty('approvalCode');
    }
  });
});

describe('a status nobody documented', () => {
  it('is named in the error only when it is a code: the message stays a line the logs and the operator can take', () => {
    const undocumented = (status: unknown) =>
      classifyPaymentAnswer(sale('EUR', 1250), 201, answer({ id: 'g1', status }));
    const coded = undocumented('SOMETHING_NEW');
    expect(coded).toMatchObject({ kind: 'unknown', error: { code: 'GW_UNDOCUMENTED' } });
    expect(coded.kind === 'unknown' && coded.error.message).toContain('SOMETHING_NEW');
    const prose = undocumented('S'.repeat(10_000));
    expect(prose).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_UNDOCUMENTED', outcomeUnknown: true },
    });
    expect(prose.kind === 'unknown' && prose.error.message).not.toContain('SSSS');
  });
});

describe('a currency of an answer that is not the request one', () => {
  it('is named in the error only when it is a code', () => {
    const o = classifyPaymentAnswer(
      sale('EUR', 1250),
      201,
      answer({
        id: 'g1',
        status: 'AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: '12.50', currency: 'C'.repeat(10_000) } },
      }),
    );
    expect(o).toMatchObject({ kind: 'unknown', error: { code: 'GW_PARSE', outcomeUnknown: true } });
    expect(o.kind === 'unknown' && o.error.message).not.toContain('CCCC');
  });
});

describe('fieldProblems: the details[] of a 400 answer, in the shape the terminal keeps', () => {
  it('keeps field paths of spec 001 (dotted names, array indexes, longer than 64 characters) and code reasons', () => {
    const long = `orderInformation.lineItems[12].${'a'.repeat(80)}.productSku`;
    expect(
      fieldProblems({
        details: [
          { field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' },
          { field: long, reason: 'INVALID_DATA' },
        ],
      }),
    ).toEqual([
      { field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' },
      { field: long, reason: 'INVALID_DATA' },
    ]);
  });

  it('drops fields that are no path and replaces reasons that are no code, never passing them on raw', () => {
    const problems = fieldProblems({
      details: [
        { field: 'x'.repeat(257), reason: 'MISSING_FIELD' },
        { field: 'card number 4111111111111111 is wrong', reason: 'INVALID_DATA' },
        { field: 'a.b\nforged log line', reason: 'INVALID_DATA' },
        { field: 'paymentInformation.card.number', reason: 'the card 4111 1111 1111 1111 is not valid' },
        { field: 'orderInformation.amountDetails.totalAmount', reason: 'R'.repeat(65) },
        { field: 'merchantInformation.name', reason: 'BAD\u0007' },
      ],
    });
    expect(problems).toEqual([
      { field: 'paymentInformation.card.number', reason: 'INVALID_DATA' },
      { field: 'orderInformation.amountDetails.totalAmount', reason: 'INVALID_DATA' },
      { field: 'merchantInformation.name', reason: 'INVALID_DATA' },
    ]);
  });
});
