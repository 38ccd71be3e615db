import type { CapturedExchange, CaseResult, RunReport } from '../results.js';

/**
 * A small, realistic run of three cases (one passed, one failed with findings, one skipped) for the reports' tests and
 * for previewing the report layout. Card data is masked the way the runner masks it.
 */

const TAGS =
  '9F02060000000025009F03060000000000005F2A0209789A032503019C01009F1A0202505A08****************5F340101';

function exchange(
  index: number,
  step: number | null,
  service: string,
  status: string,
  extra: Partial<CapturedExchange> = {},
): CapturedExchange {
  const transactionId = `T01JNQ8ZQ0${index}ABCDEFGHJKMNPQ`;
  return {
    index,
    step,
    at: `2025-03-01T09:30:0${index}.000Z`,
    method: 'POST',
    path: '/pts/v2/payments',
    service,
    body: {
      clientReferenceInformation: { code: 'PARK-001', transactionId, comments: service },
      orderInformation: { amountDetails: { totalAmount: '25.00', currency: 'EUR' } },
      paymentInformation: { card: { number: '411111******1111', type: '001' } },
      pointOfSaleInformation: { entryMode: 'contactless', catLevel: 2, emv: { tags: TAGS } },
    },
    httpStatus: 201,
    response: { id: `74123456789012345${index}`, status, clientReferenceInformation: { transactionId } },
    durationMs: 120 + index,
    transactionId,
    gatewayId: `74123456789012345${index}`,
    status,
    amount: '25.00',
    currency: 'EUR',
    ...extra,
  };
}

/** The identity of the sample run's terminal. */
const SAMPLE_TERMINAL = {
  merchantId: 'parking_demo',
  country: 'FR',
  currency: 'EUR',
  terminalId: 'PT000001',
  developerId: '12345678',
  solutionId: 'PARKTERM',
  thirdPartyCertificationNumber: 'PT0000000001',
};

function passedCase(): CaseResult {
  const messages = [
    exchange(0, 0, 'authorization', 'AUTHORIZED'),
    exchange(1, 1, 'capture', 'PENDING', {
      path: '/pts/v2/payments/741234567890123450/captures',
      amount: '18.75',
    }),
  ];
  return {
    id: 'PK-MTR-N2-CL-01',
    title: 'Meter: pre-authorize 25.00, capture 18.75 less than authorized',
    model: 'meter',
    network: 'N2',
    entryMode: 'contactless',
    card: 'n2-contactless',
    attended: false,
    verdict: 'passed',
    startedAt: '2025-03-01T09:30:00.000Z',
    finishedAt: '2025-03-01T09:30:02.000Z',
    durationMs: 2000,
    currency: 'EUR',
    terminal: SAMPLE_TERMINAL,
    timeoutReversalDelayMs: 500,
    steps: [
      {
        index: 0,
        action: 'park',
        description: 'pre-authorize for 60 minutes',
        expected: [{ service: 'authorization', amount: '25.00', status: 'AUTHORIZED' }],
        actual: [{ service: 'authorization', amount: '25.00', status: 'AUTHORIZED' }],
        screen: 'session',
        expectedScreen: 'session',
        ok: true,
        problems: [],
      },
      {
        index: 1,
        action: 'end',
        description: 'leave after 45 minutes',
        expected: [{ service: 'capture', amount: '18.75', status: 'PENDING' }],
        actual: [{ service: 'capture', amount: '18.75', status: 'PENDING' }],
        screen: 'approved',
        ok: true,
        problems: [],
      },
    ],
    messages,
    findings: [
      {
        rule: 'DE-TAG-9F03',
        category: 'data element',
        severity: 'warning',
        field: 'pointOfSaleInformation.emv.tags.9F03',
        message: '9F03 is zero and could be left out',
        index: 0,
        service: 'authorization',
      },
    ],
    transactionIds: messages.map((m) => m.transactionId ?? ''),
    gatewayIds: messages.map((m) => m.gatewayId ?? ''),
    problems: [],
  };
}

function failedCase(): CaseResult {
  const messages = [
    exchange(0, 0, 'authorization', 'AUTHORIZED', {
      path: '/pts/v2/payments',
      amount: '30.00',
    }),
    exchange(1, 1, 'authorization-reversal', 'NO ANSWER', {
      path: '/pts/v2/payments/741234567890123450/reversals',
      httpStatus: null,
      status: 'NO ANSWER',
      amount: '30.00',
    }),
  ];
  // The reversal's answer was lost: no JSON answer, no gateway id.
  delete messages[1]!.response;
  delete messages[1]!.gatewayId;
  return {
    id: 'PK-KSK-N1-CT-02',
    title: 'Kiosk: cancel after authorization, reversal repeats the tags',
    model: 'kiosk',
    network: 'N1',
    entryMode: 'contact',
    card: 'n1-contact',
    attended: false,
    verdict: 'failed',
    startedAt: '2025-03-01T09:30:03.000Z',
    finishedAt: '2025-03-01T09:30:05.500Z',
    durationMs: 2500,
    currency: 'EUR',
    terminal: SAMPLE_TERMINAL,
    timeoutReversalDelayMs: 500,
    steps: [
      {
        index: 0,
        action: 'park',
        description: 'pay 30.00 for 2 hours',
        expected: [{ service: 'authorization', amount: '30.00', status: 'AUTHORIZED' }],
        actual: [{ service: 'authorization', amount: '30.00', status: 'AUTHORIZED' }],
        screen: 'approved',
        ok: true,
        problems: [],
      },
      {
        index: 1,
        action: 'cancel',
        description: 'the customer cancels; the terminal reverses',
        expected: [{ service: 'authorization-reversal', amount: '30.00', status: 'REVERSED' }],
        actual: [{ service: 'authorization-reversal', amount: '30.00', status: 'NO ANSWER' }],
        screen: 'error',
        expectedScreen: 'cancelled',
        ok: false,
        problems: ['expected authorization-reversal → REVERSED, got NO ANSWER'],
      },
    ],
    messages,
    findings: [
      {
        rule: 'IC-REVERSAL-TAGS',
        category: 'interchange compliance',
        severity: 'error',
        field: 'pointOfSaleInformation.emv.tags',
        message: 'a reversal of an EMV authorization must repeat its tags',
        index: 1,
        service: 'authorization-reversal',
      },
      {
        rule: 'CE-9F1A-COUNTRY',
        category: 'cross-edit',
        severity: 'warning',
        field: 'pointOfSaleInformation.emv.tags.9F1A',
        message: '9F1A 0250 is the terminal country (FR)',
        index: 0,
        service: 'authorization',
      },
    ],
    transactionIds: messages.map((m) => m.transactionId ?? ''),
    gatewayIds: ['741234567890123450'],
    problems: [
      'step 2 (cancel): expected authorization-reversal → REVERSED, got NO ANSWER',
      'step 2 (cancel): expected screen cancelled, shown error',
    ],
  };
}

function skippedCase(): CaseResult {
  return {
    id: 'PK-TAP-N2-SW-03',
    title: 'Tap-and-go gate: swipe is refused',
    model: 'tap-and-go',
    network: 'N2',
    entryMode: 'swiped',
    card: 'n2-swipe',
    attended: false,
    verdict: 'skipped',
    skipReason: 'the test host cannot inject a swipe fallback',
    startedAt: '2025-03-01T09:30:06.000Z',
    finishedAt: '2025-03-01T09:30:06.000Z',
    durationMs: 0,
    currency: 'EUR',
    steps: [],
    messages: [],
    findings: [],
    transactionIds: [],
    gatewayIds: [],
    problems: [],
  };
}

/** The sample run: PK-MTR-N2-CL-01 passed, PK-KSK-N1-CT-02 failed (1 error and 1 warning finding), PK-TAP-N2-SW-03 skipped. */
export function sampleRunReport(): RunReport {
  const cases = [passedCase(), failedCase(), skippedCase()];
  return {
    tool: { name: 'parking-terminal', version: '0.1.0' },
    pack: {
      name: 'parking-core',
      title: 'Parking core pack',
      file: 'certification/scripts/parking-core.yaml',
      version: '1',
    },
    gateway: { kind: 'sandbox', url: 'http://127.0.0.1:0', credentials: 'sandbox' },
    terminal: { ...SAMPLE_TERMINAL },
    timeoutReversalDelayMs: [500],
    startedAt: '2025-03-01T09:30:00.000Z',
    finishedAt: '2025-03-01T09:30:06.000Z',
    durationMs: 6000,
    summary: {
      cases: 3,
      passed: 1,
      failed: 1,
      skipped: 1,
      messages: 4,
      errorFindings: 1,
      warningFindings: 2,
    },
    stopped: false,
    outcome: 'failed',
    cases,
  };
}

/** Text no report may let through as markup: a script, both quotes, an ampersand, a CDATA end, a control character. */
export const HOSTILE_TEXT = `<script>alert("pwn")</script>' & ]]> --> \u0001\u001B`;

/** Fields whose values are closed vocabularies the reports branch on, left as they are by {@link withHostileText}. */
const VOCABULARY_KEYS = new Set(['verdict', 'severity', 'kind', 'credentials', 'outcome']);

/**
 * A deep copy of `report` with {@link HOSTILE_TEXT} appended to every string (keys of bodies and answers included),
 * except the closed vocabularies (verdict, severity, gateway kind and credentials, outcome).
 */
export function withHostileText(report: RunReport): RunReport {
  const visit = (value: unknown, key: string): unknown => {
    if (typeof value === 'string') return VOCABULARY_KEYS.has(key) ? value : `${value}${HOSTILE_TEXT}`;
    if (Array.isArray(value)) return value.map((v) => visit(v, key));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = visit(v, k);
      if (key === 'body' || key === 'response') out[HOSTILE_TEXT] = HOSTILE_TEXT;
      return out;
    }
    return value;
  };
  return visit(report, '') as RunReport;
}
