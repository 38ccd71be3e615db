import { randomFillSync } from 'node:crypto';

/** Crockford base32: no I, L, O, U, so ids read back unambiguously from receipts and support calls. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10; // 48-bit millisecond clock, good until the year 10889
const RANDOM_CHARS = 16; // 80 random bits

let lastTime = -1;
/** {@link encodeTime} of `lastTime`: every id of one millisecond shares it. */
let lastTimeText = '';
let lastRandom: number[] = [];

/**
 * Random bytes drawn from the system's CSPRNG 4 KiB at a time (as `randomUUID` does) and used 16 at a time, each
 * once: one `randomBytes` call per millisecond cost a few microseconds of every payment.
 */
const POOL = Buffer.alloc(RANDOM_CHARS * 256);
let poolOffset = POOL.length;

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET.charAt(t % 32) + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  if (poolOffset + RANDOM_CHARS > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const digits = new Array<number>(RANDOM_CHARS);
  for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = (POOL[poolOffset + i] ?? 0) % 32;
  poolOffset += RANDOM_CHARS;
  return digits;
}

/** Adds one to the base32 digit array; on overflow (2^80 ids in one millisecond) starts over with fresh bits. */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    const d = (next[i] ?? 0) + 1;
    if (d < 32) {
      next[i] = d;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

/**
 * A new `clientReferenceInformation.transactionId` for an original request (authorization, capture, sale, refund,
 * credit). The gateway keys timeout reversals (180 days) and timeout voids (60 days) on it, so it must never repeat:
 * 48 bits of milliseconds plus 80 random bits make a collision within 180 days negligible, and ids generated in the
 * same millisecond by this process are strictly increasing (monotonic ULID). The `T` prefix keeps it from ever being
 * purely numeric, and the fixed width makes lexical order equal time order.
 *
 * @param now clock in epoch milliseconds (tests); defaults to `Date.now()`.
 * @returns 27 characters, `T` + 10 time + 16 random characters of Crockford base32.
 */
export function newTransactionId(now: number = Date.now()): string {
  if (now <= lastTime) {
    // Same millisecond (or a clock that stepped back): keep order by incrementing the previous random part.
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastTimeText = encodeTime(now);
    lastRandom = freshRandom();
  }
  let id = `T${lastTimeText}`;
  for (const d of lastRandom) id += ALPHABET.charAt(d);
  return id;
}
