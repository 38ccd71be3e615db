import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { open as openSealed, seal } from '../journal/index.js';

/**
 * The EMV tag set of each open authorization, kept so that its capture or reversal can repeat it after a restart
 * (gateway.md §7: a capture after an EMV contact pre-authorization, and a reversal of an original with EMV data, carry
 * the original's tags). Values are encrypted (AES-256-GCM, the offline key) in one small file replaced atomically,
 * and deleted once the authorization is settled.
 */
export class TagVault {
  private readonly entries = new Map<string, string>();

  constructor(
    private readonly path: string,
    private readonly key: Buffer,
  ) {
    try {
      const rows = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
      for (const [tx, sealed] of Object.entries(rows)) {
        this.entries.set(tx, openSealed(key, Buffer.from(sealed, 'base64'), `tags:${tx}`).toString('utf8'));
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }

  private persist(): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const rows: Record<string, string> = {};
    for (const [tx, hex] of this.entries)
      rows[tx] = seal(this.key, Buffer.from(hex, 'utf8'), `tags:${tx}`).toString('base64');
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(rows));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }

  put(transactionId: string, tagsHex: string): void {
    this.entries.set(transactionId, tagsHex);
    this.persist();
  }

  get(transactionId: string): string | undefined {
    return this.entries.get(transactionId);
  }

  delete(transactionId: string): void {
    if (this.entries.delete(transactionId)) this.persist();
  }
}
