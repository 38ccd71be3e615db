import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { OfflineStatus } from '../journal/index.js';
import { StatusBoard } from './status-board.js';

const OFFLINE: OfflineStatus = {
  policy: 'online-only',
  depth: 0,
  totalsPerCurrency: [],
  oldestAgeSeconds: null,
  limits: { maxTransactionMinor: 0, maxTotalMinorPerCurrency: 0, maxCount: 0, maxAgeHours: 0 },
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
    expect(board.gatewaySeen(true)).toEqual({ changed: true, cameBack: true });
    const back = gatewayOf(board);
    expect(back.online).toBe(true);
    expect(back).not.toHaveProperty('problem');
    expect(back).not.toHaveProperty('lastError');
  });
});
