import { describe, expect, it } from 'vitest';
import {
  altRefundTone,
  followOnNotice,
  holdReleaseTone,
  outcomeTone,
  spokenNotice,
} from './operator-notice.js';

describe('the tone of an answer in the operator panel', () => {
  it('shows a refund or void as done only when approved, unknown when its answer was lost, otherwise not done', () => {
    const outcomes = [
      'approved',
      'declined',
      'rejected',
      'unknown',
      'cancelled',
      'refused',
      'not-found',
      'not-allowed',
    ];
    expect(Object.fromEntries(outcomes.map((o) => [o, outcomeTone(o)]))).toEqual({
      approved: 'success',
      declined: 'refusal',
      rejected: 'refusal',
      unknown: 'unknown',
      // Cancelled by its timeout void once its answer was lost: nothing moved.
      cancelled: 'refusal',
      refused: 'refusal',
      'not-found': 'refusal',
      'not-allowed': 'refusal',
    });
    // An outcome the panel does not know is never shown as done.
    expect(outcomeTone('VOIDED')).toBe('refusal');
  });

  it('shows a stay released as done, one refused for now or for good as not done, an unanswered one as unknown', () => {
    expect(['released', 'later', 'refused', 'unknown'].map(holdReleaseTone)).toEqual([
      'success',
      'refusal',
      'refusal',
      'unknown',
    ]);
  });

  it('shows an alternative-method refund that may stand as unknown, one that refunded nothing as not done', () => {
    const states = ['accepted', 'refunded', 'failed', 'voided', 'in-flight', 'needs-operator'];
    expect(states.map(altRefundTone)).toEqual([
      'success',
      'success',
      'refusal',
      'refusal',
      'unknown',
      'unknown',
    ]);
  });

  it('reads out the marker’s word before the text, and a figure without one', () => {
    expect(spokenNotice({ tone: 'success', text: 'void T1: approved — Voided' })).toBe(
      'Done: void T1: approved — Voided',
    );
    expect(spokenNotice({ tone: 'refusal', text: 'x' })).toBe('Not done: x');
    expect(spokenNotice({ tone: 'unknown', text: 'x' })).toBe('Outcome unknown: x');
    expect(spokenNotice({ tone: 'info', text: 'Queue flushed' })).toBe('Queue flushed');
  });
});

describe('the answer to a refund or void in the operator panel', () => {
  it('names the payment the operator chose, and the refund or void sent apart from it', () => {
    const answer = {
      type: 'refund' as const,
      outcome: 'declined',
      code: 'GENERAL_DECLINE',
      message: 'The refund was not completed',
      transactionId: 'R9',
    };
    expect(followOnNotice('S1', answer)).toEqual({
      text: 'refund of S1 (sent as R9): declined — The refund was not completed (GENERAL_DECLINE)',
      tone: 'refusal',
    });
    // Refused before anything was sent: the terminal answers with the payment's own id.
    expect(
      followOnNotice('S1', {
        ...answer,
        type: 'void',
        outcome: 'not-allowed',
        code: 'NOT_VOIDABLE',
        message: 'Past the settlement cut-off: refund instead',
        transactionId: 'S1',
      }),
    ).toEqual({
      text: 'void of S1: not-allowed — Past the settlement cut-off: refund instead (NOT_VOIDABLE)',
      tone: 'refusal',
    });
    expect(
      followOnNotice('S1', { ...answer, outcome: 'approved', code: 'APPROVED', message: 'Refunded' }).text,
    ).toBe('refund of S1 (sent as R9): approved — Refunded');
  });
});
