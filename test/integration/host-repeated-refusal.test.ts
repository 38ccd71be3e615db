/**
 * A refusal said again (EN 301 549 5.1.3): a chip card swiped again after its swipe was refused is refused again with
 * the same words on the same screen, and a customer who relies on speech must hear that this try failed too — each
 * refusal is its own utterance, while the snapshots in between (the same refusal shown again) say nothing new.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { CATALOGUES } from '../../src/i18n/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';

let host: TerminalHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function send(h: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
  return r.value;
}

describe('a refusal repeated on the same screen', () => {
  it('is said again for every refused read, and only once for each', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'pt-refusal-speech-'));
    const h = (host = await createTerminalHost(
      parseConfig({ terminal: { model: 'attended', id: 'PTMOBIL1' } }),
      { logger: silentLogger(), cwd },
    ));
    await waitFor(h, ['idle'], 10_000);
    await send(h, { type: 'SET_ACCESSIBILITY', on: true });
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_AMOUNT', minor: 850 });
    const snapshots: TerminalSnapshot[] = [];
    h.subscribe((s) => snapshots.push(s));
    h.simulator!.setCard('chip-swiped-fallback');
    await send(h, { type: 'CONFIRM' });
    const useChip = CATALOGUES.en_GB['result.useChip'];
    // Every utterance, once each, and the refused swipes by the events the screen says them for.
    const said = (): string[] => {
      const byId = new Map<number, string>();
      for (const s of snapshots)
        if (s.customer.speech) byId.set(s.customer.speech.id, s.customer.speech.text);
      return [...byId.values()].filter((text) => text.includes(useChip));
    };
    const refusals = (): Set<number | undefined> =>
      new Set(
        snapshots
          .map((s) => s.customer)
          .filter((c) => c.screen === 'present-card' && c.message === useChip)
          .map((c) => c.messageEvent),
      );
    // The simulated cardholder swipes again 400 ms after each refusal.
    const deadline = Date.now() + 6_000;
    while (said().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    h.simulator!.setCard('no-card');
    await send(h, { type: 'CANCEL' });
    expect(said().length).toBeGreaterThanOrEqual(3);
    // Once for each refused swipe: the snapshots in between (the same refusal shown again) say nothing new.
    expect(said().length).toBe(refusals().size);
    expect(h.sandbox!.ledger().transactions).toEqual([]);
  });
});
