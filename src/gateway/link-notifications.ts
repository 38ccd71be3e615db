/**
 * The payment-link "paid" notification (issue 14, item 1). Spec 000 mentions a webhook when a link is paid but not its
 * delivery, payload or signing ("not shown"); the terminal follows what the gateway sandbox documents (README,
 * "Sandbox"): a POST with `Content-Type: application/json`, headers `v-c-merchant-id` and
 * `v-c-signature: t=<unix seconds>,sig=<base64 HMAC-SHA256 over "<t>.<body>" keyed with the base64-decoded shared
 * secret>`, and the body `{eventType: "payByLink.payment", eventDate, merchantId, payload: {paymentLinkId,
 * purchaseNumber, paymentId, status, amount, currency, card}}`.
 *
 * Verification is the terminal's own code (the sandbox keeps its own, DESIGN.md): the MAC over the exact bytes
 * received, compared in constant time; the time within a tolerance (a replayed old notification is refused); the
 * merchant header and body equal to the terminal's merchant. The masked card of the payload is never kept.
 *
 * A notification fetched from a relay may be older than the tolerance (the relay holds it until the terminal's next
 * fetch, up to `pollSeconds`, or past a restart): it is refused only when signed in the future beyond the tolerance.
 * Replay protection stays: the MAC binds the payment to its link, the link desk ignores a payment id it already has and
 * refuses a notification signed before the link existed. A correctly signed notification that is still refused is
 * handed to `onRefused` (the host records it for the operator): it may be a real payment.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseDecimal } from '../money/index.js';
import { LimitedWarnings, silentLogger, type Logger } from '../log/index.js';
import { decodeSharedSecret } from './auth/http-signature.js';
import { GatewayError } from './errors.js';
import { isGatewayId } from './gateway-id.js';
import { parseJsonBody } from './outcome.js';
import { requestTarget } from './request-target.js';
import { createLimitedServer } from './server-limits.js';

/** A verified payment made through a payment link. */
export interface LinkPaymentNotification {
  /** ISO 8601, as the gateway wrote it. */
  eventDate: string;
  /** The link's id (its purchase number). */
  linkId: string;
  /** Gateway id of the payment. */
  paymentId: string;
  /** The payment's status: `AUTHORIZED` (paid) or a decline such as `DECLINED` (the link stays usable). */
  status: string;
  amountMinor: number;
  currency: string;
  /** The time the gateway signed it (epoch ms; the `t` of `v-c-signature`), when it came through a verifier. */
  signedAtMs?: number;
}

/** Why a notification was refused. */
export type LinkNotificationProblem = 'signature' | 'stale' | 'merchant' | 'body';

/** A notification that is not accepted: nothing of it is used. */
export class LinkNotificationError extends GatewayError {
  override readonly name = 'LinkNotificationError';
  constructor(
    readonly problem: LinkNotificationProblem,
    message: string,
    /** Set when the signature verified: the notification is the gateway's, so it may be a real payment. */
    readonly signed?: SignedRefusal,
  ) {
    super('LINK_NOTIFICATION', message);
  }
}

/** What is known of a correctly signed notification that was refused (no card data). */
export interface SignedRefusal {
  signedAtMs: number;
  linkId?: string;
  paymentId?: string;
}

/** A correctly signed notification that was refused, for the operator. */
export interface LinkNotificationRefusal extends SignedRefusal {
  problem: LinkNotificationProblem;
  message: string;
}

/** The refusal of a signed notification, when there is one (`onRefused` of the listener and the relay). */
function signedRefusal(e: unknown): LinkNotificationRefusal | undefined {
  if (!(e instanceof LinkNotificationError) || e.signed === undefined) return undefined;
  return { problem: e.problem, message: e.message, ...e.signed };
}

/** The link and payment ids of a body, as far as they can be read (for the record of a refusal). */
function idsOf(body: Buffer): { linkId?: string; paymentId?: string } {
  try {
    const p = obj(obj(JSON.parse(body.toString('utf8'))).payload);
    const linkId = text(p.paymentLinkId) ?? text(p.purchaseNumber);
    const paymentId = text(p.paymentId);
    return {
      ...(linkId !== undefined ? { linkId: linkId.slice(0, 128) } : {}),
      ...(paymentId !== undefined ? { paymentId: paymentId.slice(0, 128) } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * Logs, once at the start of a listener or relay, a key that holds no secret a notification can be verified with (the
 * shared secret's rule, `decodeSharedSecret`: base64 text of at least one byte): every notification is then refused
 * ({@link verifyLinkNotification}), and the operator must learn why from more than a refusal per notification.
 */
function warnOfUnusableKey(key: LinkNotificationKey, logger: Logger): void {
  try {
    decodeSharedSecret(key.sharedSecretBase64);
  } catch (e) {
    logger.error(
      { err: e instanceof Error ? e.message : String(e) },
      'payment-link notifications: no usable key, every notification is refused',
    );
  }
}

/** What verifying needs. */
export interface LinkNotificationKey {
  /** The terminal's merchant id (`v-c-merchant-id`). */
  merchantId: string;
  /** The shared secret, base64 as configured (the HTTP-signature key). */
  sharedSecretBase64: string;
  /** Most seconds between the signed time and now, either way (default 300). */
  toleranceSeconds?: number;
}

const SIGNATURE = /^t=(\d{1,12}),sig=([A-Za-z0-9+/]+={0,2})$/;

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? undefined : v;
}

/**
 * Verifies and reads one notification: `body` is the exact bytes received. `relayed`: fetched from a relay, which may
 * have held it past the tolerance; only a time in the future beyond the tolerance is refused then.
 * @throws LinkNotificationError `signature` (missing, malformed or wrong MAC, or no usable key), `stale` (signed time outside the
 *   tolerance), `merchant` (another merchant), `body` (not the payment event, or a field missing); every problem but
 *   `signature` with `signed` set.
 */
export function verifyLinkNotification(
  headers: IncomingMessage['headers'],
  body: Buffer,
  key: LinkNotificationKey,
  nowMs: number,
  options: { relayed?: boolean } = {},
): LinkPaymentNotification {
  const m = SIGNATURE.exec(header(headers, 'v-c-signature') ?? '');
  if (!m?.[1] || !m[2])
    throw new LinkNotificationError('signature', 'no v-c-signature of the form t=…,sig=…');
  const t = m[1];
  let secret: Buffer;
  try {
    secret = decodeSharedSecret(key.sharedSecretBase64);
  } catch {
    // No key (an empty secret file, text that is no base64): nothing anybody signs is the gateway's.
    throw new LinkNotificationError('signature', 'no usable key to verify the signature with');
  }
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  const given = Buffer.from(m[2], 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new LinkNotificationError('signature', 'the signature does not verify');
  const signedAtMs = Number(t) * 1000;
  const signed = { signedAtMs, ...idsOf(body) };
  const refuse = (problem: LinkNotificationProblem, message: string) =>
    new LinkNotificationError(problem, message, signed);
  const tolerance = key.toleranceSeconds ?? 300;
  const ageSeconds = nowMs / 1000 - Number(t);
  if (ageSeconds < -tolerance || (!options.relayed && ageSeconds > tolerance))
    throw refuse('stale', `signed at ${t}, more than ${tolerance} s from now`);
  if (header(headers, 'v-c-merchant-id') !== key.merchantId)
    throw refuse('merchant', 'v-c-merchant-id is not this terminal’s merchant');
  // The one reader of gateway JSON: a body that names a key twice ("status" DECLINED, then AUTHORIZED) is not read.
  const parsed = parseJsonBody(body);
  if (parsed === undefined) {
    let json = true;
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      json = false;
    }
    throw refuse('body', json ? 'the body names a key twice' : 'the body is not JSON');
  }
  const b = obj(parsed);
  if (b.eventType !== 'payByLink.payment')
    throw refuse('body', `event ${String(b.eventType)} is not a payment-link payment`);
  if (b.merchantId !== undefined && b.merchantId !== key.merchantId)
    throw refuse('merchant', 'the body names another merchant');
  const p = obj(b.payload);
  const linkId = text(p.paymentLinkId) ?? text(p.purchaseNumber);
  const paymentId = text(p.paymentId);
  const status = text(p.status);
  const currency = text(p.currency);
  const amount = p.amount;
  if (
    !linkId ||
    !paymentId ||
    !status ||
    !currency ||
    (typeof amount !== 'string' && typeof amount !== 'number')
  )
    throw refuse('body', 'the payload lacks the link, payment, status, amount or currency');
  // The payment id is kept in the journal and printed on the receipt: one the terminal cannot keep is refused here, as
  // a signed refusal the operator is told of, not accepted and then lost when the journal refuses it.
  if (!isGatewayId(paymentId)) throw refuse('body', 'the payment id is not 1–64 letters, digits, _ or -');
  // A status is one word of the gateway's (reference/gateway.md §4: AUTHORIZED, PARTIAL_AUTHORIZED …); it goes into
  // the operator's records of a payment not counted, which could not be written with a longer one.
  if (!/^[A-Z][A-Z_]{0,63}$/.test(status))
    throw refuse('body', 'the status is not a word of 1–64 capital letters and _');
  let amountMinor: number;
  try {
    amountMinor = parseDecimal(amount, currency);
  } catch {
    throw refuse('body', 'the amount or currency is not readable');
  }
  return {
    eventDate: text(b.eventDate) ?? '',
    linkId,
    paymentId,
    status,
    amountMinor,
    currency,
    signedAtMs,
  };
}

/** Hands a signed notification's refusal to `onRefused`; a failure there is logged (the refusal stands). */
function reportRefusal(
  e: unknown,
  onRefused: ((refusal: LinkNotificationRefusal) => void) | undefined,
  logger: Logger,
): void {
  const refusal = signedRefusal(e);
  if (refusal === undefined || onRefused === undefined) return;
  try {
    onRefused(refusal);
  } catch (err) {
    logger.error({ err, linkId: refusal.linkId }, 'refused payment-link notification not recorded');
  }
}

/** Options of {@link LinkNotificationListener.start}. */
export interface LinkNotificationListenerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The path notifications are POSTed to (default `/payment-links/notifications`). */
  path?: string;
  key: LinkNotificationKey;
  /** Called once per verified notification; a throw answers 500 so that the sender tries again. */
  onNotification(notification: LinkPaymentNotification): void;
  /** Called for a correctly signed notification that is refused (it may be a real payment: the operator is told). */
  onRefused?: (refusal: LinkNotificationRefusal) => void;
  now?: () => number;
  logger?: Logger;
}

/** Largest notification body read (the sandbox's is well under 1 KiB). */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The HTTP listener the terminal runs for payment-link notifications when `links.notifications.listen` is
 * configured: POST on one path, verified, answered 204; a refused one 401 (signature, time, merchant) or 400 (body, or a
 * request target that is not a URL).
 */
export class LinkNotificationListener {
  private constructor(
    private readonly server: Server,
    /** e.g. `http://127.0.0.1:8471/payment-links/notifications`. */
    readonly url: string,
    /** The warnings of refused notifications not signed with the key (a flood is summarised). */
    private readonly strangers: LimitedWarnings,
  ) {}

  static async start(options: LinkNotificationListenerOptions): Promise<LinkNotificationListener> {
    const path = options.path ?? '/payment-links/notifications';
    const logger = options.logger ?? silentLogger();
    warnOfUnusableKey(options.key, logger);
    const now = options.now ?? Date.now;
    const answer = (res: ServerResponse, status: number): void => {
      res.writeHead(status, { 'content-length': 0 }).end();
    };
    const strangers = new LimitedWarnings(
      logger,
      'refusals of payment-link notifications not signed with the key',
    );
    // Bounded like every server of the terminal: the network in front of it may be anyone's.
    const server = createLimitedServer({}, (req, res) => {
      const target = requestTarget(req.url, 'http://listener.invalid');
      if (target === undefined) return answer(res, 400);
      if (target.pathname !== path) return answer(res, 404);
      if (req.method !== 'POST') return answer(res, 405);
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          answer(res, 413);
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        if (res.headersSent) return;
        let notification: LinkPaymentNotification;
        try {
          notification = verifyLinkNotification(req.headers, Buffer.concat(chunks), options.key, now());
        } catch (e) {
          const problem = e instanceof LinkNotificationError ? e.problem : 'body';
          // A correctly signed one may be a real payment: always told. The others anyone can send without end.
          if (signedRefusal(e) !== undefined) logger.warn({ problem }, 'payment-link notification refused');
          else strangers.warn({ problem }, 'payment-link notification refused');
          reportRefusal(e, options.onRefused, logger);
          return answer(res, problem === 'body' ? 400 : 401);
        }
        try {
          options.onNotification(notification);
          answer(res, 204);
        } catch (err) {
          logger.error({ err, linkId: notification.linkId }, 'payment-link notification not recorded');
          answer(res, 500);
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Once listening, an error of the server (an accept failing for want of file descriptors) is logged; unheard, it
    // would end the terminal's process. The listener goes on accepting when it can.
    server.on('error', (err) => logger.error({ err }, 'payment-link listener error'));
    const { port } = server.address() as AddressInfo;
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    return new LinkNotificationListener(server, `http://${host}:${port}${path}`, strangers);
  }

  /** Stops listening and drops open connections. */
  close(): Promise<void> {
    this.strangers.flush();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/**
 * Largest relay answer read: a thousand notifications of the sandbox's size and more (each is well under 1 KiB). A relay
 * is trusted with nothing: a larger answer is not read further, the fetch fails and the next one tries again.
 */
const MAX_RELAY_ANSWER_BYTES = 4 * 1024 * 1024;

/** The text of a relay's answer, read up to {@link MAX_RELAY_ANSWER_BYTES}; the exchange is aborted beyond it. */
async function boundedText(res: Response, abort: AbortController): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body !== null) {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_RELAY_ANSWER_BYTES) {
        abort.abort();
        throw new Error(`answer larger than ${MAX_RELAY_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Most refused relayed notifications remembered as reported (then the memory starts again). */
const MAX_REPORTED = 1_000;

/** Options of {@link LinkNotificationRelay.start}. */
export interface LinkNotificationRelayOptions {
  /** GET answers `{notifications: [{headers: {name: value}, body: "<the exact text received>"}]}`. */
  url: string;
  pollMs: number;
  key: LinkNotificationKey;
  /** Called once per verified notification (a relay may deliver one again: the receiver is idempotent). */
  onNotification(notification: LinkPaymentNotification): void;
  /**
   * Called for a correctly signed notification that is refused (it may be a real payment: the operator is told), once
   * per run however often the relay delivers it.
   */
  onRefused?: (refusal: LinkNotificationRefusal) => void;
  now?: () => number;
  logger?: Logger;
}

/**
 * Notifications through a relay, for a terminal the gateway cannot reach (`links.notifications.relay`): the relay
 * receives them and the terminal fetches them every `pollMs`, verifying each itself exactly as the listener does — a
 * relay is trusted with nothing.
 */
export class LinkNotificationRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /**
   * Signatures of the correctly signed refused notifications already reported (a relay may deliver one again at every
   * fetch).
   */
  private readonly reported = new Set<string>();

  private constructor(private readonly options: LinkNotificationRelayOptions) {}

  static start(options: LinkNotificationRelayOptions): LinkNotificationRelay {
    warnOfUnusableKey(options.key, options.logger ?? silentLogger());
    const relay = new LinkNotificationRelay(options);
    relay.timer = setInterval(() => void relay.fetchOnce(), options.pollMs);
    relay.timer.unref();
    return relay;
  }

  /** One fetch (the timer's; tests). Failures are logged, never thrown. */
  fetchOnce(): Promise<void> {
    this.running ??= this.fetch().finally(() => (this.running = undefined));
    return this.running;
  }

  private async fetch(): Promise<void> {
    const logger = this.options.logger ?? silentLogger();
    const now = this.options.now ?? Date.now;
    let items: unknown[];
    try {
      const abort = new AbortController();
      const res = await fetch(this.options.url, {
        signal: AbortSignal.any([AbortSignal.timeout(10_000), abort.signal]),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = obj(JSON.parse(await boundedText(res, abort))).notifications;
      items = Array.isArray(body) ? body : [];
    } catch (err) {
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'notification relay not reached',
      );
      return;
    }
    for (const item of items) {
      const i = obj(item);
      const headers: IncomingMessage['headers'] = {};
      for (const [k, v] of Object.entries(obj(i.headers)))
        if (typeof v === 'string') headers[k.toLowerCase()] = v;
      if (typeof i.body !== 'string') continue;
      try {
        this.options.onNotification(
          verifyLinkNotification(headers, Buffer.from(i.body, 'utf8'), this.options.key, now(), {
            relayed: true,
          }),
        );
      } catch (e) {
        logger.warn(
          { problem: e instanceof LinkNotificationError ? e.problem : 'handler' },
          'relayed payment-link notification refused',
        );
        // Only a correctly signed refusal is reported, and remembered by its signature (a MAC that verified: some 60
        // characters). A forged one is neither: a relay is trusted with nothing, and could otherwise fill the memory
        // with signature headers as long as its answer.
        const signature = headers['v-c-signature'];
        if (
          signedRefusal(e) !== undefined &&
          typeof signature === 'string' &&
          !this.reported.has(signature)
        ) {
          if (this.reported.size >= MAX_REPORTED) this.reported.clear();
          this.reported.add(signature);
          reportRefusal(e, this.options.onRefused, logger);
        }
      }
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
