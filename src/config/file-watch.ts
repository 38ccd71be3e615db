import { closeSync, constants, fstatSync, openSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { CONFIG_MAX_BYTES } from './load.js';

/**
 * How long a change must be followed by no other before the file is read, and how far apart the two reads that must
 * find the same content are: an editor's save is several writes.
 */
export const CONFIG_WATCH_DEBOUNCE_MS = 500;

export interface ConfigFileWatch {
  /**
   * Reports the file as a change of it is reported, once two reads `debounceMs` apart find the same content (a
   * periodic check besides the watch: one that missed a change, or ended). Nothing more while a change is settling.
   */
  recheck(): void;
  /** Stops watching; no call of `changed` follows. Idempotent. */
  close(): void;
}

/**
 * What the configuration file holds, as far as telling a change goes: its bytes, or why they cannot be read (a file
 * larger than the loader reads is refused whatever it holds: its size stands for its bytes).
 */
type FileState = { bytes: Buffer } | { unreadable: string };

function stateOf(file: string): FileState {
  let fd: number;
  try {
    // O_NONBLOCK, as the loader opens it: a FIFO put in the file's place must not hold the watch forever.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { unreadable: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { unreadable: 'not a regular file' };
    if (stat.size > CONFIG_MAX_BYTES) return { unreadable: `${stat.size} bytes` };
    return { bytes: readFileSync(fd) };
  } catch (error) {
    return { unreadable: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    closeSync(fd);
  }
}

function sameState(a: FileState, b: FileState): boolean {
  if ('bytes' in a) return 'bytes' in b && a.bytes.equals(b.bytes);
  return 'unreadable' in b && a.unreadable === b.unreadable;
}

/**
 * Calls `changed` once the configuration file `path` has changed, stayed quiet for `debounceMs`, and then read the
 * same twice `debounceMs` apart. Quiet alone is not enough: a file written in place in pieces (copied over a slow
 * link, an editor that writes a part, pauses, writes the rest) is quiet between them, and a YAML file cut short can
 * still be valid — without its `gateway` section, say, which would start the terminal on the sandbox gateway's
 * defaults. A writer that pauses for two debounces or more between two pieces is not told apart from one that has
 * finished: writing a new file and renaming it over this one (as `apply-config` and most editors do) never shows a
 * part.
 *
 * The directory is watched, not the file: an editor or `apply-config` replaces the file by renaming a new one over it
 * (a new inode, which a watch of the old file would never see), and a file removed and written again is caught too.
 * `failed` gets an error of the watch itself (the directory removed, or not there to watch); the watch has ended then,
 * and `recheck` still reads the file.
 */
export function watchConfigFile(
  path: string,
  changed: () => void,
  options: { debounceMs?: number; failed?: (error: Error) => void } = {},
): ConfigFileWatch {
  const file = resolve(path);
  const name = basename(file);
  const debounceMs = options.debounceMs ?? CONFIG_WATCH_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | undefined;
  /** The file as the last read after the last change found it; undefined until that read. */
  let read: FileState | undefined;
  let closed = false;
  const look = (): void => {
    timer = undefined;
    if (closed) return;
    const now = stateOf(file);
    if (read !== undefined && sameState(read, now)) {
      read = undefined;
      changed();
      return;
    }
    // The first read, or the file still changing (with or without a watch event): read it again a debounce later.
    read = now;
    timer = setTimeout(look, debounceMs);
  };
  const settle = (): void => {
    clearTimeout(timer);
    read = undefined;
    timer = setTimeout(look, debounceMs);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, filename) => {
      // No name (some platforms leave it out): it may be the file.
      if (closed || (filename !== null && filename.toString() !== name)) return;
      settle();
    });
    watcher.on('error', (error) => {
      watcher?.close();
      watcher = undefined;
      options.failed?.(error);
    });
  } catch (error) {
    // The directory is not there (or not readable): no watch, as when it ends.
    options.failed?.(error as Error);
  }
  return {
    recheck() {
      if (!closed && timer === undefined) settle();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
