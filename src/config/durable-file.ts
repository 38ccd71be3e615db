import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

/**
 * The one way the terminal writes (and removes) a file of its own that must survive a power cut whole — the key for data at rest
 * (src/journal/encryption.ts), the OAuth token store (src/gateway/auth/oauth.ts), the tap-and-go fingerprint key
 * (src/host/keys.ts), the configuration file the fleet replaces (src/host/fleet-terminal.ts) and the headless screen's
 * URL for the kiosk browser (src/host/bridge/url-file.ts): secrets and settings
 * kept outside the journal database. Every other durable fact lives in the journal (DESIGN.md, money safety rule 6).
 */

/**
 * How the written file takes its place: `create` links it to the path, failing with EEXIST when a file is there (never
 * replaced: two processes creating it together agree on one); `replace` renames it over the path (one atomic step: a
 * reader sees the previous file or the new one).
 */
export type DurablePlacement = 'create' | 'replace';

/**
 * Creates the directory `dir` (with `mode`) and those above it that are missing; EEXIST is no error. Not
 * `mkdirSync(dir, { recursive: true })`: Node's never returns when a directory above exists but answers ENOENT for
 * its child (a path under /proc or /sys): it finds the parent there (EEXIST) and tries the child again, forever, at
 * full CPU, deaf to SIGTERM. Here each directory is tried once more after its parent is made, and that answer is
 * final (thrown). src/log/logger.ts keeps a copy of this for the log file: the log imports nothing of ours but emv.
 */
export function makeDirectory(dir: string, mode?: number): void {
  const make = (): void => {
    try {
      mkdirSync(dir, mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  };
  try {
    make();
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw error;
  }
  makeDirectory(dirname(dir), mode);
  make();
}

/**
 * Writes `data` to `path` whole and durably, readable and writable by its owner only (mode 0600), or not at all: the
 * bytes go to a draft file of their own in the same directory (created 0700 when missing), which is synced (`fsync`)
 * and then linked or renamed to `path` ({@link DurablePlacement}), and the directory is synced. A power cut or a crash
 * at any point therefore leaves the previous file (or none) or the new one, never a file that is empty or cut short.
 * The draft is removed once in place, or when a step fails (the error is thrown); one a crash left behind is never read.
 */
export function writePrivateFileDurably(
  path: string,
  data: string | Uint8Array,
  placement: DurablePlacement,
): void {
  const dir = dirname(path);
  makeDirectory(dir, 0o700);
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  try {
    const fd = openSync(draft, 'wx', 0o600);
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The umask cannot widen 0600, but an explicit chmod documents the intent and covers odd filesystems.
    chmodSync(draft, 0o600);
    if (placement === 'create') linkSync(draft, path);
    else renameSync(draft, path);
  } finally {
    rmSync(draft, { force: true });
  }
  syncDirectory(dir);
}

/**
 * Removes `path` durably: the file is unlinked (nothing to do when it is not there), then its directory is synced, so
 * that a power cut after the call cannot bring the file back — a forgotten secret (the OAuth grant the merchant
 * revoked) stays forgotten. The removal counterpart of {@link writePrivateFileDurably}.
 */
export function removePrivateFileDurably(path: string): void {
  rmSync(path, { force: true });
  syncDirectory(dirname(path));
}

/**
 * Makes the entries of `dir` durable (a file created, linked, renamed or removed in it); where directories cannot be
 * opened, nothing.
 */
export function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch (e) {
    // Windows and some filesystems refuse to sync a directory: the file's own sync is all they offer.
    if (!['EISDIR', 'EINVAL', 'EPERM', 'ENOTSUP'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
  } finally {
    closeSync(fd);
  }
}
