import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** How long a change must be followed by no other before it is reported: an editor's save is several writes. */
export const CONFIG_WATCH_DEBOUNCE_MS = 500;

export interface ConfigFileWatch {
  /** Stops watching; no call of `changed` follows. Idempotent. */
  close(): void;
}

/**
 * Calls `changed` once the configuration file `path` has changed and then stayed quiet for `debounceMs`. The
 * directory is watched, not the file: an editor or `apply-config` replaces the file by renaming a new one over it
 * (a new inode, which a watch of the old file would never see), and a file removed and written again is caught too.
 * `failed` gets an error of the watch itself (the directory removed, or not there to watch); the watch has ended then.
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
  let closed = false;
  let watcher: FSWatcher;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, filename) => {
      // No name (some platforms leave it out): it may be the file.
      if (closed || (filename !== null && filename.toString() !== name)) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (!closed) changed();
      }, debounceMs);
    });
  } catch (error) {
    // The directory is not there (or not readable): no watch, as when it ends.
    options.failed?.(error as Error);
    return { close: () => undefined };
  }
  watcher.on('error', (error) => {
    clearTimeout(timer);
    closed = true;
    watcher.close();
    options.failed?.(error);
  });
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      watcher.close();
    },
  };
}
