/**
 * The little card knowledge the gateway side needs: the PAN and expiry inside track data, Luhn, and the network a
 * PAN belongs to. The sandbox's own code, not the client's (DESIGN.md, independent oracle).
 */

/** PAN, expiry and service code read from what the terminal sent. */
export interface CardRead {
  pan: string;
  /** YYMM. */
  expiry?: string;
  serviceCode?: string;
}

/** Reads track 2 (`;PAN=YYMMSSS...?`), track 1 (`%BPAN^NAME^YYMMSSS...?`) or both joined. Undefined when neither parses. */
export function readTrackData(trackData: string): CardRead | undefined {
  const t2 = /;?(\d{12,19})[=Dd](\d{4})(\d{3})?/.exec(trackData);
  if (t2?.[1] && t2[2]) return { pan: t2[1], expiry: t2[2], serviceCode: t2[3] || undefined };
  const t1 = /%?B(\d{12,19})\^[^^]{0,26}\^(\d{4})(\d{3})?/.exec(trackData);
  if (t1?.[1] && t1[2]) return { pan: t1[1], expiry: t1[2], serviceCode: t1[3] || undefined };
  return undefined;
}

/** Luhn check of a digit string. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Gateway card type code of a PAN: `001` Visa, `002` Mastercard (51–55, 2221–2720), undefined otherwise. */
export function cardTypeOfPan(pan: string): '001' | '002' | undefined {
  if (pan.startsWith('4')) return '001';
  const two = Number(pan.slice(0, 2));
  const four = Number(pan.slice(0, 4));
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return '002';
  return undefined;
}

/** True when YYMM is before the month of `now` (cards are valid through the end of their expiry month). */
export function isExpired(expiry: string, now: Date): boolean {
  const yy = Number(expiry.slice(0, 2));
  const mm = Number(expiry.slice(2, 4));
  if (!Number.isInteger(yy) || mm < 1 || mm > 12) return true;
  const year = 2000 + yy;
  const nowYear = now.getUTCFullYear();
  const nowMonth = now.getUTCMonth() + 1;
  return year < nowYear || (year === nowYear && mm < nowMonth);
}
