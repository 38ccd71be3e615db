import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { OfflineStatus } from '../journal/index.js';
import { StatusBoard } from './status-board.js';

const OFFLINE: OfflineStatus = {
  policy: 'online-only',
  depth: 0,
  totalsPerCurrency: [],
  oldestAgeSeconds: null,
  ageUnknown: 0,
  limits: {
    maxTransactionMinor: 0,
    maxTotalMinorPerCurrency: 0,
    maxCount: 0,
    maxAgeHours: 0,
    maxCountPerCard: 0,
  },
  declinedAfterForward: 0,
};

function gatewayOf(board: StatusBoard) {
  return board.status({
    phase: 'ready',
    outOfService: undefined,
    readerHealth: 'ready',
    baseUrl: 'http://127.0.0.1:1',
    offline: OFFLINE,
    journal: { entries: 0, unknown: 0, inFlight: 0 },
    recoveryInFlight: 0,
    feeShortfalls: 0,
  }).gateway;
}

describe('StatusBoard: the gateway as the operator reads it', () => {
  it("says once per episode that the credentials were refused because of this terminal's clock (GW_AUTH_CLOCK)", () => {
    const board = new StatusBoard(parseConfig({}));
    const now = Date.now();
    board.gatewayDated({ date: new Date(now - 300_000).toUTCString(), sentAtMs: now, receivedAtMs: now });
    expect(board.gatewaySeen(false, 'GW_AUTH_CLOCK')).toMatchObject({ clockRefused: true });
    expect(board.gatewaySeen(false, 'GW_AUTH_CLOCK')).toMatchObject({ clockRefused: false });
    expect(gatewayOf(board)).toMatchObject({
      online: false,
      problem: 'credentials',
      lastError: 'GW_AUTH_CLOCK',
    });
    expect(Math.abs((gatewayOf(board).clockSkewSeconds ?? 0) - 300)).toBeLessThanOrEqual(1);
    board.gatewaySeen(true);
    expect(board.gatewaySeen(false, 'GW_AUTH_CLOCK')).toMatchObject({ clockRefused: true });
    expect(board.gatewaySeen(false, 'GW_AUTH')).toMatchObject({ clockRefused: false });
  });

  it('reports credentials the gateway refused (GW_AUTH) as a credentials problem, not as unreachable', () => {
    const board = new StatusBoard(parseConfig({}));
    board.gatewaySeen(false, 'GW_AUTH');
    expect(gatewayOf(board)).toMatchObject({ online: false, problem: 'credentials', lastError: 'GW_AUTH' });
  });

  it('reports a gateway it could not reach as unreachable, and no problem once it answers again', () => {
    const board = new StatusBoard(parseConfig({}));
    board.gatewaySeen(false, 'GW_CONNECTION');
    expect(gatewayOf(board)).toMatchObject({
      online: false,
      problem: 'unreachable',
      lastError: 'GW_CONNECTION',
    });
    expect(board.gatewaySeen(true)).toEqual({ changed: true, cameBack: true, clockRefused: false });
    const back = gatewayOf(board);
    expect(back.online).toBe(true);
    expect(back).not.toHaveProperty('problem');
    expect(back).not.toHaveProperty('lastError');
  });

  it('reports a processor that is down as such, not as an unreachable gateway, and says when that changes', () => {
    const board = new StatusBoard(parseConfig({}));
    board.gatewaySeen(false, 'GW_CONNECTION');
    // The gateway answers again, refusing payments because its processor is down: another status to show.
    expect(board.gatewaySeen(false, 'PROCESSOR_UNAVAILABLE')).toMatchObject({
      changed: true,
      cameBack: false,
    });
    expect(gatewayOf(board)).toMatchObject({
      online: false,
      problem: 'processor',
      lastError: 'PROCESSOR_UNAVAILABLE',
    });
    expect(board.gatewaySeen(false, 'PROCESSOR_UNAVAILABLE')).toMatchObject({ changed: false });
  });

  it('names the host that did not open when forwarding found the gateway unusable, until it answers again', () => {
    const board = new StatusBoard(parseConfig({}));
    board.gatewaySeen(false, 'GW_CONNECTION', 'gateway 127.0.0.1:9');
    // Another host now: the status changes although the gateway stays unusable.
    expect(board.gatewaySeen(false, 'GW_CONNECTION', 'OAuth token host auth.test:443')).toMatchObject({
      changed: true,
    });
    expect(gatewayOf(board)).toMatchObject({
      online: false,
      problem: 'unreachable',
      lastError: 'GW_CONNECTION',
      unreachableHost: 'OAuth token host auth.test:443',
    });
    board.gatewaySeen(true);
    expect(gatewayOf(board)).not.toHaveProperty('unreachableHost');
  });
});

describe('StatusBoard: amounts in terminal.locale', () => {
  it('formats them whichever way the configuration wrote the locale (de_DE or de-DE)', () => {
    for (const locale of ['de_DE', 'de-DE']) {
      const board = new StatusBoard(parseConfig({ terminal: { locale } }));
      board.note({
        transactionId: 'C1',
        service: 'capture',
        resolution: 'fee-shortfall (INCREMENTAL_NOT_APPROVED, operator action needed)',
        amount: { minor: 302, currency: 'GBP' },
        at: '2030-01-01T08:00:00.000Z',
      });
      const status = board.status({
        phase: 'ready',
        outOfService: undefined,
        readerHealth: 'ready',
        baseUrl: 'http://127.0.0.1:1',
        offline: { ...OFFLINE, totalsPerCurrency: [{ currency: 'GBP', minor: 1250, amount: '12.50' }] },
        journal: { entries: 0, unknown: 0, inFlight: 0 },
        recoveryInFlight: 0,
        feeShortfalls: 0,
      });
      expect(status.recovery.resolved[0]?.amount?.text, locale).toBe('3,02\u00a0£');
      expect(status.offline.totals[0]?.text, locale).toBe('12,50\u00a0£');
    }
  });
});
