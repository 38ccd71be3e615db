import { PassThrough } from 'node:stream';
import type { CliIo } from '../output.js';

/** A command's streams for a test, run in `cwd`: what it printed to stdout is `out()`. */
export function capturedIo(cwd: string): { io: CliIo; out: () => string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => (text += c.toString()));
  return {
    io: { stdout, stderr: new PassThrough(), cwd, signal: new AbortController().signal },
    out: () => text,
  };
}
