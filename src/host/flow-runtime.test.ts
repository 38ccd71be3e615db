import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { FakeTerminal, settle } from '../flows/testing/fake-terminal.js';
import { silentLogger } from '../log/index.js';
import { createFlowActor, customerView } from './flow-runtime.js';

describe('customer view of the pay station', () => {
  it('never titles a stay within the grace period "Approved": nothing was paid, nothing is in the journal', async () => {
    const config = parseConfig({ terminal: { model: 'kiosk' }, tariff: { graceMinutes: 10 } });
    const fake = new FakeTerminal();
    fake.tickets.set('T5', fake.clock.now() - 5 * 60_000);
    const runtime = createFlowActor(config, fake, silentLogger(), { now: () => fake.clock.now() });
    runtime.actor.start();
    runtime.actor.send({ type: 'START' });
    runtime.actor.send({ type: 'ENTER_TICKET', ticket: 'T5' });
    await settle();
    const view = customerView(runtime, config, undefined, 'en_GB');
    expect(view.message).toBe('Nothing to pay: have a good journey');
    expect(fake.sent).toEqual([]);
    expect(view.title).not.toBe('Approved');
    expect(view.title).toBe('Nothing to pay');
    runtime.actor.stop();
  });

  it('titles a paid ticket "Approved", as the journal says', async () => {
    const config = parseConfig({ terminal: { model: 'kiosk' } });
    const fake = new FakeTerminal();
    const runtime = createFlowActor(config, fake, silentLogger(), { now: () => fake.clock.now() });
    runtime.actor.start();
    runtime.actor.send({ type: 'START' });
    runtime.actor.send({ type: 'LOST_TICKET' });
    runtime.actor.send({ type: 'CONFIRM' });
    await settle();
    const view = customerView(runtime, config, undefined, 'en_GB');
    expect(fake.sent.map((r) => [r.service, r.kind])).toEqual([['sale', 'approved']]);
    expect(view).toMatchObject({ screen: 'approved', title: 'Approved' });
    runtime.actor.stop();
  });
});
