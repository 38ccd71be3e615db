import { connect } from 'node:net';

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
