import type {
  CustomerView,
  DccChoice,
  FeeShortfallSummary,
  OfflineDeclineSummary,
  OpenStaySummary,
  OperatorRequest,
  OperatorResponse,
  OperatorStatus,
  Result,
  TerminalApi,
  TerminalSnapshot,
  TransactionSummary,
  UserEvent,
} from '../../src/host/api.js';
import { FakeOperatorPayments } from './fake-operator-payments.js';

/**
 * A scripted TerminalApi for tests of the bridge and the renderer: a kiosk pay station (ticket → confirm → card →
 * processing → approved) with an optional DCC step and an operator who knows PIN 1234. It holds no card data and
 * talks to no gateway; the real TerminalHost is tested end to end elsewhere.
 */
export interface FakeTerminalOptions {
  /** Offer a DCC choice after the card is presented. */
  dcc?: DccChoice | undefined;
  /** Milliseconds between automatic steps (card read, gateway answer). */
  stepMs?: number;
  /**
   * In accessibility mode, speak each screen through the renderer (`customer.speech.engine: platform`), or say that
   * the terminal speaks it (`'terminal'`: `espeak-ng`): the title and message, as the host's speech output would
   * start it.
   */
  speech?: boolean | 'terminal';
}

export const FAKE_PIN = '1234';
export const FAKE_QR_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><path d="M0 0h2v2H0z"/><path d="M2 2h2v2H2z"/></svg>';

export const SAMPLE_DCC: DccChoice = {
  title: 'Select currency',
  local: { minor: 1250, currency: 'EUR', text: '€12.50' },
  card: { minor: 1091, currency: 'GBP', text: '£10.91' },
  rate: '1 EUR = 0.8728 GBP',
  markup: 'includes 3.50% margin over the wholesale rate',
  disclaimer:
    'I have been offered a choice of currencies and agree to pay in GBP.  Conversion is provided by the acquirer.\nRate valid for this transaction only.',
  expiresAt: '2030-01-01T00:00:00Z',
};

function status(): OperatorStatus {
  return {
    terminalId: 'PT000001',
    model: 'kiosk',
    reader: { kind: 'sim', health: 'ok', firmware: 'SIM-1.0' },
    gateway: { kind: 'sandbox', baseUrl: 'http://127.0.0.1:1/', online: true },
    offline: {
      policy: 'deny',
      depth: 0,
      totals: [],
      oldestAgeSeconds: null,
      ageUnknown: 0,
      limits: {
        maxTransactionMinor: 5000,
        maxTotalMinorPerCurrency: 50000,
        maxCount: 50,
        maxAgeHours: 24,
        maxCountPerCard: 2,
      },
      declinedAfterForward: 0,
    },
    recovery: { running: false, inFlight: 0, resolved: [] },
    feeShortfalls: 0,
    journal: { entries: 0, unknown: 0 },
  };
}

const AMOUNT = { minor: 1250, currency: 'EUR', text: '€12.50' };

export class FakeTerminal implements TerminalApi {
  /** What the page sent, ACTIVITY apart: how often the page sends it depends on the clock (`activity` counts it). */
  readonly events: UserEvent[] = [];
  /** ACTIVITY events the page sent. */
  activity = 0;
  /**
   * What the page said of its own speech (SPEECH_STATE), apart from `events`: it depends on the platform's synthesis
   * (headless Chromium has no voice: each utterance fails at once).
   */
  readonly speechStates: UserEvent[] = [];
  readonly operatorRequests: OperatorRequest[] = [];
  /** The operator PIN the terminal takes (another after a restart that generated a new one). */
  pin = FAKE_PIN;
  /** The operator's payment links and alternative-method sales. */
  readonly payments = new FakeOperatorPayments();
  #seq = 0;
  #customer: CustomerView = {
    screen: 'idle',
    title: 'Welcome',
    message: 'Pay for your parking here',
    actions: ['START'],
  };
  #status = status();
  #listeners = new Set<(s: TerminalSnapshot) => void>();
  #timers = new Set<NodeJS.Timeout>();
  #transactions: TransactionSummary[] = [];
  #declines: OfflineDeclineSummary[] = [];
  #shortfalls: FeeShortfallSummary[] = [];
  #stays: OpenStaySummary[] = [];
  /** This customer's accessibility mode (SET_ACCESSIBILITY); off again when the customer is done or cancels. */
  #accessible = false;

  constructor(private readonly options: FakeTerminalOptions = {}) {}

  /** Stored payments forwarded and not collected in full, awaiting the operator's acknowledgement. */
  setOfflineDeclines(declines: OfflineDeclineSummary[]): void {
    this.#declines = [...declines];
    this.#status = {
      ...this.#status,
      offline: { ...this.#status.offline, declinedAfterForward: this.#declines.length },
    };
  }

  /** Fees not collected in full, awaiting the operator's acknowledgement. */
  setFeeShortfalls(shortfalls: FeeShortfallSummary[]): void {
    this.#shortfalls = [...shortfalls];
    this.#status = { ...this.#status, feeShortfalls: this.#shortfalls.length };
  }

  /** The open tap-and-go stays, the last entry first; a release of an `open` one takes it off the list. */
  setStays(stays: OpenStaySummary[]): void {
    this.#stays = stays.map((t) => ({ ...t }));
  }

  /**
   * How many of the next refunds (card or alternative-method) the terminal receives and never answers: the page's
   * request waits until its connection drops or it times out.
   */
  unansweredRefunds = 0;

  /**
   * The terminal's answers to the next refunds and voids (outcome, code, message), one each, in place of an approval:
   * a refusal or an unknown outcome leaves the transaction as it was.
   */
  readonly operatorAnswers: { outcome: string; code: string; message: string; transactionId?: string }[] = [];

  /** The operator's transaction list as the terminal would list it (newest first), in place of the sales made here. */
  setTransactions(transactions: TransactionSummary[]): void {
    this.#transactions = transactions.map((t) => ({ ...t }));
  }

  /** Number of live subscriptions (the bridge must unsubscribe closed sockets). */
  get subscribers(): number {
    return this.#listeners.size;
  }

  #snapshot(): TerminalSnapshot {
    return {
      seq: this.#seq,
      model: 'kiosk',
      locale: 'en-GB',
      customer: this.#customer,
      status: this.#status,
    };
  }

  #show(customer: CustomerView): void {
    this.#seq += 1;
    this.#customer = this.#accessible ? { ...customer, accessibility: true } : customer;
    if (this.#accessible && this.options.speech && !customer.speech) {
      const text = [customer.title, customer.message].filter((t) => t.length > 0).join('. ');
      this.#customer = {
        ...this.#customer,
        speech: {
          id: this.#seq,
          text,
          screen: text,
          lang: 'en-GB',
          volume: 0.6,
          rate: 1,
          by: this.options.speech === 'terminal' ? 'terminal' : 'renderer',
        },
      };
    }
    const snap = this.#snapshot();
    for (const l of this.#listeners) l(snap);
  }

  #later(fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, this.options.stepMs ?? 30);
    this.#timers.add(t);
  }

  #authorize(currency: string): void {
    this.#show({
      screen: 'processing',
      title: 'Processing',
      message: 'Please wait',
      amount: AMOUNT,
      actions: [],
    });
    this.#later(() => {
      const txn: TransactionSummary = {
        transactionId: `T${this.#seq}`,
        service: 'authorization',
        comments: 'parking',
        state: 'AUTHORIZED',
        amount: AMOUNT,
        maskedPan: '476173******0119',
        at: '2030-01-01T10:00:00Z',
        allowed: ['void', 'refund'],
      };
      this.#transactions.unshift(txn);
      this.#status = { ...this.#status, journal: { entries: this.#transactions.length, unknown: 0 } };
      this.#show({
        screen: 'approved',
        title: 'Approved',
        message: 'Thank you — have a good journey',
        amount: AMOUNT,
        maskedPan: '476173******0119',
        receipt: {
          title: 'Receipt',
          lines: [
            { label: 'Amount', value: AMOUNT.text },
            { label: 'Currency', value: currency },
          ],
          locale: 'en_GB',
          lang: 'en-GB',
          direction: 'ltr',
          qr: { svg: FAKE_QR_SVG, alt: 'QR code of your receipt link', url: 'https://pay.example/r/abc' },
        },
        actions: ['DONE'],
      });
    });
  }

  snapshot(): Promise<Result<TerminalSnapshot>> {
    return Promise.resolve({ ok: true, value: this.#snapshot() });
  }

  /**
   * Shows any customer screen as it is (declined, out of service, a DCC choice …), for tests that must reach a screen
   * the scripted sale does not; the accessibility mode still applies.
   */
  present(customer: CustomerView): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#show(customer);
  }

  /**
   * Takes an action off the current screen without telling the page (the race of a screen the terminal has just
   * left): the page's next press of it is refused, as the host refuses it.
   */
  withdraw(action: UserEvent['type']): void {
    this.#customer = { ...this.#customer, actions: this.#customer.actions.filter((a) => a !== action) };
  }

  /**
   * Asks "Do you need more time?" on the current screen, as the host's inactivity watch does: the prompt with its
   * expiry and the MORE_TIME action added.
   */
  askMoreTime(seconds = 30): void {
    const { prompt: _asked, ...customer } = this.#customer;
    this.#show({
      ...customer,
      prompt: { kind: 'more-time', expiresAt: new Date(Date.now() + seconds * 1000).toISOString(), seconds },
      actions: [...customer.actions.filter((a) => a !== 'MORE_TIME'), 'MORE_TIME'],
    });
  }

  send(event: UserEvent): Promise<Result<TerminalSnapshot>> {
    // Accepted on every screen, as the ready host does; it changes nothing the page sees.
    if (event.type === 'ACTIVITY') {
      this.activity += 1;
      return this.snapshot();
    }
    if (event.type === 'SPEECH_STATE') {
      this.speechStates.push(event);
      return this.#accessible
        ? this.snapshot()
        : Promise.resolve({ ok: false, error: { code: 'NOT_ALLOWED_NOW', message: 'speech output is off' } });
    }
    this.events.push(event);
    // Presentation events, as the host takes them: on every screen, never through the flow.
    if (event.type === 'SET_ACCESSIBILITY') {
      this.#accessible = event.on;
      const { accessibility: _was, speech: _said, ...customer } = this.#customer;
      this.#show(customer);
      return this.snapshot();
    }
    if (event.type === 'SPEECH' || event.type === 'ECHO')
      return this.#accessible
        ? this.snapshot()
        : Promise.resolve({ ok: false, error: { code: 'NOT_ALLOWED_NOW', message: 'speech output is off' } });
    const screen = this.#customer.screen;
    const refuse = (): Promise<Result<TerminalSnapshot>> =>
      Promise.resolve({
        ok: false,
        // As the host refuses: the developer's message, and the reason in the customer's words (en_GB here).
        error: {
          code: 'NOT_ALLOWED_NOW',
          message: `${event.type} on ${screen}`,
          customerText: 'That is not possible right now.',
        },
      });
    if (!this.#customer.actions.includes(event.type)) return refuse();
    switch (event.type) {
      case 'START':
        this.#show({
          screen: 'enter-ticket',
          title: 'Your ticket',
          message: 'Enter the number printed on your ticket',
          actions: ['ENTER_TICKET', 'LOST_TICKET', 'CANCEL'],
        });
        break;
      case 'ENTER_TICKET':
      case 'LOST_TICKET':
        this.#show({
          screen: 'confirm',
          title: 'Parking fee',
          message:
            event.type === 'ENTER_TICKET' ? `Ticket ${event.ticket}: 2 h 10 min` : 'Lost ticket: daily rate',
          amount: AMOUNT,
          actions: ['CONFIRM', 'CANCEL'],
        });
        break;
      case 'CONFIRM':
        this.#show({
          screen: 'present-card',
          title: 'Present your card',
          message: 'Insert, tap or swipe',
          amount: AMOUNT,
          actions: ['CANCEL'],
        });
        this.#later(() => {
          const dcc = this.options.dcc;
          if (dcc)
            this.#show({
              screen: 'choose-currency',
              title: dcc.title,
              message: '',
              amount: AMOUNT,
              dcc,
              maskedPan: '476173******0119',
              actions: ['CHOOSE_CURRENCY', 'CANCEL'],
            });
          else this.#authorize('EUR');
        });
        break;
      case 'CHOOSE_CURRENCY':
        this.#authorize(event.currency);
        break;
      case 'MORE_TIME': {
        const { prompt: _answered, ...customer } = this.#customer;
        this.#show({ ...customer, actions: customer.actions.filter((a) => a !== 'MORE_TIME') });
        break;
      }
      case 'CANCEL':
      case 'DONE':
        for (const t of this.#timers) clearTimeout(t);
        this.#timers.clear();
        this.#accessible = false;
        this.#show({
          screen: 'idle',
          title: 'Welcome',
          message: 'Pay for your parking here',
          actions: ['START'],
        });
        break;
      case 'CHOOSE_DURATION':
      case 'ENTER_AMOUNT':
      case 'EXTEND':
      case 'END_SESSION':
      case 'TAP_ENTRY':
      case 'TAP_EXIT':
      case 'CREDIT':
      case 'PAY_BY_LINK':
      case 'ALT_METHOD':
      case 'ALT_FIELD':
      case 'SET_LANGUAGE':
        return refuse();
    }
    return this.snapshot();
  }

  operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    this.operatorRequests.push(request);
    if (request.pin !== this.pin)
      return Promise.resolve({ ok: false, error: { code: 'OPERATOR_PIN', message: 'wrong PIN' } });
    const action = request.action;
    if ((action.type === 'refund' || action.type === 'alt-refund') && this.unansweredRefunds > 0) {
      this.unansweredRefunds -= 1;
      return new Promise(() => undefined);
    }
    switch (action.type) {
      case 'transactions':
        return Promise.resolve({
          ok: true,
          value: { type: 'transactions', transactions: this.#transactions.slice(0, action.limit ?? 50) },
        });
      case 'refund':
      case 'void': {
        const txn = this.#transactions.find((t) => t.transactionId === action.transactionId);
        if (!txn)
          return Promise.resolve({ ok: false, error: { code: 'NOT_FOUND', message: 'no such transaction' } });
        const answer = this.operatorAnswers.shift();
        if (answer !== undefined)
          return Promise.resolve({
            ok: true,
            value: { type: action.type, transactionId: txn.transactionId, ...answer },
          });
        txn.state = action.type === 'void' ? 'VOIDED' : 'REFUNDED';
        txn.allowed = [];
        return Promise.resolve({
          ok: true,
          value: {
            type: action.type,
            // As the terminal answers an approved refund or void (src/flows/operator.ts).
            outcome: 'approved',
            code: 'APPROVED',
            message: action.type === 'void' ? 'Voided' : 'Refunded',
            transactionId: txn.transactionId,
          },
        });
      }
      case 'flush-queue':
        return Promise.resolve({
          ok: true,
          value: { type: 'flush-queue', forwarded: 0, declined: 0, remaining: 0 },
        });
      case 'offline-declines':
        return Promise.resolve({
          ok: true,
          value: { type: 'offline-declines', declines: [...this.#declines] },
        });
      case 'offline-acknowledge': {
        const before = this.#declines.length;
        this.setOfflineDeclines(this.#declines.filter((d) => d.transactionId !== action.transactionId));
        return Promise.resolve({
          ok: true,
          value: {
            type: 'offline-acknowledge',
            transactionId: action.transactionId,
            acknowledged: this.#declines.length < before,
            declines: [...this.#declines],
          },
        });
      }
      case 'fee-shortfalls':
        return Promise.resolve({
          ok: true,
          value: { type: 'fee-shortfalls', shortfalls: [...this.#shortfalls] },
        });
      case 'fee-shortfall-acknowledge': {
        const before = this.#shortfalls.length;
        this.setFeeShortfalls(this.#shortfalls.filter((f) => f.transactionId !== action.transactionId));
        return Promise.resolve({
          ok: true,
          value: {
            type: 'fee-shortfall-acknowledge',
            transactionId: action.transactionId,
            acknowledged: this.#shortfalls.length < before,
            shortfalls: [...this.#shortfalls],
          },
        });
      }
      case 'status':
        return Promise.resolve({ ok: true, value: { type: 'status', status: this.#snapshot().status } });
      case 'audit':
        return Promise.resolve({
          ok: true,
          value: { type: 'audit', records: [], ...(action.format === 'csv' ? { csv: 'id,time\r\n' } : {}) },
        });
      case 'service':
        return Promise.resolve({
          ok: true,
          value: { type: 'service', task: action.task, outcome: 'ok', message: `${action.task} done` },
        });
      case 'stays':
        return Promise.resolve({
          ok: true,
          value: { type: 'stays', stays: this.#stays.slice(0, action.limit ?? 100) },
        });
      case 'hold-release': {
        const stay = this.#stays.find((t) => t.holdId === action.holdId);
        if (!stay)
          return Promise.resolve({ ok: false, error: { code: 'HOLD_NOT_FOUND', message: 'no such stay' } });
        if (stay.state !== 'open')
          return Promise.resolve({ ok: false, error: { code: 'HOLD_BUSY', message: 'being settled' } });
        this.#stays = this.#stays.filter((t) => t !== stay);
        return Promise.resolve({
          ok: true,
          value: {
            type: 'hold-release',
            holdId: stay.holdId,
            outcome: 'released',
            code: 'APPROVED',
            message: 'the hold was reversed',
            transactionId: `R-${stay.holdId}`,
          },
        });
      }
      case 'links':
      case 'link-deactivate':
      case 'link-reactivate':
      case 'alt-sales':
      case 'alt-refund':
        return Promise.resolve(this.payments.handle(action));
    }
  }

  subscribe(listener: (snapshot: TerminalSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops pending automatic steps. */
  dispose(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
