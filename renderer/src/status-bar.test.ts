import { describe, expect, it } from 'vitest';
import { gatewayText, offlineText } from './status-bar.js';

describe('the status bar: the gateway', () => {
  it('says the credentials were refused, not that the gateway is offline, for GW_AUTH', () => {
    expect(
      gatewayText({
        kind: 'remote',
        baseUrl: 'https://gw.example',
        online: false,
        problem: 'credentials',
        lastError: 'GW_AUTH',
      }),
    ).toBe('remote credentials refused (GW_AUTH)');
  });

  it("names the clock skew when the credentials were refused because of this terminal's clock (GW_AUTH_CLOCK)", () => {
    const gw = {
      kind: 'remote',
      baseUrl: 'https://gw.example',
      online: false,
      problem: 'credentials',
    } as const;
    expect(gatewayText({ ...gw, lastError: 'GW_AUTH_CLOCK', clockSkewSeconds: 300 })).toBe(
      "remote credentials refused (GW_AUTH_CLOCK: clock 300 s ahead of the gateway's)",
    );
    expect(gatewayText({ ...gw, lastError: 'GW_AUTH_CLOCK', clockSkewSeconds: -181 })).toBe(
      "remote credentials refused (GW_AUTH_CLOCK: clock 181 s behind the gateway's)",
    );
  });

  it('says offline for a gateway it could not reach, and online or unknown otherwise', () => {
    const gw = { kind: 'remote', baseUrl: 'https://gw.example' } as const;
    expect(gatewayText({ ...gw, online: false, problem: 'unreachable', lastError: 'GW_CONNECTION' })).toBe(
      'remote offline (GW_CONNECTION)',
    );
    expect(
      gatewayText({ ...gw, online: false, problem: 'processor', lastError: 'PROCESSOR_UNAVAILABLE' }),
    ).toBe('remote processor unavailable (PROCESSOR_UNAVAILABLE)');
    expect(gatewayText({ ...gw, online: true })).toBe('remote online');
    expect(gatewayText({ ...gw, online: null })).toBe('remote unknown');
  });

  it('names the host a forwarding run could not connect to: the OAuth token host while the gateway answers', () => {
    const gw = {
      kind: 'remote',
      baseUrl: 'https://gw.example',
      online: false,
      problem: 'unreachable',
    } as const;
    expect(
      gatewayText({
        ...gw,
        lastError: 'GW_CONNECTION',
        unreachableHost: 'OAuth token host auth.example:443',
      }),
    ).toBe('remote offline (GW_CONNECTION: no connection to OAuth token host auth.example:443)');
    expect(
      gatewayText({ ...gw, lastError: 'GW_CONNECTION', unreachableHost: 'gateway gw.example:443' }),
    ).toBe('remote offline (GW_CONNECTION: no connection to gateway gw.example:443)');
  });
});

describe('the status bar: the offline queue', () => {
  it('tells the operator of stored payments whose age is not known (stored while the clock was not set)', () => {
    expect(
      offlineText({
        depth: 3,
        totals: [{ text: '£30.00' }],
        declinedAfterForward: 0,
        ageUnknown: 2,
      }),
    ).toBe('3 (£30.00), 2 of unknown age (terminal clock not set when stored)');
    expect(offlineText({ depth: 1, totals: [], declinedAfterForward: 1, ageUnknown: 0 })).toBe(
      '1, 1 not collected in full after forwarding',
    );
  });
});
