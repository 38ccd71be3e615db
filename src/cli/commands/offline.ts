import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { oauthTokensResealer } from '../../host/gateway-adapters.js';
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
  --config FILE configuration (JSON or YAML); embedded defaults otherwise`;

/** `parking-terminal offline rotate-key`; `afterStep` lets tests stop the rotation where a crash would. */
export function createOfflineCommand(deps: { afterStep?: RotateKeyOptions['afterStep'] } = {}): Command {
  return {
    name: 'offline',
    summary:
      'the key of card data at rest: rotate it (re-seals stored payments and kept tags under a new key)',
    usage: USAGE,
    run(args, io) {
      const { values, positionals } = parseCommandArgs(args, { config: { type: 'string' } });
      if (positionals.length !== 1 || positionals[0] !== 'rotate-key')
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: offline rotate-key [--config FILE] (see offline --help)',
        );
      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const journalPath = resolve(io.cwd, config.journal.path);
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
