import { describe, expect, it } from 'vitest';
import type { TerminalSnapshot } from './api.js';
import { waitFor } from './drive.js';
import type { TerminalHost } from './terminal-host.js';

/** A terminal that stays on one screen, saying `message` there. */
function stuckOn(screen: string, message?: string): TerminalHost {
  const snapshot = {
    customer: { screen, ...(message !== undefined ? { message } : {}) },
  } as TerminalSnapshot;
  return { snapshot: () => Promise.resolve({ ok: true, value: snapshot }) } as unknown as TerminalHost;
}

describe('waitFor', () => {
  it('says what the customer reads on the screen it is stuck on', async () => {
    const text = 'This card has a chip: insert it in the reader, or tap it';
    await expect(waitFor(stuckOn('present-card', text), ['approved'], 20)).rejects.toMatchObject({
      code: 'SIMULATION_STUCK',
      message: `expected screen approved, still on present-card ("${text}")`,
    });
    await expect(waitFor(stuckOn('idle'), ['approved'], 20)).rejects.toMatchObject({
      message: 'expected screen approved, still on idle',
    });
  });

  it('returns the snapshot of the screen reached', async () => {
    await expect(waitFor(stuckOn('approved', 'Paid'), ['declined', 'approved'], 20)).resolves.toMatchObject({
      customer: { screen: 'approved' },
    });
  });
});
