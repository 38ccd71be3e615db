import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** A version of the app and where its package is kept (the AppImage file). */
export interface InstalledVersion {
  version: string;
  path: string;
}

/**
 * What the terminal knows of its versions across starts (README, Updates): the last version that reached READY, a
 * newly installed version on trial with the starts it has had, and the versions that failed their trial.
 */
export interface StartRecord {
  /** The last version that reached READY (its package kept, to go back to). */
  good?: InstalledVersion;
  /** An update installed and not yet confirmed: `attempts` starts so far without READY. */
  trial?: InstalledVersion & { attempts: number };
  /** Versions that failed their trial: never installed again. */
  rejected: string[];
}

export const EMPTY_RECORD: StartRecord = { rejected: [] };

/** Starts a new version may take to reach READY before the previous one runs again. */
export const TRIAL_ATTEMPTS = 3;

/**
 * Before an update is installed: the running version (its package copied aside to `current.path`) becomes the one to
 * go back to, and the new one starts its trial.
 */
export function beforeInstall(
  record: StartRecord,
  current: InstalledVersion,
  next: InstalledVersion,
): StartRecord {
  return { ...record, good: current, trial: { ...next, attempts: 0 } };
}

/** Whether an update to `version` may be downloaded and installed: not one that failed its trial here. */
export function acceptsUpdate(record: StartRecord, version: string): boolean {
  return !record.rejected.includes(version);
}

export type StartDecision =
  | { action: 'run'; record: StartRecord }
  | { action: 'roll-back'; to: InstalledVersion; record: StartRecord; reason: string };

/**
 * At the start of `running`, before anything else: a version on trial that has already used its starts without
 * reaching READY (it crashed, hung and was killed by the watchdog, or was stopped at the start timeout) is rejected
 * and the previous one runs again; otherwise the start is counted.
 */
export function decideStart(
  record: StartRecord,
  running: string,
  maxAttempts = TRIAL_ATTEMPTS,
): StartDecision {
  const trial = record.trial;
  if (!trial || trial.version !== running) return { action: 'run', record };
  if (trial.attempts >= maxAttempts && record.good && record.good.version !== running) {
    return {
      action: 'roll-back',
      to: record.good,
      reason: `version ${running} did not reach READY in ${trial.attempts} start(s)`,
      record: { good: record.good, rejected: [...new Set([...record.rejected, running])] },
    };
  }
  return { action: 'run', record: { ...record, trial: { ...trial, attempts: trial.attempts + 1 } } };
}

/** Once `running` has reached READY: a version on trial is confirmed and becomes the one to go back to. */
export function confirmReady(record: StartRecord, running: string): StartRecord {
  const trial = record.trial;
  if (!trial || trial.version !== running) return record;
  return { good: { version: trial.version, path: trial.path }, rejected: record.rejected };
}

/**
 * The record on disk: a small JSON file in the service's state directory, written atomically. Not in the journal
 * database on purpose: the database belongs to the version under trial (it may have migrated it), and the record must
 * be read before any version's database code runs.
 */
export class StartRecordFile {
  constructor(private readonly path: string) {}

  read(): StartRecord {
    if (!existsSync(this.path)) return EMPTY_RECORD;
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<StartRecord>;
      return { ...parsed, rejected: Array.isArray(parsed.rejected) ? parsed.rejected : [] };
    } catch {
      return EMPTY_RECORD;
    }
  }

  write(record: StartRecord): void {
    const temporary = `${this.path}.new`;
    writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.path);
  }
}
