import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { oauthTokensResealer } from '../../host/gateway-adapters.js';
import { fingerprintKeyPath, replaceFingerprintKey } from '../../host/keys.js';
import {
  AuditStore,
  fileKeyProvider,
  openJournal,
  rotateKeyFile,
  type RotateKeyOptions,
} from '../../journal/index.js';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, printJson, UsageError, type Command } from '../output.js';

const USAGE = `parking-terminal offline rotate-key [--config FILE]
parking-terminal offline replace-fingerprint-key --confirm [--config FILE]
  rotate-key    replaces the key of card data at rest (offline.keyFile) with a new random one: every value
                sealed under it in the journal (stored offline payments, the tags and currency-conversion
                disclosures kept for open and converted authorizations) is sealed again under the new key in
                one transaction, and the OAuth token store with them; then the new key file takes the old
                one's place. Crash-safe: the next start
                or rotation finishes or undoes an interrupted one. Refused (JOURNAL_LOCKED, exit 2) while the
                terminal runs on the same journal; refused (JOURNAL_KEY) when the key file is not the one the
                journal's data is sealed with, or when it is a symbolic link or has another name (the
                retired key would stay on disk under it). Recorded in the audit log (key-rotate). Prints
                {"rotated": true, "keyFile", "storedPayments", "tagSets", "disclosures", "pendingRotation"}
  replace-fingerprint-key
                writes a new card fingerprint key (fingerprint.key beside the journal) in place of a lost one:
                only where the file is missing or holds no key (refused, JOURNAL_KEY, over a key). What was
                matched by card under the lost key is matched no more: the open tap-and-go stays are not found
                at their exit (their holds are released at their expiry), a closed stay's exit that would open
                again or charge an outstayed fee does not, and the open offline payments no longer count
                against their card's limit. Recorded in the audit log (fingerprint-key-replace) with what is
                lost (counts and ids, no card data). Refused while the terminal runs (JOURNAL_LOCKED). Prints
                {"replaced": true, "keyFile", "previousFile", "openStays", "closedStays", "offlinePayments",
                "operator"}; without --confirm, refused (CONFIRM_REQUIRED, exit 2), naming what would be lost
  --confirm     replace-fingerprint-key: the operator accepts that what is listed will no longer match
  --config FILE configuration (JSON or YAML); embedded defaults otherwise`;

/** `parking-terminal offline rotate-key`; `afterStep` lets tests stop the rotation where a crash would. */
export function createOfflineCommand(deps: { afterStep?: RotateKeyOptions['afterStep'] } = {}): Command {
  return {
    name: 'offline',
    summary: "the terminal's keys: rotate the key of card data at rest, replace a lost card fingerprint key",
    usage: USAGE,
    run(args, io) {
      const { values, positionals } = parseCommandArgs(args, {
        config: { type: 'string' },
        confirm: { type: 'boolean' },
      });
      const sub = positionals.length === 1 ? positionals[0] : undefined;
      if (
        (sub !== 'rotate-key' && sub !== 'replace-fingerprint-key') ||
        (sub === 'rotate-key' && values.confirm)
      )
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: offline rotate-key [--config FILE] | offline replace-fingerprint-key --confirm [--config FILE] ' +
            '(see offline --help)',
        );
      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const journalPath = resolve(io.cwd, config.journal.path);
      if (sub === 'replace-fingerprint-key') {
        if (!existsSync(journalPath))
          throw new UsageError(
            'OFFLINE_NO_JOURNAL',
            `no journal at ${journalPath}: nothing was matched under a key; the start creates one`,
          );
        const journal = openJournal(journalPath);
        try {
          // One sender per journal: refused while the terminal runs, which fingerprints cards under the key it read.
          journal.acquireSenderLock('parking-terminal offline replace-fingerprint-key');
          const replaced = replaceFingerprintKey(journal, {
            keyFile: fingerprintKeyPath(journalPath),
            settings: { tariff: config.tariff },
            confirm: (loss) => {
              if (values.confirm !== true)
                throw new UsageError(
                  'CONFIRM_REQUIRED',
                  `a new card fingerprint key would no longer match ${loss.openStays.length} open tap-and-go ` +
                    `stay(s), ${loss.closedStays.length} closed stay(s) the exit still finds and ` +
                    `${loss.offlinePayments.length} open offline payment(s): run again with --confirm to write it`,
                  { ...loss },
                );
            },
          });
          printJson(io, replaced);
          return Promise.resolve(EXIT_OK);
        } finally {
          journal.close();
        }
      }
      const keyFile = resolve(io.cwd, config.offline.keyFile);
      if (!existsSync(journalPath))
        throw new UsageError(
          'OFFLINE_NO_JOURNAL',
          `no journal at ${journalPath}: nothing is sealed to rotate`,
        );
      // Tags of an earlier version's side file are sealed under the key too; the start moves them into the journal.
      const tagVault = resolve(dirname(journalPath), 'authorization-tags.json');
      if (existsSync(tagVault))
        throw new UsageError(
          'OFFLINE_LEGACY_TAGS',
          `${tagVault} holds tags sealed under the key: start the terminal once (it moves them into the journal)`,
        );
      const journal = openJournal(journalPath);
      try {
        // One sender per journal: refused while the terminal runs, which seals under the key it has read.
        journal.acquireSenderLock('parking-terminal offline rotate-key');
        const audit = new AuditStore(journal);
        const report = rotateKeyFile(journal, {
          keyProvider: fileKeyProvider(keyFile),
          resealOutside: oauthTokensResealer(config, io.cwd),
          // In the transaction that re-seals: the record exists exactly when the journal was rotated.
          record: (counts) =>
            audit.append({ actor: 'operator', action: 'key-rotate', result: 'ok', details: { ...counts } }),
          ...(deps.afterStep ? { afterStep: deps.afterStep } : {}),
        });
        printJson(io, { rotated: true, keyFile, ...report });
        return Promise.resolve(EXIT_OK);
      } finally {
        journal.close();
      }
    },
  };
}

export default createOfflineCommand();
