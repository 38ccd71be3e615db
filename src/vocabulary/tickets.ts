/**
 * A pay-station ticket as the terminal takes it: 1 to 32 letters, digits or dashes (what the entry gate prints, or a
 * plate typed in). The one rule of the kiosk machine's ticket entry and of the journal's record of paid tickets.
 */
const TICKET = /^[A-Za-z0-9-]{1,32}$/;

/** Whether `ticket` is one the pay station takes. */
export function isTicket(ticket: unknown): ticket is string {
  return typeof ticket === 'string' && TICKET.test(ticket);
}
