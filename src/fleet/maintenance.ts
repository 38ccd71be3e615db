/**
 * The maintenance window (`fleet.maintenanceWindow`, kiosk.md §5: vendors restart terminals in a daily window):
 * whether `at` lies in [start, end) in `timeZone`. An end before the start spans midnight (22:00–02:00).
 */
export function inMaintenanceWindow(
  at: Date,
  window: { start: string; end: string },
  timeZone: string,
): boolean {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const hour = Number(parts.find((p) => p.type === 'hour')?.value ?? '0');
  const minute = Number(parts.find((p) => p.type === 'minute')?.value ?? '0');
  const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const now = hour * 60 + minute;
  const start = minutes(window.start);
  const end = minutes(window.end);
  if (start === end) return true;
  return start < end ? now >= start && now < end : now >= start || now < end;
}
