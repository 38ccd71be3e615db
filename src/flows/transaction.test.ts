import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { canPresentCardAgain, cardErrorKey } from './models.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import type { TransactionRequest } from './transaction.js';
import { screenOf } from './view.js';

const preauth: TransactionRequest = {
  service: 'preauth',
  comments: 'Parking Auth',
  amountMinor: 500,
  read: { purpose: 'preauth', transactionType: '00' },
  includeEmvTags: false,
  acceptPartial: false,
  cancellable: true,
};
const sale: TransactionRequest = {
  ...preauth,
  service: 'sale',
  comments: 'Parking Sale',
};

function run(fake: FakeTerminal, request: TransactionRequest) {
  const actor = createActor(provideFlowEffects.transaction(fake), {
    input: { settings: testSettings(), request },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

describe('transaction actor', () => {
  it('reads the card, sends the request and reports the approval with the card summary', async () => {
    const fake = new FakeTerminal();
    const actor = run(fake, preauth);
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({
      kind: 'approved',
      authorizedMinor: 500,
      partial: false,
      card: { maskedPan: '411111******1111' },
    });
    expect(fake.sent[0]).toMatchObject({
      catLevel: 2,
      currency: 'GBP',
      cardRef: 'card-1',
    });
  });

  it('gives up on the card after the read timeout without sending anything', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('hang');
    const actor = run(fake, preauth);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('present-card');
    fake.clock.increment(65_000);
    await settle();
    expect(actor.getSnapshot().output).toEqual({ kind: 'card-error', code: 'READ_TIMEOUT' });
    expect(fake.sent).toEqual([]);
  });

  it('reports the reader error code of a failed read', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('CARD_USE_CONTACT');
    const actor = run(fake, preauth);
    await settle();
    expect(actor.getSnapshot().output).toEqual({ kind: 'card-error', code: 'CARD_USE_CONTACT' });
  });

  it('refuses a card of a network outside the parking section without sending', async () => {
    const fake = new FakeTerminal();
    fake.card = { ...fake.card, cardType: null };
    const actor = run(fake, preauth);
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'card-error', code: 'CARD_NOT_SUPPORTED' });
    expect(fake.sent).toEqual([]);
  });

  it('refuses a card other than the one an earlier read verified (read.sameCardAs) without sending', async () => {
    const fake = new FakeTerminal();
    const other = run(fake, { ...preauth, read: { ...preauth.read!, sameCardAs: 'fp-verified' } });
    await settle();
    expect(other.getSnapshot().output).toMatchObject({
      kind: 'card-error',
      code: 'CARD_CHANGED',
      card: { fingerprint: 'fp-1' },
    });
    expect(fake.sent).toEqual([]);
    const same = run(fake, { ...preauth, read: { ...preauth.read!, sameCardAs: 'fp-1' } });
    await settle();
    expect(same.getSnapshot().output).toMatchObject({ kind: 'approved' });
    expect(fake.sent.map((r) => r.service)).toEqual(['preauth']);
  });

  it('cancels while the card is awaited', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('hang');
    const actor = run(fake, preauth);
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(actor.getSnapshot().output).toEqual({ kind: 'cancelled', undone: true });
  });

  it('reverses an authorization approved after the customer cancelled while it was in flight', async () => {
    const fake = new FakeTerminal();
    let answer = (): void => {};
    fake.submitGate = new Promise<void>((resolve) => (answer = resolve));
    const actor = run(fake, preauth);
    await settle();
    expect(screenOf(actor.getSnapshot())).toBe('processing');
    actor.send({ type: 'CANCEL' });
    fake.submitGate = undefined;
    answer();
    await settle();
    expect(fake.comments()).toEqual(['Parking Auth', 'REVERSAL']);
    // A full approval whose undo is refused is kept (a payment like any other): not given up for good.
    expect(fake.sent[1]?.releases).toBeUndefined();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'cancelled', undone: true });
    expect(fake.openAuthorizations()).toEqual([]);
  });

  it('undoes a partial approval it does not accept: the reversal carries the authorized amount', async () => {
    const fake = new FakeTerminal();
    fake.partialMinor.preauth = 200;
    const actor = run(fake, preauth);
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 500],
      ['REVERSAL', 200],
    ]);
    // Given up for good: a refusal for now is the host's to send again (ServiceRequest.releases).
    expect(fake.sent[1]?.releases).toBe(true);
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'declined', reason: 'PARTIAL_APPROVAL' });
  });

  it('voids a partially approved sale it does not accept', async () => {
    const fake = new FakeTerminal();
    fake.partialMinor.sale = 200;
    run(fake, sale);
    await settle();
    expect(fake.comments()).toEqual(['Parking Sale', 'VOID Payment']);
    expect(fake.netChargedMinor()).toBe(0);
  });

  it('sends the timeout reversal of an unanswered authorization 60 s later, keyed by its transactionId', async () => {
    const fake = new FakeTerminal().script('preauth', 'unknown');
    const actor = run(fake, preauth);
    await settle();
    fake.clock.increment(59_999);
    await settle();
    expect(fake.sent).toHaveLength(1);
    fake.clock.increment(1);
    await settle();
    expect(fake.sent[1]).toMatchObject({
      service: 'timeout-reversal',
      comments: 'REVERSAL Timeout',
      amountMinor: 500,
      original: { transactionId: fake.sent[0]?.transactionId },
    });
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'unknown', resolved: true });
    expect(fake.openAuthorizations()).toEqual([]);
  });

  it('sends a timeout void at once for an unanswered sale', async () => {
    const fake = new FakeTerminal().script('sale', 'unknown');
    run(fake, sale);
    await settle();
    expect(fake.sent[1]).toMatchObject({ service: 'timeout-void', comments: 'VOID Timeout' });
    expect(fake.netChargedMinor()).toBe(0);
  });

  it('retries the timeout reversal and leaves it to recovery after the configured attempts', async () => {
    const fake = new FakeTerminal()
      .script('preauth', 'unknown')
      .script('timeout-reversal', 'unknown', 'unknown', 'unknown');
    const actor = run(fake, preauth);
    await settle();
    fake.clock.increment(60_000);
    await settle();
    fake.clock.increment(5_000);
    await settle();
    fake.clock.increment(5_000);
    await settle();
    expect(fake.comments()).toEqual([
      'Parking Auth',
      'REVERSAL Timeout',
      'REVERSAL Timeout',
      'REVERSAL Timeout',
    ]);
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'unknown', resolved: false });
  });

  it('treats a gateway that never answers as unknown at the submit timeout and leaves resolution to the host', async () => {
    const fake = new FakeTerminal();
    fake.submitHangs = true;
    const actor = run(fake, preauth);
    await settle();
    fake.clock.increment(100_000);
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'unknown', resolved: false });
  });

  it('ignores the customer cancel on a follow-on', () => {
    const fake = new FakeTerminal();
    fake.submitHangs = true;
    const actor = run(fake, {
      ...preauth,
      read: undefined,
      cancellable: false,
      service: 'capture',
      comments: 'Parking Capture',
    });
    actor.send({ type: 'CANCEL' });
    expect(actor.getSnapshot().status).toBe('active');
  });

  describe('EMV chip fallback', () => {
    const withSwipes: TransactionRequest = {
      ...sale,
      read: { purpose: 'sale', transactionType: '00', swipeFallback: true },
    };

    it('refuses a chip card swiped before its chip was tried: nothing sent, the card asked for again', async () => {
      const fake = new FakeTerminal();
      fake.reads.push('chip-swiped', 'hang');
      const actor = run(fake, withSwipes);
      await settle();
      expect(actor.getSnapshot().status).toBe('active');
      expect(screenOf(actor.getSnapshot())).toBe('present-card');
      expect(actor.getSnapshot().context).toMatchObject({
        presentAgain: 'CHIP_CARD_SWIPED',
        card: undefined,
      });
      expect(fake.sent).toEqual([]);
      expect([...fake.released]).toEqual(['card-1']);
    });

    it('sends the inserted card after refusing its swipe, as a chip read', async () => {
      const fake = new FakeTerminal();
      fake.reads.push('chip-swiped', 'card');
      const actor = run(fake, withSwipes);
      await settle();
      expect(actor.getSnapshot().output).toMatchObject({ kind: 'approved', card: { cardRef: 'card-2' } });
      expect(fake.sent).toHaveLength(1);
      expect(fake.sent[0]?.cardRef).toBe('card-2');
      expect(fake.sent[0]).not.toHaveProperty('emvFallback');
    });

    it('asks for a swipe after a chip read failed technically, then sends the swipe as a fallback', async () => {
      const fake = new FakeTerminal();
      fake.reads.push('chip-unreadable', 'hang');
      const actor = run(fake, withSwipes);
      await settle();
      expect(screenOf(actor.getSnapshot())).toBe('present-card');
      expect(actor.getSnapshot().context).toMatchObject({ presentAgain: 'CHIP_FAILED', chipFailed: true });
      expect(fake.sent).toEqual([]);

      const second = new FakeTerminal();
      second.reads.push('chip-unreadable', 'chip-swiped');
      const paid = run(second, withSwipes);
      await settle();
      expect(paid.getSnapshot().output).toMatchObject({ kind: 'approved', card: { entryMode: 'swiped' } });
      expect(second.sent).toHaveLength(1);
      expect(second.sent[0]).toMatchObject({ service: 'sale', cardRef: 'card-1', emvFallback: true });

      // Not a chip failure that opens the stripe: a decline by the card, a chip read that failed a processing step
      // (its data authentication, say: CARD_ERROR without chipUnreadable), a second failure, a reader that takes no
      // swipe. Each ends it, nothing sent.
      for (const [reads, request, code] of [
        [['CARD_DECLINED_OFFLINE'], withSwipes, 'CARD_DECLINED_OFFLINE'],
        [['CARD_ERROR', 'chip-swiped'], withSwipes, 'CARD_ERROR'],
        [['chip-unreadable', 'chip-unreadable'], withSwipes, 'CARD_ERROR'],
        [['chip-unreadable', 'chip-swiped'], sale, 'CARD_ERROR'],
      ] as const) {
        const other = new FakeTerminal();
        other.reads.push(...reads);
        const ended = run(other, request);
        await settle();
        expect(ended.getSnapshot().output).toEqual({ kind: 'card-error', code });
        expect(other.sent).toEqual([]);
      }
    });

    it('never takes a stripe after a failed tap: it ends TAP_FAILED, and a chip card swiped then is refused', async () => {
      const fake = new FakeTerminal();
      fake.reads.push('tap-failed', 'chip-swiped');
      const ended = run(fake, withSwipes);
      await settle();
      expect(ended.getSnapshot().output).toEqual({ kind: 'card-error', code: 'TAP_FAILED' });
      expect(fake.sent).toEqual([]);
      expect(cardErrorKey('TAP_FAILED')).toBe('result.tapFailed');
      expect(cardErrorKey('TAP_FAILED', { tapOnly: true })).toBe('result.tapFailedTapOnly');
      expect(canPresentCardAgain('TAP_FAILED')).toBe(true);

      // The next transaction (the card presented again): a chip card swiped is its chip not tried, never a fallback.
      const again = run(fake, withSwipes);
      fake.reads.push('hang');
      await settle();
      expect(screenOf(again.getSnapshot())).toBe('present-card');
      expect(again.getSnapshot().context).toMatchObject({
        presentAgain: 'CHIP_CARD_SWIPED',
        chipFailed: false,
      });
      expect(fake.sent).toEqual([]);
    });
  });
});
