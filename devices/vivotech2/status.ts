import { decodeTlv, flattenTlv, TlvError } from '../../src/emv/index.js';
import { ReaderError, type ReaderErrorCode } from '../reader.js';

/** Reply status codes, byte 11 of a reader frame (reader-protocol.md, Status codes). */
export const STATUS = {
  OK: 0x00,
  INCORRECT_HEADER: 0x01,
  UNKNOWN_COMMAND: 0x02,
  UNKNOWN_SUBCOMMAND: 0x03,
  CRC_ERROR: 0x04,
  INCORRECT_PARAMETER: 0x05,
  PARAMETER_NOT_SUPPORTED: 0x06,
  MALFORMATTED_DATA: 0x07,
  TIMEOUT: 0x08,
  FAILED: 0x0a,
  COMMAND_NOT_ALLOWED: 0x0b,
  SUBCOMMAND_NOT_ALLOWED: 0x0c,
  BUFFER_OVERFLOW: 0x0d,
  USER_INTERFACE_EVENT: 0x0e,
  REQUEST_ONLINE_AUTHORIZATION: 0x23,
} as const;

const STATUS_NAMES: Readonly<Record<number, string>> = {
  0x00: 'OK',
  0x01: 'incorrect header tag',
  0x02: 'unknown command',
  0x03: 'unknown sub-command',
  0x04: 'CRC error',
  0x05: 'incorrect parameter',
  0x06: 'parameter not supported',
  0x07: 'mal-formatted data',
  0x08: 'timeout',
  0x0a: 'failed/NACK',
  0x0b: 'command not allowed',
  0x0c: 'sub-command not allowed',
  0x0d: 'buffer overflow',
  0x0e: 'user interface event',
  0x23: 'request online authorization',
};

/** Human name of a status code, e.g. "unknown command"; "status 0xNN" for codes the guide does not list. */
export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `status 0x${status.toString(16).padStart(2, '0').toUpperCase()}`;
}

/** Activate error codes: first data byte of a failed Activate / Get Transaction Result (reader-protocol.md). */
export const ACTIVATE_ERRORS: Readonly<
  Record<number, { name: string; code: ReaderErrorCode; cardUnreadable?: true }>
> = {
  0x01: { name: 'out-of-sequence command', code: 'READER_PROTOCOL' },
  0x02: { name: 'go to contact interface', code: 'CARD_USE_CONTACT' },
  0x03: { name: 'transaction amount is zero', code: 'READER_PROTOCOL' },
  // The card could not be read or talked to (20, 24): on the contact chip ReaderError's `chipUnreadable`, after which
  // EMV allows the stripe; during a tap `tapFailed`, after which it does not (failedInterface).
  0x20: { name: 'card returned error status', code: 'CARD_ERROR', cardUnreadable: true },
  0x21: { name: 'collision: more than one card', code: 'CARD_COLLISION' },
  // Over the contactless limit: the card must be inserted instead.
  0x22: { name: 'amount over maximum limit', code: 'CARD_USE_CONTACT' },
  0x23: { name: 'request online authorization', code: 'CARD_ERROR' },
  0x24: { name: 'card communication error', code: 'CARD_ERROR', cardUnreadable: true },
  0x25: { name: 'card blocked', code: 'CARD_BLOCKED' },
  0x26: { name: 'card expired', code: 'CARD_EXPIRED' },
  0x27: { name: 'unsupported card', code: 'CARD_UNSUPPORTED' },
  // The card stopped answering mid-read: it left the field or was pulled out of the slot.
  0x30: { name: 'card did not respond', code: 'CARD_REMOVED' },
  0x40: { name: 'unknown data element', code: 'READER_PROTOCOL' },
  0x41: { name: 'required data element missing', code: 'READER_PROTOCOL' },
  0x42: { name: 'card generated AAC', code: 'CARD_DECLINED_OFFLINE' },
  0x43: { name: 'card generated ARQC', code: 'CARD_ERROR' },
  0x50: { name: 'SDA/DDA failed (not supported by card)', code: 'CARD_ERROR' },
  0x51: { name: 'SDA/DDA/CDDA failed (CA public key)', code: 'CARD_ERROR' },
  0x52: { name: 'SDA/DDA/CDDA failed (issuer public key)', code: 'CARD_ERROR' },
  0x53: { name: 'SDA failed (SSAD)', code: 'CARD_ERROR' },
  0x54: { name: 'DDA/CDDA failed (ICC public key)', code: 'CARD_ERROR' },
  0x55: { name: 'DDA/CDDA failed (dynamic signature)', code: 'CARD_ERROR' },
  0x56: { name: 'processing restrictions step failed', code: 'CARD_ERROR' },
  0x57: { name: 'terminal risk management step failed', code: 'CARD_ERROR' },
  0x58: { name: 'cardholder verification step failed', code: 'CARD_ERROR' },
  0x62: { name: 'generic error', code: 'CARD_ERROR' },
};

const hex2 = (n: number): string => n.toString(16).padStart(2, '0').toUpperCase();

/**
 * The interface on which a failed Activate talked to the card, from the failure data (error code, SW1, SW2, RF state
 * code, TLVs; reader-protocol.md). The reader's error code does not say it, and nothing in the Activate request chooses
 * an interface (the reader offers its own), so the driver cannot know it from what it sent either. What the failure
 * data does say:
 * - the RF state code is the state of the reader's contactless (RF) exchange with the card when it failed: any value
 *   other than 00 means the card was being talked to contactless — a tap;
 * - the TLVs may carry the reader's track source DF30, whose 00 is contactless (as in a successful reply), or the POS
 *   entry mode 9F39 of a tap (07, 91);
 * - RF state 00 with nothing naming contactless: no contactless exchange was under way, so the card that answered an
 *   error or could not be talked to was the one in the contact slot.
 * Without an RF state code (a reply shorter than the protocol's four bytes) nothing says which interface failed:
 * `undefined`, and the error opens no fallback — the stripe is never taken on a guess. Nor with RF state 00 and TLVs
 * that do not decode (cut short, malformed): a tap may fail with RF state 00 and its track source in the TLVs, so
 * TLVs that cannot be read may be the very ones that named contactless — `undefined` too.
 */
function failedInterface(data: Uint8Array): 'contact' | 'contactless' | undefined {
  const rfState = data[3];
  if (rfState === undefined) return undefined;
  if (rfState !== 0x00) return 'contactless';
  if (data.length > 4) {
    try {
      for (const { tag, value } of flattenTlv(decodeTlv(data.subarray(4)))) {
        if (tag === 'DF30' && value[0] === 0x00) return 'contactless';
        if (tag === '9F39' && (value[0] === 0x07 || value[0] === 0x91)) return 'contactless';
      }
    } catch (e) {
      // TLVs that do not decode may have named contactless: no interface is known, and no fallback is opened.
      if (!(e instanceof TlvError)) throw e;
      return undefined;
    }
  }
  return 'contact';
}

/**
 * The typed error for a reply whose status is not a success. `08` is the reader's timeout: for an Activate-family
 * command it means no card came within the wait (CARD_NOT_PRESENTED: the reader answered, nobody presented a card),
 * for any other command READER_TIMEOUT; other protocol statuses are READER_PROTOCOL. For Activate-family replies (`failed` data = error code, SW1, SW2, RF state, TLVs) the first data
 * byte selects the card error.
 */
export function errorForStatus(
  cmdName: string,
  status: number,
  data: Uint8Array,
  activateFamily: boolean,
): ReaderError {
  if (status === STATUS.TIMEOUT) {
    if (activateFamily)
      return new ReaderError('CARD_NOT_PRESENTED', `${cmdName}: no card presented in time (status 08)`, {
        status,
      });
    return new ReaderError('READER_TIMEOUT', `${cmdName}: the reader timed out (status 08)`, { status });
  }
  const first = data[0];
  if (activateFamily && first !== undefined && status === STATUS.FAILED) {
    const known = ACTIVATE_ERRORS[first];
    const name = known?.name ?? `error code 0x${hex2(first)}`;
    const unreadable = known?.cardUnreadable === true ? failedInterface(data) : undefined;
    return new ReaderError(known?.code ?? 'CARD_ERROR', `${cmdName} failed: ${name}`, {
      status,
      activateErrorCode: first,
      ...(unreadable === 'contact' ? { chipUnreadable: true as const } : {}),
      ...(unreadable === 'contactless' ? { tapFailed: true as const } : {}),
    });
  }
  return new ReaderError(
    'READER_PROTOCOL',
    `${cmdName}: reader answered ${statusName(status)} (0x${hex2(status)})`,
    {
      status,
      ...(activateFamily && first !== undefined ? { activateErrorCode: first } : {}),
    },
  );
}
