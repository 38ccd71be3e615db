import { connect, type Socket } from 'node:net';

/**
 * Sends one request line as written (no client would send it: e.g. `POST http://[ HTTP/1.1`, which Node's parser lets
 * through) to a server of the terminal on 127.0.0.1 and resolves with the status line of its answer, or '' when the
 * connection closed without one.
 */
export function rawStatusLine(port: number, requestLine: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`${requestLine}\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

/**
 * A TCP connection to a server of the terminal on 127.0.0.1 that sends `text`, then `trickle` every 200 ms (a slow
 * client, as an attacker's tool would be); `closed` resolves with the milliseconds until the server closed it.
 */
export function slowClient(
  port: number,
  text: string,
  trickle?: string,
): { socket: Socket; closed: Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  const opened = Date.now();
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write(text);
    if (trickle) timer = setInterval(() => socket.writable && socket.write(trickle), 200);
  });
  socket.on('error', () => undefined);
  socket.resume();
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - opened);
    }),
  );
  return { socket, closed };
}

/** Resolves with what `promise` gave within `ms`, or with 'pending'. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}
