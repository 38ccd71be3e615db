/**
 * A rate or a percentage as the terminal keeps and sends it — a DCC offer's exchange rate and margin (spec 001): a
 * decimal text of at most 15 digits before the point and 15 after, written once for the gateway client that reads it
 * and the journal that keeps it.
 */
const RATE_TEXT = /^\d{1,15}(\.\d{1,15})?$/;

/** Whether `text` is a rate in the shape the terminal keeps and sends. */
export function isRateText(text: unknown): text is string {
  return typeof text === 'string' && RATE_TEXT.test(text);
}

/**
 * The rate an answer states, as the exact decimal text it stands for; undefined when there is none the terminal can
 * keep. A text is taken as written when it has the shape of {@link isRateText}. A JSON number is written out in plain
 * digits (`1e-7` is `0.0000001`) when its shortest form has at most 15 significant digits — every decimal of 15 digits
 * or fewer reads back from a double exactly, so that text is the one sent; with more, digits the gateway sent may have
 * been lost on the way (`0.12345678901234567`), and no text can be told to be the gateway's.
 */
export function rateTextOf(value: unknown): string | undefined {
  if (typeof value === 'string') return isRateText(value) ? value : undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  // toExponential() without a digit count: as many digits as the value needs, and no more (the shortest form).
  const m = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(value.toExponential());
  if (m === null) return undefined;
  const digits = `${m[1] ?? ''}${m[2] ?? ''}`;
  if (digits.length > 15) return undefined;
  const integerDigits = Number(m[3]) + 1;
  const text =
    integerDigits <= 0
      ? `0.${'0'.repeat(-integerDigits)}${digits}`
      : integerDigits >= digits.length
        ? `${digits}${'0'.repeat(integerDigits - digits.length)}`
        : `${digits.slice(0, integerDigits)}.${digits.slice(integerDigits)}`;
  return isRateText(text) ? text : undefined;
}
