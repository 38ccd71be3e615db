import { z } from 'zod';
import { localDateTime } from '../emv/index.js';
import { intlLocale, LOCALES, supportedLocale } from '../i18n/locales.js';
import { currencyByAlpha } from '../money/index.js';
import { showsSomething } from '../vocabulary/printed-text.js';
import { alternativeMethodsSchema } from './alt-methods.js';

/**
 * The one configuration schema. Every key has an embedded default so that an empty file (or none) runs the terminal
 * against the embedded sandbox with the simulated reader. Objects are strict: an unknown key is an error naming it.
 * Secrets are never values here: only paths of files that hold them (DESIGN.md, Configuration).
 */

const currencyCode = z.string().refine((c) => currencyByAlpha(c) !== undefined, {
  message: 'not an ISO 4217 currency code the terminal knows',
});

/**
 * A locale the terminal has message catalogues for, in the BCP 47 form (`de-DE`) or the catalogues' own (`de_DE`):
 * read by the screens' fallback rule (`supportedLocale`, src/i18n/locales.ts), which would otherwise show a mistyped
 * one in en_GB without a word.
 */
const catalogueLocale = z.string().refine((tag) => supportedLocale(tag) !== undefined, {
  message: `not a locale the terminal has catalogues for (${LOCALES.map((l) => intlLocale(l.locale)).join(', ')})`,
});

/**
 * Most payments the offline queue stores. Each is card data held on the terminal (encrypted) and a payment whose
 * decline after forwarding the merchant carries; the gateway reference sets no offline limit, so this is the
 * terminal's own bound: ten times the default, several busy days of a pay station.
 */
export const MAX_OFFLINE_COUNT = 1000;

/**
 * Oldest a stored payment may be while the offline queue takes more (hours): seven days, the validity of a card
 * authorization for parking at the card networks. A payment forwarded later would be authorized after the time its
 * card data was read for had passed, and the queue would keep card data on the terminal for weeks.
 */
export const MAX_OFFLINE_AGE_HOURS = 168;

/**
 * A time zone the terminal can date with: checked by dating an instant the way every request does (`localDateTime`,
 * which throws a RangeError for a zone Intl does not know), so that a mistyped zone stops the start here, naming the
 * key, rather than on the first customer action.
 */
const timeZone = z.string().refine(
  (zone) => {
    try {
      localDateTime(new Date(0), zone);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a time zone the terminal knows (an IANA name such as Europe/London)' },
);

const partner = z
  .strictObject({
    developerId: z.string().min(1).max(8).default('12345678'),
    solutionId: z.string().min(1).max(8).default('PARKTERM'),
    thirdPartyCertificationNumber: z.string().min(1).max(12).default('PT0000000001'),
  })
  .prefault({});

export const terminalSchema = z
  .strictObject({
    /** Terminal id sent as pointOfSaleInformation.terminalId (8 characters). */
    id: z
      .string()
      .regex(/^[A-Za-z0-9]{1,8}$/)
      .default('PT000001'),
    /** The parking model this terminal runs. */
    model: z.enum(['kiosk', 'meter', 'tap-and-go', 'attended']).default('kiosk'),
    /** catLevel: 2 unattended self-service, 6 attended mobile (spec 001). Derived from model when absent. */
    catLevel: z.union([z.literal(2), z.literal(6)]).optional(),
    /** ISO 3166 alpha-2 country and its numeric code (9F1A). */
    country: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .default('GB'),
    countryNumeric: z
      .string()
      .regex(/^\d{3}$/)
      .default('826'),
    currency: currencyCode.default('GBP'),
    timezone: timeZone.default('Europe/London'),
    /** The screens' and receipts' language until a customer chooses one: `de-DE` or `de_DE`. */
    locale: catalogueLocale.default('en-GB'),
    merchantCategoryCode: z
      .string()
      .regex(/^\d{4}$/)
      .default('7523'),
    /** pointOfSaleInformation.terminalCapability: 4 contact chip, 5 contactless (EMV requires 4 or 5). */
    terminalCapability: z.union([z.literal(4), z.literal(5)]).default(5),
    terminalPinCapability: z.number().int().min(0).max(12).default(0),
    /** 0 dongle, 1 phone or tablet (required for card type 002). */
    isDedicatedHardwareTerminal: z.enum(['0', '1']).default('0'),
    /** Path of a file holding the operator PIN (4–8 digits). Without it a PIN is generated at each start. */
    operatorPinFile: z.string().min(1).optional(),
    /**
     * Without `operatorPinFile`: where a start writes the PIN it generated (relative to the working directory; mode
     * 0600, replaced atomically at each start, removed at the stop), for an operator who cannot read it on standard
     * output — printed on a terminal only, never to systemd's journal (src/host/start-secret-file.ts).
     */
    generatedPinFile: z.string().min(1).optional(),
    partner,
  })
  .prefault({});

/**
 * A serial device (`reader` or `printer` with kind `serial`) needs the path of its port. Refused at the start naming
 * `<section>.serial.path`, rather than the host failing to build the device (devices createReader, devices/printer
 * createPrinter) after the configuration passed.
 */
function serialPathRequired(
  section: 'reader' | 'printer',
  example: string,
): [
  check: (d: { readonly kind: string; readonly serial: { readonly path?: string | undefined } }) => boolean,
  params: { path: PropertyKey[]; message: string },
] {
  return [
    (d: { readonly kind: string; readonly serial: { readonly path?: string | undefined } }) =>
      d.kind !== 'serial' || d.serial.path !== undefined,
    {
      path: ['serial', 'path'],
      message: `required for a serial ${section} (${section}.kind serial), e.g. ${example}`,
    },
  ];
}

export const readerSchema = z
  .strictObject({
    kind: z.enum(['sim', 'serial', 'hid']).default('sim'),
    /** Seconds the reader waits for a card after Activate. */
    activateTimeoutSeconds: z.number().int().min(5).max(255).default(60),
    /** Milliseconds to wait for any reply frame before the driver resynchronises and reports a timeout. */
    commandTimeoutMs: z.number().int().min(50).max(60_000).default(3_000),
    /** Idle watchdog ping interval in milliseconds. */
    watchdogMs: z.number().int().min(100).max(600_000).default(5_000),
    /** Reconnect backoff: first delay and cap, milliseconds. */
    reconnectInitialMs: z.number().int().min(10).max(60_000).default(250),
    reconnectMaxMs: z.number().int().min(100).max(600_000).default(10_000),
    /** Whether Activate replies carry a track 3 field: NEO 2 readers do, older NEO readers do not. */
    track3: z.enum(['auto', 'present', 'absent']).default('auto'),
    sim: z
      .strictObject({
        /** Virtual card presented by the simulator (see devices/sim/cards.ts). */
        card: z.string().min(1).default('n2-contact'),
        /** Transport between the driver and the simulator. */
        transport: z.enum(['stream', 'pty', 'hid']).default('stream'),
        /** Milliseconds the simulated cardholder takes to present the card. */
        presentDelayMs: z.number().int().min(0).max(60_000).default(400),
      })
      .prefault({}),
    serial: z
      .strictObject({
        path: z.string().min(1).optional(),
        baudRate: z.number().int().positive().default(115_200),
      })
      .prefault({}),
    hid: z
      .strictObject({
        vendorId: z.number().int().min(0).max(0xffff).default(0x0acd),
        productId: z.number().int().min(0).max(0xffff).optional(),
      })
      .prefault({}),
  })
  .refine(...serialPathRequired('reader', '/dev/ttyUSB0'))
  .prefault({});

/** The receipt printer (ESC/POS), like the reader: `sim` by default so that `npm start` prints to a simulator. */
export const printerSchema = z
  .strictObject({
    /** `none`: no printer (receipts on screen and by QR only); `usb`: a raw printer device file such as /dev/usb/lp0. */
    kind: z.enum(['none', 'sim', 'serial', 'usb']).default('sim'),
    serial: z
      .strictObject({
        path: z.string().min(1).optional(),
        /** ESC/POS thermal printers with a serial interface commonly ship at 38400 baud, 8N1. */
        baudRate: z.number().int().positive().default(38_400),
      })
      .prefault({}),
    usb: z
      .strictObject({
        path: z.string().min(1).default('/dev/usb/lp0'),
      })
      .prefault({}),
    /** Characters per line in font A: 42 (80 mm paper on TM-T88 class printers) or 48 (TM-T20 class). */
    widthChars: z.union([z.literal(42), z.literal(48)]).default(42),
    /** Character code table selected with ESC t (Epson numbering); cp858 has both £ and €. */
    codepage: z
      .enum(['cp437', 'cp850', 'cp852', 'cp858', 'cp860', 'cp863', 'cp865', 'cp866', 'windows1252'])
      .default('cp858'),
    /** Milliseconds to wait for the answer to a real-time status request (DLE EOT) before reporting `offline`. */
    statusTimeoutMs: z.number().int().min(50).max(10_000).default(1_000),
    /**
     * Seconds between status requests while no receipt is printing, so that paper run out (or a cover opened) after
     * the last receipt shows in the operator status before the next customer's receipt fails on it.
     */
    statusPollSeconds: z.number().int().min(5).max(3_600).default(30),
  })
  .refine(...serialPathRequired('printer', '/dev/ttyUSB1'))
  .prefault({});

/**
 * A text every receipt prints: 1 to `max` characters, some of them printing (blanks and control characters print as
 * nothing or as one space: devices/printer layout.ts `printableText`), so that a receipt never goes without it.
 */
const printedText = (max: number) =>
  z.string().min(1).max(max).refine(showsSomething, {
    message: 'prints as nothing: blanks and control characters only',
  });

/** What a receipt says beyond the payment itself, and when none is offered. */
export const receiptsSchema = z
  .strictObject({
    /**
     * Printed at the top of every receipt (kiosk.md §3: merchant name and location). With a printer, each printed text
     * here must be in a code table it carries, all in one (the host refuses it at the start otherwise, naming the key
     * and the character: src/host/receipts.ts `assertPrintableConfiguration`).
     */
    merchantName: printedText(48).default('Parking'),
    merchantLocation: printedText(96).optional(),
    /**
     * Unattended terminals only: below this amount (minor units of the terminal's currency) no receipt is offered.
     * Card rules allow it for small unattended amounts (Visa: up to USD 25, parking cited); above it a receipt must
     * be available on request. 0 (the default) always offers one. A converted (DCC) payment always gets its receipt.
     */
    noReceiptBelowMinor: z.number().int().min(0).default(0),
    /** Base URL of e-receipts: the QR carries it with the transaction reference. Without it the QR holds the text. */
    eReceiptUrl: z.url().optional(),
    /** Who converts the currency (printed on converted receipts, kiosk.md §1). */
    dccProvider: printedText(96).default('Gateway currency conversion service'),
    /** The reference the markup is stated against (EU Regulation 2021/1230: the latest ECB euro reference rate). */
    dccRateSource: printedText(96).default('ECB euro reference rate'),
  })
  .prefault({});

/** A host name of this machine: `localhost`, 127.0.0.0/8, `[::1]` (URL.hostname form). */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Whether `hostname` (as URL.hostname writes it) names this machine. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOST.test(hostname);
}

/**
 * Why card data may not be sent to the gateway at `url`, or undefined when it may: `https:`, or plain `http:` to this
 * machine only (the sandbox of `parking-terminal sandbox`, a local proxy). Card data never crosses a network in clear
 * (PCI DSS requirement 4): a gateway at `http://` on another host, by a slip in the configuration or a command's
 * `--gateway`, would be sent track data and EMV tags unencrypted.
 */
export function gatewayUrlProblem(url: string): string | undefined {
  if (!URL.canParse(url)) return 'not a URL';
  const { protocol, hostname } = new URL(url);
  if (protocol === 'https:') return undefined;
  if (protocol === 'http:')
    return isLoopbackHost(hostname)
      ? undefined
      : 'plain http only to this machine (localhost, 127.0.0.1, [::1]): card data never crosses a network in clear; use https';
  return `${protocol} is not http or https`;
}

/**
 * The longest `gateway.timeouts` a configuration may set, milliseconds. A stop waits for a request out, so these
 * bear on how long a stop can take: test/lint/service-unit.test.ts checks them against the kiosk unit's
 * TimeoutStopSec and the stop's own limit (src/host/stopping.ts).
 */
export const GATEWAY_TIMEOUT_MAX_MS = { connectMs: 120_000, headersMs: 300_000, bodyMs: 300_000 } as const;

export const gatewaySchema = z
  .strictObject({
    /** `sandbox`: the embedded sandbox in-process. `remote`: a real gateway at baseUrl. */
    kind: z.enum(['sandbox', 'remote']).default('sandbox'),
    /** e.g. https://apitest.cybersource.com (test) or https://api.cybersource.com (production). */
    baseUrl: z
      .url()
      .refine((u) => gatewayUrlProblem(u) === undefined, {
        error: (issue) => gatewayUrlProblem(String(issue.input)) ?? 'not a gateway URL',
      })
      .optional(),
    merchantId: z.string().min(1).default('testrest'),
    auth: z
      .strictObject({
        method: z.enum(['http-signature', 'jwt', 'oauth']).default('http-signature'),
        keyId: z.string().min(1).default('08c94330-f618-42a3-b09d-e1e43be5efda'),
        /** File holding the base64 shared secret (HTTP signature, JWT HS256). Sandbox: the public demo key. */
        sharedSecretFile: z.string().min(1).optional(),
        /** JWT RS256: PEM private key and certificate files, or a PKCS#12 file and a file holding its password. */
        privateKeyFile: z.string().min(1).optional(),
        certificateFile: z.string().min(1).optional(),
        pkcs12File: z.string().min(1).optional(),
        pkcs12PasswordFile: z.string().min(1).optional(),
        jwtAlgorithm: z.enum(['RS256', 'HS256']).default('RS256'),
      })
      .prefault({}),
    timeouts: z
      .strictObject({
        connectMs: z.number().int().min(100).max(GATEWAY_TIMEOUT_MAX_MS.connectMs).default(5_000),
        headersMs: z.number().int().min(100).max(GATEWAY_TIMEOUT_MAX_MS.headersMs).default(30_000),
        bodyMs: z.number().int().min(100).max(GATEWAY_TIMEOUT_MAX_MS.bodyMs).default(30_000),
      })
      .prefault({}),
    retry: z
      .strictObject({
        maxAttempts: z.number().int().min(1).max(10).default(3),
        initialDelayMs: z.number().int().min(1).max(60_000).default(200),
        maxDelayMs: z.number().int().min(1).max(300_000).default(5_000),
      })
      .prefault({}),
  })
  .prefault({});

export const journalSchema = z
  .strictObject({
    /** SQLite file of the journal and the offline queue. */
    path: z.string().min(1).default('var/journal.db'),
    /** Milliseconds after an unanswered authorization before its timeout reversal (gateway.md §2: 60 s). */
    timeoutReversalDelayMs: z.number().int().min(0).max(3_600_000).default(60_000),
    /**
     * Recovery's wait after a resolution request that did not succeed, milliseconds; it doubles with each further
     * one, up to 12 times this, and is jittered (src/host/terminal-host.ts, `RESOLUTION_RETRY_MAX_FACTOR`).
     */
    resolutionRetryMs: z.number().int().min(10).max(3_600_000).default(5_000),
    /**
     * Group commit (src/journal/journal.ts, `commitDurably`): durable writes that arrive together (requests in flight,
     * a sale and a recovery) share one transaction and one disk sync; each caller resumes only after that commit.
     */
    groupCommit: z
      .strictObject({
        /** Most writes one commit carries; more wait for the next commit, which starts at once. */
        maxBatch: z.number().int().min(1).max(1_024).default(64),
        /**
         * Longest a write waits for others before its commit starts, ms. 0: no added delay; the writes queued in the
         * same turn of the event loop commit together while the answer of a request in flight is expected, and the
         * writes queued in the same run of microtasks when none is.
         */
        maxWaitMs: z.number().int().min(0).max(50).default(0),
        /**
         * Longest a background write (a stored payment's forward, which nobody waits for at the terminal) waits for
         * others before its commit starts, ms, while no write someone waits for is queued. 0: no added delay.
         */
        backgroundWaitMs: z.number().int().min(0).max(50).default(1),
      })
      .prefault({}),
  })
  .prefault({});

export const offlineSchema = z
  .strictObject({
    policy: z.enum(['online-only', 'prefer-online']).default('online-only'),
    maxTransactionMinor: z.number().int().min(0).default(5_000),
    maxTotalMinorPerCurrency: z.number().int().min(0).default(50_000),
    maxCount: z.number().int().min(0).max(MAX_OFFLINE_COUNT).default(100),
    maxAgeHours: z.number().min(0).max(MAX_OFFLINE_AGE_HOURS).default(24),
    /** Most payments of one card (by its keyed fingerprint) the queue holds at once. */
    maxCountPerCard: z.number().int().min(0).max(MAX_OFFLINE_COUNT).default(2),
    /** File holding the 32-byte key (hex or base64) for card data at rest; created 0600 when absent. */
    keyFile: z.string().min(1).default('var/offline.key'),
    forwardConcurrency: z.number().int().min(1).max(64).default(4),
  })
  .prefault({});

const ratePeriod = z.strictObject({
  /** Minutes this rate applies for, counted from the start of the stay (last period repeats). */
  minutes: z.number().int().positive(),
  /** Price in minor units per `unitMinutes` during this period. */
  priceMinor: z.number().int().min(0),
  unitMinutes: z.number().int().positive(),
});

export const tariffSchema = z
  .strictObject({
    periods: z
      .array(ratePeriod)
      .min(1)
      .default([{ minutes: 1440, priceMinor: 150, unitMinutes: 30 }]),
    graceMinutes: z.number().int().min(0).default(10),
    maxStayMinutes: z.number().int().positive().default(240),
    dailyCapMinor: z.number().int().min(0).default(2_000),
    lostTicketFeeMinor: z.number().int().min(0).default(3_000),
    /** How a started unit is charged. */
    rounding: z.enum(['up', 'down', 'nearest']).default('up'),
    /** Minutes a meter pre-authorization may stay uncaptured before it is reversed automatically. */
    captureWindowMinutes: z.number().int().positive().default(1_440),
    /** Tap-and-go: maximum stay before an open hold is reversed. */
    tapAndGoMaxStayMinutes: z.number().int().positive().default(1_440),
    /** Tap-and-go: amount held at entry, minor units. */
    tapAndGoHoldMinor: z.number().int().positive().default(2_000),
    /**
     * Tap-and-go anti-passback: a card whose stay is still open (a car that entered with it has not left) is refused
     * entry before any pre-authorization. false: one card may enter for several vehicles (each exit then claims the
     * card's last entry).
     */
    tapAndGoOneStayPerCard: z.boolean().default(true),
    /** Whether the meter may use incremental authorizations (otherwise a new pre-authorization). */
    allowIncremental: z.boolean().default(true),
    /**
     * What the meter pre-authorizes. `maximum` (spec 001, Card-present parking: "pre-authorize maximum time, capture
     * actual, reverse unused"): the price of `maxStayMinutes`, so that the actual stay, overstay included, is captured
     * at its real price and an extension needs no further authorization. `chosen`: the price of the chosen duration,
     * for markets that sell fixed time; an extension is an incremental authorization (or a new pre-authorization) and
     * the capture never exceeds what was bought.
     */
    meterAuthorization: z.enum(['maximum', 'chosen']).default('maximum'),
  })
  // A meter session may last the longest stay: its hold must still be there to capture the fee at its end.
  .refine((t) => t.captureWindowMinutes >= t.maxStayMinutes, {
    path: ['captureWindowMinutes'],
    message:
      'shorter than tariff.maxStayMinutes: a paid stay would have its hold reversed before its fee is captured',
  })
  .prefault({});

export const dccSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Processor family for DCC authorization fields (spec 001): A or B. */
    processorFamily: z.enum(['A', 'B']).default('A'),
    /**
     * Offer the currency choice again at completion (reference/kiosk.md §1: some acquirers ask for the choice at the
     * pre-authorization and again at completion). Meter only: when the session's hold was converted and a fee is owed
     * at the end of the session, the customer chooses again between the fee in the local currency and in the card's
     * currency at the authorization's rate; anything but the card's currency (the local currency, cancel, a timeout)
     * takes the fee as a new sale in the local currency and reverses the converted hold.
     */
    choiceAtCompletion: z.boolean().default(false),
    /**
     * For acquirers that forbid conversion on contactless at or below the CVM limit (reference/kiosk.md §1): that
     * limit, minor units of `terminal.currency`. A contactless payment (EMV or magnetic-stripe mode) of at most this
     * amount is not offered conversion and goes in the local currency; inserted or swiped cards are not concerned.
     * Absent: conversion is offered on contactless at any amount.
     */
    contactlessCvmLimitMinor: z.number().int().min(0).optional(),
  })
  .prefault({});

/**
 * A host whose pages a payment link's QR code may open (`links.hostedPageHosts`): a host name (`pay.example.com`), or
 * `*.` and a domain of at least two labels for any host below it (`*.example.com`: not `example.com` itself, nor a
 * whole top-level domain), or a bracketed IPv6 literal; with `:port` when the page is not on the default port of https.
 * ASCII only (an internationalised name in its `xn--` form, as a URL holds it); read in lower case.
 */
const hostedPageHost = z
  .string()
  .toLowerCase()
  .refine(
    (entry) => {
      const m = /^(\*\.)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/.exec(entry);
      if (m === null) return false;
      const [, wildcard, host = '', port] = m;
      if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535 || port.startsWith('0')))
        return false;
      if (host.startsWith('[')) return wildcard === undefined && URL.canParse(`https://${host}/`);
      const labels = host.split('.');
      const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
      return labels.every((l) => label.test(l)) && (wildcard === undefined || labels.length >= 2);
    },
    {
      message:
        'not a host name ("pay.example.com"), a wildcard for the hosts below a domain ("*.example.com"), or either with ":port"',
    },
  );

/**
 * Payment links (issue 14; spec 000): how long the terminal waits for a link it shows to be paid, how it learns that it
 * was (the signed notification, received by a listener of the terminal or fetched from a relay; and a look at the
 * link's status through the API meanwhile), and the line item it sells.
 */
export const linksSchema = z
  .strictObject({
    /** Seconds the terminal waits for the payment of a link before it deactivates it (the customer walked away). */
    waitSeconds: z.number().int().min(30).max(86_400).default(600),
    /** Seconds between looks at a watched link's status through the API (fallback: sees a link made INACTIVE). */
    pollSeconds: z.number().int().min(5).max(3_600).default(30),
    /** The line item's product name (checked by the personal-data guard like every field). */
    productName: z.string().min(1).max(64).default('Parking'),
    /**
     * Hosts whose pages a link's QR code may open (the customer's phone goes there to pay): a link whose answer names a
     * page elsewhere is refused and deactivated. Absent: the gateway's own host and port (`gateway.baseUrl`, or the
     * embedded sandbox's), the only host spec 000 and gateway.md give the page. Plain http only when the gateway itself
     * is plain http on this machine.
     */
    hostedPageHosts: z.array(hostedPageHost).min(1).max(16).optional(),
    /**
     * Pay by phone at the terminal: a "Pay by phone" choice beside the card where a fee is due (the pay station's
     * confirmation, the meter's confirmation of the time bought, the tap-and-go exit), on the models listed. The screen
     * shows the link's QR code and URL and waits `waitSeconds` (times the accessibility factor in accessibility mode)
     * before it deactivates the link. Offered only while the terminal receives the link-paid notifications.
     */
    payByPhone: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** The tap-and-go exit asks card or phone only when listed (its exit is otherwise one tap). */
        models: z.array(z.enum(['kiosk', 'meter', 'tap-and-go'])).default(['kiosk', 'meter']),
        waitSeconds: z.number().int().min(30).max(3_600).default(300),
      })
      .prefault({}),
    /**
     * Pay later: when the tap-and-go exit's capture or the meter's capture cannot be completed (declined, the card
     * gone), the terminal issues a link for the amount owed, shows it and prints it on the receipt printer.
     */
    payLater: z.boolean().default(false),
    notifications: z
      .strictObject({
        /** An HTTP listener of the terminal that the gateway POSTs notifications to (absent: none). */
        listen: z
          .strictObject({
            host: z.string().min(1).default('127.0.0.1'),
            /** 0 picks a free port (the embedded sandbox is told the URL). */
            port: z.number().int().min(0).max(65_535).default(8_471),
            path: z
              .string()
              .regex(/^\/[A-Za-z0-9/_-]*$/)
              .default('/payment-links/notifications'),
          })
          .optional(),
        /**
         * A relay that receives notifications for a terminal the gateway cannot reach: the terminal fetches them
         * (GET, answer `{notifications: [{headers, body}]}` with each body as the exact text received) and verifies
         * each itself.
         */
        relay: z
          .strictObject({
            url: z.url(),
            pollSeconds: z.number().int().min(1).max(600).default(5),
          })
          .optional(),
        /** File holding the base64 key notifications are signed with; default the gateway's shared secret. */
        secretFile: z.string().min(1).optional(),
        /**
         * Most seconds between a notification's signed time and the terminal's clock; one fetched from the relay is
         * refused only when signed that far in the future (the relay may hold it longer).
         */
        toleranceSeconds: z.number().int().min(30).max(3_600).default(300),
      })
      .prefault({}),
  })
  .prefault({});

export const oauthSchema = z
  .strictObject({
    clientId: z.string().min(1).optional(),
    clientSecretFile: z.string().min(1).optional(),
    redirectUrl: z.url().default('http://127.0.0.1:8765/oauth/callback'),
    portalUrl: z.url().optional(),
    tokenUrl: z.url().optional(),
    /** Where the rotated refresh token is kept, encrypted. */
    tokenStoreFile: z.string().min(1).default('var/oauth-tokens.enc'),
    /**
     * The access token is renewed in the background this long before it expires (half its life when it lives less
     * than twice this), while it goes on serving requests: the time a renewal and its retries have before a request
     * would wait on the token host.
     */
    renewBeforeExpirySeconds: z.number().int().min(10).max(3_600).default(300),
  })
  .prefault({});

export const bridgeSchema = z
  .strictObject({
    /** Port of the headless UI on 127.0.0.1; 0 picks a free one. */
    port: z.number().int().min(0).max(65_535).default(8_470),
    /**
     * Headless: the file `start` writes the screen's URL to (this start's secret in it), for the kiosk browser's
     * launcher — mode 0600, replaced whole and atomically at each start, removed at the stop (relative to the working
     * directory). None when absent.
     */
    urlFile: z.string().min(1).optional(),
  })
  .prefault({});

export const logSchema = z
  .strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Log file (JSON lines); standard error when absent. */
    file: z.string().min(1).optional(),
  })
  .prefault({});

/** The customer's time on input screens (WCAG 2.2.1): the question "Do you need more time?", then the attract screen. */
export const customerSchema = z
  .strictObject({
    /** Seconds without input on a ticket, duration, amount or confirmation screen before the question. */
    inactivitySeconds: z.number().int().min(10).max(600).default(45),
    /** Seconds the question waits for an answer (WCAG 2.2.1: at least 20) before the attract screen. */
    moreTimeSeconds: z.number().int().min(20).max(300).default(20),
    /** Both are multiplied by this in accessibility mode. */
    accessibilityFactor: z.number().min(1).max(10).default(2),
    /**
     * Speech output in accessibility mode (EN 301 549 5.1.3): `platform` — the screen speaks through the platform's
     * speech synthesis (Web Speech API in Electron or Chromium); `espeak-ng` — the terminal speaks itself through
     * espeak-ng (Linux kiosks); `none`.
     */
    speech: z
      .strictObject({
        engine: z.enum(['platform', 'espeak-ng', 'none']).default('platform'),
        /** Volume each customer starts with, 0–1 (set it so that it stays at or below 65 dBA, kiosk.md §2). */
        volume: z.number().min(0.1).max(1).default(0.6),
        /** Speaking rate, 1 is normal. */
        rate: z.number().min(0.5).max(2).default(1),
        /** The espeak-ng program (a name on PATH or an absolute path). */
        espeakPath: z.string().min(1).default('espeak-ng'),
      })
      .prefault({}),
  })
  .prefault({});

/** A time of day `HH:MM` (24 h), in `terminal.timezone`. */
const timeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'a time of day HH:MM (24 h)' });

/**
 * The fleet link (issue 15): the terminal reports to the operator's MQTT broker and takes signed commands from it
 * (src/fleet/). Absent: no fleet link. Secrets (the TLS key, the password, the fleet key) are files, checked like every
 * secret file (src/config/secret-file.ts).
 */
export const fleetSchema = z.strictObject({
  /** The broker: `mqtts://host:8883` (TLS), `mqtt://`, `wss://` or `ws://`. */
  url: z
    .string()
    .url()
    .refine((u) => /^(mqtts?|wss?):\/\//.test(u), { message: 'an mqtt://, mqtts://, ws:// or wss:// URL' }),
  /**
   * The MQTT version the terminal speaks: 5 (when absent) tells the broker the largest packet the terminal takes, so that
   * an oversized one is dropped at the broker instead of read; 4 (MQTT 3.1.1) for a broker that speaks no MQTT 5,
   * where a packet beyond the command's size is read and then refused.
   */
  mqttVersion: z.union([z.literal(4), z.literal(5)]).optional(),
  /** MQTT client id; default `parking-terminal-<terminal.id>` (stable, so the broker keeps the session). */
  clientId: z.string().min(1).max(128).optional(),
  /** CA certificate(s) (PEM) the broker's certificate must chain to; the system's CAs when absent. */
  caFile: z.string().min(1).optional(),
  /** Client certificate (PEM) for brokers that authenticate terminals by certificate, with `keyFile`. */
  certFile: z.string().min(1).optional(),
  keyFile: z.string().min(1).optional(),
  /** Files holding the broker user name and password. */
  usernameFile: z.string().min(1).optional(),
  passwordFile: z.string().min(1).optional(),
  /** Topics are `<topicPrefix>/<terminal.id>/…`. */
  topicPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, { message: 'topic levels of letters, digits, _ and -' })
    .default('parking'),
  /** Seconds between heartbeats. */
  heartbeatSeconds: z.number().int().min(1).max(3_600).default(60),
  /** Longest wait between two reconnection attempts (the wait doubles from 1 s up to it). */
  reconnectMaxSeconds: z.number().int().min(1).max(3_600).default(60),
  /**
   * The fleet key commands are signed with: an Ed25519 public key (PEM), or a shared HMAC-SHA256 key (the file's
   * text, at least 32 characters). Without it every command is refused (status and heartbeat still flow). Under an
   * HMAC key `apply-config` is refused (NEEDS_ASYMMETRIC_KEY, src/fleet/messages.ts ASYMMETRIC_KEY_COMMANDS).
   */
  commandKeyFile: z.string().min(1).optional(),
  /** Longest validity (expiresAt − issuedAt) of a command the terminal accepts, seconds. */
  commandMaxAgeSeconds: z.number().int().min(10).max(86_400).default(600),
  /** When a `restart` command may restart the terminal, in `terminal.timezone` (end before start spans midnight). */
  maintenanceWindow: z
    .strictObject({ start: timeOfDay.default('03:00'), end: timeOfDay.default('05:00') })
    .prefault({}),
});

/**
 * The kiosk service (deploy/systemd/parking-terminal.service; README, Running as a kiosk service): the health loop
 * behind systemd's watchdog and the daily restart in the maintenance window (`fleet.maintenanceWindow`, its default
 * without a fleet link).
 */
export const serviceSchema = z
  .strictObject({
    /** Restart once a day in the maintenance window, at the first moment no customer and no money is in flight. */
    dailyRestart: z.boolean().default(true),
    /** Seconds the reader link may stay down before the watchdog stops being fed (a restart resets the link). */
    readerGraceSeconds: z.number().int().min(10).max(86_400).default(300),
    /** Seconds without a sign of life of the UI (the kiosk window's renderer) before the watchdog stops being fed. */
    uiStaleSeconds: z.number().int().min(5).max(3_600).default(60),
  })
  .prefault({});

/**
 * Updates of the packaged kiosk app (electron-updater; README, Updates): downloaded any time, installed only in the
 * maintenance window when nothing is in flight. Absent: no updates.
 */
export const updatesSchema = z.strictObject({
  /** The update server (a generic provider: the folder holding `latest-linux.yml` and the packages). */
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), { message: 'an http:// or https:// URL' }),
  /** The channel (electron-updater: `latest`, `beta`, `alpha`); a terminal takes its own and the more stable ones. */
  channel: z.enum(['latest', 'beta', 'alpha']).default('latest'),
  /** Hours between two checks for a new version. */
  checkHours: z.number().int().min(1).max(168).default(4),
});

/** The attended mobile terminal (`terminal.model: attended`). */
export const attendedSchema = z
  .strictObject({
    /**
     * Whether CREDIT may start a standalone credit (spec 001 `Parking Standalone Credit`: money out to any card, linked
     * to no sale), always behind the operator PIN. False: refused (CREDIT_DISABLED); refunds of a sale stay possible.
     */
    standaloneCredit: z.boolean().default(true),
  })
  .prefault({});

export const configSchema = z.strictObject({
  terminal: terminalSchema,
  reader: readerSchema,
  printer: printerSchema,
  receipts: receiptsSchema,
  gateway: gatewaySchema,
  journal: journalSchema,
  offline: offlineSchema,
  tariff: tariffSchema,
  dcc: dccSchema,
  oauth: oauthSchema,
  links: linksSchema,
  bridge: bridgeSchema,
  log: logSchema,
  customer: customerSchema,
  attended: attendedSchema,
  /** Redirect-based alternative methods (spec 001 profiles): alt-methods.ts. */
  alternativeMethods: alternativeMethodsSchema,
  /** The MQTT fleet link (src/fleet/); absent = no fleet link. */
  fleet: fleetSchema.optional(),
  /** The kiosk service: watchdog health loop, daily restart. */
  service: serviceSchema,
  /** Updates of the packaged app; absent = no updates. */
  updates: updatesSchema.optional(),
});

/** The validated configuration, every default filled in. */
export type Config = z.infer<typeof configSchema>;
/** What a configuration file may contain: any subset of {@link Config}. */
export type ConfigInput = z.input<typeof configSchema>;
