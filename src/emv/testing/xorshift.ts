/**
 * xorshift32: a deterministic generator of 32-bit unsigned integers, so that a failing input of a seeded test (the TLV
 * decoder's, the reader's frame parser's and driver's) can be reproduced from its seed. Test helper only.
 */
export function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}
