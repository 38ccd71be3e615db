import { JournalError } from './errors.js';
import { checkObject, readOn, type JournalConnection } from './field-checks.js';

/** A setting's value as the terminal keeps it: a leaf of the configuration (arrays as their JSON text). */
export type SettingValue = string | number | boolean | null;

/** The settings a terminal ran with, by dotted key (`offline.policy`). */
export type Settings = Readonly<Record<string, SettingValue>>;

function isSettingValue(value: unknown): value is SettingValue {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * The settings of the terminal's last start, in the journal database (migration 0010, one row). Read and replaced by
 * the host at each start (src/host/configuration-audit.ts); {@link replace} joins a surrounding
 * `journal.atomically(true, …)`, so the audit records of the changes and the new settings commit together.
 */
export class ConfigurationState {
  private readonly stmts;

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      read: db.prepare<[], { settings: string }>('SELECT settings FROM configuration_state WHERE id = 1'),
      replace: db.prepare<{ at: number; settings: string }>(
        `INSERT INTO configuration_state (id, at, settings) VALUES (1, @at, @settings)
         ON CONFLICT (id) DO UPDATE SET at = excluded.at, settings = excluded.settings`,
      ),
    };
  }

  /** The settings recorded last; undefined before the first start that recorded them. */
  read(): Settings | undefined {
    const row = readOn(this.connection, () => this.stmts.read.get());
    if (row === undefined) return undefined;
    const parsed: unknown = JSON.parse(row.settings);
    checkObject(parsed, 'configuration state');
    const settings: Record<string, SettingValue> = {};
    for (const [key, value] of Object.entries(parsed))
      if (isSettingValue(value)) settings[key] = value;
      else throw new JournalError('JOURNAL_INVALID', `configuration state: ${key} is not a setting value`);
    return settings;
  }

  /** Replaces the recorded settings, durably. `JOURNAL_INVALID` for a value that is not a setting. */
  replace(settings: Settings): void {
    checkObject(settings, 'settings');
    for (const [key, value] of Object.entries(settings))
      if (!isSettingValue(value) || (typeof value === 'number' && !Number.isFinite(value)))
        throw new JournalError(
          'JOURNAL_INVALID',
          `setting ${key} is not a string, finite number, boolean or null`,
        );
    this.connection.atomically(true, () => {
      this.stmts.replace.run({ at: this.connection.now().getTime(), settings: JSON.stringify(settings) });
    });
  }
}
