import { describe, expect, it } from 'vitest';
import { updateInstallGate, type UpdateGateInput } from './update-gate.js';

/** 03:30 UTC inside the 03:00–05:00 window, nothing in flight: the gate is open. */
function open(): UpdateGateInput {
  return {
    now: new Date('2026-11-25T03:30:00Z'),
    window: { start: '03:00', end: '05:00' },
    timeZone: 'UTC',
    health: {
      customerSession: false,
      openAuthorizations: 0,
      journal: { unknown: 0, inFlight: 0 },
      offline: { depth: 0, totals: [], oldestAgeSeconds: null, declinedAfterForward: 0 },
    },
    recoveryRunning: false,
  };
}

describe('update install gate', () => {
  it('opens in the maintenance window with nothing in flight', () => {
    expect(updateInstallGate(open())).toEqual({ install: true });
  });

  it('stays shut outside the maintenance window', () => {
    const input = { ...open(), now: new Date('2026-11-25T12:00:00Z') };
    expect(updateInstallGate(input)).toEqual({
      install: false,
      why: 'outside the maintenance window 03:00–05:00',
    });
  });

  it('stays shut while an authorization is open', () => {
    const input = open();
    input.health = { ...input.health, openAuthorizations: 1 };
    expect(updateInstallGate(input)).toMatchObject({ install: false, why: '1 authorization(s) open' });
  });

  it('stays shut while a journal entry is of unknown outcome', () => {
    const input = open();
    input.health = { ...input.health, journal: { unknown: 1, inFlight: 0 } };
    expect(updateInstallGate(input)).toMatchObject({
      install: false,
      why: 'journal entries are in flight or of unknown outcome',
    });
  });

  it('stays shut while a request is in flight', () => {
    const input = open();
    input.health = { ...input.health, journal: { unknown: 0, inFlight: 1 } };
    expect(updateInstallGate(input)).toMatchObject({ install: false });
  });

  it('stays shut while the offline queue holds a payment', () => {
    const input = open();
    input.health = { ...input.health, offline: { ...input.health.offline, depth: 2 } };
    expect(updateInstallGate(input)).toMatchObject({
      install: false,
      why: '2 stored payment(s) not yet forwarded',
    });
  });

  it('stays shut while a customer is at the terminal', () => {
    const input = open();
    input.health = { ...input.health, customerSession: true };
    expect(updateInstallGate(input)).toMatchObject({
      install: false,
      why: 'a customer session is in progress',
    });
  });

  it('stays shut while recovery runs', () => {
    expect(updateInstallGate({ ...open(), recoveryRunning: true })).toMatchObject({
      install: false,
      why: 'recovery is running',
    });
  });
});
