import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HoldRecord } from '../flows/effects.js';

/**
 * Open tap-and-go holds, durable across restarts (a car that entered before a restart must be able to exit, and a
 * hold must still be reversed after the maximum stay). A small JSON file replaced atomically (write, fsync, rename):
 * holds are few and change once per entry and exit. Holds carry no card data (fingerprint and masked PAN only; the
 * card read for the follow-ons lives in memory and is lost with the process, in which case the follow-on goes without
 * EMV tags).
 */
export class HoldStore {
  private holds = new Map<string, HoldRecord & { claimed: boolean }>();

  constructor(private readonly path: string) {
    try {
      const rows = JSON.parse(readFileSync(path, 'utf8')) as HoldRecord[];
      // A hold claimed when the process died is back under watch: its exit never completed.
      for (const h of rows) this.holds.set(h.holdId, { ...h, claimed: false });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }

  private persist(): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      const rows = [...this.holds.values()].map(({ claimed: _c, ...h }) => h);
      writeSync(fd, JSON.stringify(rows));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }

  open(hold: HoldRecord): void {
    this.holds.set(hold.holdId, { ...hold, claimed: false });
    this.persist();
  }

  /** Takes the open hold of a fingerprint out of watch; null when there is none. */
  claim(fingerprint: string): HoldRecord | null {
    for (const h of this.holds.values()) {
      if (h.fingerprint === fingerprint && !h.claimed) {
        h.claimed = true;
        const { claimed: _c, ...hold } = h;
        return hold;
      }
    }
    return null;
  }

  /** Claims a hold by id (expiry); null when it is gone or claimed by an exit. */
  claimById(holdId: string): HoldRecord | null {
    const h = this.holds.get(holdId);
    if (!h || h.claimed) return null;
    h.claimed = true;
    const { claimed: _c, ...hold } = h;
    return hold;
  }

  close(hold: HoldRecord, resolution: 'captured' | 'reversed' | 'returned'): void {
    if (resolution === 'returned') this.holds.set(hold.holdId, { ...hold, claimed: false });
    else this.holds.delete(hold.holdId);
    this.persist();
  }

  /** Unclaimed holds, for the expiry watch. */
  unclaimed(): HoldRecord[] {
    return [...this.holds.values()].filter((h) => !h.claimed).map(({ claimed: _c, ...h }) => h);
  }

  /** Forgets a hold whose authorization was reversed elsewhere (recovery, a late resolution); false when none. */
  drop(holdId: string): boolean {
    if (!this.holds.delete(holdId)) return false;
    this.persist();
    return true;
  }

  /** Whether a hold (claimed or not) with this id is open. */
  has(holdId: string): boolean {
    return this.holds.has(holdId);
  }

  get size(): number {
    return this.holds.size;
  }
}
