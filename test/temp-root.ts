import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest's global setup: one temporary directory for the whole run, made the temporary directory (`TMPDIR`) of every
 * test file's process and of every process a test starts, and removed when the run ends. Tests make journals,
 * configurations and key files in temporary directories by the hundred; those a test leaves behind (a test that
 * failed, one whose process was killed, one that never cleaned up) would otherwise stay in the machine's /tmp run after
 * run.
 *
 * The name is short: Unix socket paths made under it (a `NOTIFY_SOCKET`, a pty's link) must stay within 107 bytes.
 */
export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'ptt-'));
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(root, { recursive: true, force: true });
  };
}
