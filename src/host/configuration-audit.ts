import type { Config } from '../config/index.js';
import type {
  AuditActor,
  ConfigurationState,
  SettingValue,
  Settings,
  SqliteJournal,
} from '../journal/index.js';
import type { AuditTrail } from './audit-trail.js';

/**
 * Configuration changes in the audit log (issue 13, item 7). The terminal reads its configuration at start (and, with
 * the fleet, may be given a new one): what changed since the settings it last ran with is recorded key by key — who,
 * which key, the old and the new value — and the new settings replace the old in the same transaction, so a change is
 * recorded once, and a start that records nothing changed nothing.
 */

/**
 * The configuration as settings by dotted key: objects are walked, arrays and other non-leaf values are kept as their
 * JSON text (a tariff's bands are one setting), `undefined` leaves are absent.
 */
export function settingsOf(config: Config): Settings {
  const out: Record<string, SettingValue> = {};
  const walk = (value: unknown, key: string): void => {
    if (value === undefined) return;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') out[key] = value;
    else if (typeof value === 'number') out[key] = Number.isFinite(value) ? value : String(value);
    else if (typeof value === 'object' && !Array.isArray(value))
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, key ? `${key}.${k}` : k);
    else out[key] = JSON.stringify(value);
  };
  walk(config, '');
  return out;
}

/** One changed setting: `from` absent for a new key, `to` absent for a key no longer set. */
export interface SettingChange {
  key: string;
  from?: SettingValue;
  to?: SettingValue;
}

/** The settings that differ between `before` and `after`, in key order. */
export function settingChanges(before: Settings, after: Settings): SettingChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: SettingChange[] = [];
  for (const key of keys) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && has && Object.is(before[key], after[key])) continue;
    changes.push({
      key,
      ...(had ? { from: before[key] ?? null } : {}),
      ...(has ? { to: after[key] ?? null } : {}),
    });
  }
  return changes;
}

/**
 * Compares `config` with the settings the terminal last ran with, records each change in the audit log (actor
 * `actor`), and keeps `config`'s settings as the new reference — all in one durable transaction. The first start
 * records one `configuration-change` of subject `(initial)` with the number of settings. Returns the changes.
 */
export function recordConfiguration(
  journal: Pick<SqliteJournal, 'atomically'>,
  state: ConfigurationState,
  audit: AuditTrail,
  config: Config,
  actor: AuditActor,
): SettingChange[] {
  const after = settingsOf(config);
  return journal.atomically(true, () => {
    const before = state.read();
    if (before === undefined) {
      audit.record({
        actor,
        action: 'configuration-change',
        subject: '(initial)',
        result: 'ok',
        code: 'INITIAL',
        details: { settings: Object.keys(after).length },
      });
      state.replace(after);
      return [];
    }
    const changes = settingChanges(before, after);
    for (const change of changes) audit.configurationChange({ actor, ...change });
    if (changes.length > 0) state.replace(after);
    return changes;
  });
}
