import { describe, expect, it } from 'vitest';
import { inMaintenanceWindow } from './maintenance.js';
import { alertsOf, heartbeatSchema, type Heartbeat } from './messages.js';
import { parseTopic, terminalTopics } from './topics.js';

describe('maintenance window', () => {
  it('is read in the terminal time zone, and may span midnight', () => {
    // 02:30 UTC is 03:30 in Paris (winter).
    const at = new Date('2026-11-24T02:30:00Z');
    expect(inMaintenanceWindow(at, { start: '03:00', end: '05:00' }, 'Europe/Paris')).toBe(true);
    expect(inMaintenanceWindow(at, { start: '03:00', end: '05:00' }, 'UTC')).toBe(false);
    expect(inMaintenanceWindow(at, { start: '22:00', end: '03:00' }, 'UTC')).toBe(true);
    expect(inMaintenanceWindow(at, { start: '22:00', end: '02:00' }, 'UTC')).toBe(false);
  });
});

describe('topics and alerts', () => {
  it('names and parses the topics of a terminal', () => {
    const t = terminalTopics('ops/parking', 'PT000001');
    expect(t.heartbeat).toBe('ops/parking/PT000001/heartbeat');
    expect(parseTopic('ops/parking', t.status)).toEqual({ terminalId: 'PT000001', leaf: 'status' });
    expect(parseTopic('ops/parking', 'ops/parking/PT000001/other')).toBeUndefined();
  });

  it('lists what needs the operator', () => {
    const heartbeat: Heartbeat = {
      terminalId: 'PT000001',
      at: '2026-11-24T12:00:00Z',
      intervalSeconds: 60,
      appVersion: '0.1.0',
      model: 'kiosk',
      inService: false,
      outOfService: 'service mode',
      customerSession: false,
      reader: { kind: 'sim', health: 'disconnected' },
      gateway: { online: false, clockSkewSeconds: 45 },
      offline: { depth: 2, totals: [], oldestAgeSeconds: 10, declinedAfterForward: 1 },
      openAuthorizations: 0,
      journal: { unknown: 1, inFlight: 0 },
      diskFreeMegabytes: 100,
    };
    expect(alertsOf({ online: false, heartbeat, ageSeconds: 400 })).toEqual([
      'offline',
      'heartbeat-late',
      'out-of-service',
      'gateway-unreachable',
      'reader-disconnected',
      'journal-unknown',
      'offline-queue',
      'declined-after-forward',
      'disk-low',
      'clock-skew',
    ]);
    expect(alertsOf({ online: true })).toEqual(['no-heartbeat']);
  });
});

describe('alerts: the gateway', () => {
  it('names credentials the gateway refused apart from a gateway it cannot reach', () => {
    const heartbeat = (gateway: Heartbeat['gateway']): Heartbeat => ({
      terminalId: 'T-1',
      at: '2030-01-01T08:00:00Z',
      intervalSeconds: 60,
      appVersion: '1.0.0',
      model: 'kiosk',
      inService: true,
      customerSession: false,
      reader: { kind: 'sim', health: 'ready' },
      gateway,
      offline: { depth: 0, totals: [], oldestAgeSeconds: null, declinedAfterForward: 0 },
      openAuthorizations: 0,
      journal: { unknown: 0, inFlight: 0 },
      diskFreeMegabytes: null,
    });
    const alerts = (gateway: Heartbeat['gateway']) =>
      alertsOf({ online: true, heartbeat: heartbeat(gateway), ageSeconds: 1 });
    expect(
      alerts({ online: false, problem: 'credentials', lastError: 'GW_AUTH', clockSkewSeconds: null }),
    ).toEqual(['gateway-credentials']);
    expect(
      alerts({ online: false, problem: 'unreachable', lastError: 'GW_CONNECTION', clockSkewSeconds: null }),
    ).toEqual(['gateway-unreachable']);
    expect(
      alerts({
        online: false,
        problem: 'processor',
        lastError: 'PROCESSOR_UNAVAILABLE',
        clockSkewSeconds: null,
      }),
    ).toEqual(['processor-unavailable']);
    // The fleet reads such a heartbeat: it is not refused for a problem it does not know.
    expect(
      heartbeatSchema.safeParse(heartbeat({ online: false, problem: 'processor', clockSkewSeconds: null }))
        .success,
    ).toBe(true);
    // From a terminal that does not say why.
    expect(alerts({ online: false, clockSkewSeconds: null })).toEqual(['gateway-unreachable']);
  });
});
