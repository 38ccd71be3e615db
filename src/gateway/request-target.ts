/**
 * The URL of a request an HTTP server of the terminal received (the headless bridge, the payment-link notification
 * listener, the OAuth consent redirect), or undefined when its target is not a URL. Node's parser lets through a
 * request line in absolute form that no URL parser reads (`GET http://[ HTTP/1.1`, a port out of range, a bad
 * percent escape): each server answers it 400. Thrown out of a request handler, it would reach the process's
 * last-resort handler and take the terminal out of service — one line from anyone who reaches the port.
 */
export function requestTarget(target: string | undefined, base: string | URL): URL | undefined {
  try {
    return new URL(target ?? '/', base);
  } catch {
    return undefined;
  }
}
