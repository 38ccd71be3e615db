/**
 * What a gateway id is to the terminal — the id of a payment, capture, refund or alternative-method sale: 1–64 letters,
 * digits, `_` or `-`. One rule for both directions: an id put into a request path (so that a path can never be altered)
 * and an id the gateway hands over to be kept (the journal keeps printable ASCII of at most 64 characters, and a
 * receipt prints it): an id outside it is refused where it enters, never stored, printed or sent.
 */
export function isGatewayId(id: string): boolean {
  return GATEWAY_ID.test(id);
}

/** One object for every call: a literal in the function would make a new one each time. */
const GATEWAY_ID = /^[A-Za-z0-9_-]{1,64}$/;
