/**
 * PAN masking (DESIGN.md money safety rule 4): at most the first 6 and the last 4 digits stay visible, and at least
 * 6 characters are always hidden, so that short PANs show fewer digits (a 12-digit PAN shows 2 + 4).
 */
export function maskPan(pan: string): string {
  const s = pan.replace(/[\s-]/g, '');
  const hidden = Math.max(6, s.length - 10);
  const visible = Math.max(0, s.length - hidden);
  const last = Math.min(4, visible);
  const first = Math.min(6, visible - last);
  return s.slice(0, first) + '*'.repeat(s.length - first - last) + s.slice(s.length - last);
}
