import { describe, expect, it } from 'vitest';
import { APP_URL, ELECTRON_CSP, isAppUrl, windowOptions, withSecurityHeaders } from './security.js';

describe('kiosk window security', () => {
  it('isolates the page: context isolation, sandbox, no Node, web security, no webview, no devtools', () => {
    const prefs = windowOptions({
      preload: '/app/preload.cjs',
      kiosk: true,
      fullscreen: false,
    }).webPreferences;
    expect(prefs).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      devTools: false,
    });
  });

  it('makes kiosk and full screen configurable', () => {
    expect(windowOptions({ preload: 'p', kiosk: true, fullscreen: false })).toMatchObject({
      kiosk: true,
      fullscreen: true,
    });
    expect(windowOptions({ preload: 'p', kiosk: false, fullscreen: true })).toMatchObject({
      kiosk: false,
      fullscreen: true,
    });
    expect(windowOptions({ preload: 'p', kiosk: false, fullscreen: false })).toMatchObject({
      kiosk: false,
      fullscreen: false,
    });
  });

  it.each([
    [APP_URL, true],
    ['app://renderer/assets/index.js', true],
    ['app://evil/index.html', false],
    ['https://evil.example/', false],
    ['file:///etc/passwd', false],
    ['http://127.0.0.1:8470/', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('allows navigation only within the app (%s → %s)', (url, allowed) => {
    expect(isAppUrl(url)).toBe(allowed);
  });

  it('replaces any CSP of a response with the strict one and adds the hardening headers', () => {
    const out = withSecurityHeaders({
      'content-security-policy': ['default-src *'],
      'Content-Type': 'text/html',
    });
    expect(out['content-security-policy']).toBeUndefined();
    expect(out['Content-Security-Policy']).toEqual([ELECTRON_CSP]);
    expect(out['X-Content-Type-Options']).toEqual(['nosniff']);
    expect(out['Referrer-Policy']).toEqual(['no-referrer']);
    expect(out['Content-Type']).toEqual(['text/html']);
    expect(ELECTRON_CSP).toContain("default-src 'none'");
    expect(ELECTRON_CSP).toContain("script-src 'self'");
    expect(ELECTRON_CSP).not.toContain('unsafe');
  });
});
