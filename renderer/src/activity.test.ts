import { describe, expect, it } from 'vitest';
import type { CustomerView, UserEvent } from '../../src/host/api.js';
import { ACTIVITY_INTERVAL_MS, InputActivity } from './activity.js';

const TICKET: CustomerView = {
  screen: 'enter-ticket',
  title: 'Your ticket',
  message: 'Enter the number printed on your ticket',
  actions: ['ENTER_TICKET', 'LOST_TICKET', 'CANCEL'],
};

function activity(): { input: InputActivity; sent: UserEvent[]; clock: { ms: number } } {
  const sent: UserEvent[] = [];
  const clock = { ms: 1_000_000 };
  return {
    input: new InputActivity(
      (e) => sent.push(e),
      () => clock.ms,
    ),
    sent,
    clock,
  };
}

describe('InputActivity', () => {
  it('sends ACTIVITY for typing on a timed screen, at most once per interval', () => {
    const { input, sent, clock } = activity();
    input.input(TICKET);
    input.input(TICKET);
    clock.ms += ACTIVITY_INTERVAL_MS - 1;
    input.input(TICKET);
    expect(sent).toEqual([{ type: 'ACTIVITY' }]);
    clock.ms += 1;
    input.input({ ...TICKET, screen: 'alt-details' });
    expect(sent).toEqual([{ type: 'ACTIVITY' }, { type: 'ACTIVITY' }]);
  });

  it('sends nothing on a screen the terminal does not time, nor while "Do you need more time?" is asked', () => {
    const { input, sent } = activity();
    input.input(undefined);
    input.input({ ...TICKET, screen: 'present-card', actions: ['CANCEL'] });
    input.input({ ...TICKET, screen: 'idle', actions: ['START'] });
    input.input({
      ...TICKET,
      prompt: { kind: 'more-time', expiresAt: '2030-01-01T10:00:20Z', seconds: 20 },
      actions: [...TICKET.actions, 'MORE_TIME'],
    });
    expect(sent).toEqual([]);
    // Nothing was sent, so nothing holds the next one back.
    input.input(TICKET);
    expect(sent).toEqual([{ type: 'ACTIVITY' }]);
  });
});
