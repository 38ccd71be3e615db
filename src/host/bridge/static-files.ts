import { realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';

/** Content types of what a Vite build emits; anything else is served as opaque bytes. */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Longest URL path the bridge looks up, in characters. */
const MAX_PATH = 1024;

/** Where a request for a static file leads. */
export type StaticLookup =
  | { kind: 'file'; path: string; size: number; contentType: string }
  | { kind: 'bad-request' } // undecodable or forbidden characters
  | { kind: 'not-found' }; // missing, a directory, or outside the root

/**
 * Resolves a URL path to a file inside `root` (an absolute, real path). Never leaves the root: `..` segments, encoded
 * separators and backslashes are refused, and symbolic links are resolved and re-checked. Directories are not listed;
 * `/` is `index.html`.
 */
export async function lookupStatic(root: string, urlPath: string): Promise<StaticLookup> {
  if (urlPath.length > MAX_PATH) return { kind: 'bad-request' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { kind: 'bad-request' };
  }
  if (decoded.includes('\0') || decoded.includes('\\') || !decoded.startsWith('/'))
    return { kind: 'bad-request' };
  const segments = decoded.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s === '..' || s === '.')) return { kind: 'not-found' };
  const relative = segments.length === 0 ? ['index.html'] : segments;
  const candidate = join(root, ...relative);
  if (!candidate.startsWith(root + sep)) return { kind: 'not-found' };
  try {
    const real = await realpath(candidate);
    if (!real.startsWith(root + sep)) return { kind: 'not-found' };
    const info = await stat(real);
    if (!info.isFile()) return { kind: 'not-found' };
    const contentType = CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream';
    return { kind: 'file', path: real, size: info.size, contentType };
  } catch {
    return { kind: 'not-found' };
  }
}
