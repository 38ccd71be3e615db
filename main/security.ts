import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The kiosk window's security settings, as pure values so that tests can check them without an Electron binary.
 * Electron's security checklist: context isolation, sandbox, no Node in the page, web security on, a CSP, no
 * navigation away, no new windows, no permissions.
 */

/** The renderer is served from this privileged custom scheme (not file://, whose origin is shared by every file). */
export const APP_SCHEME = 'app';
export const APP_HOST = 'renderer';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_URL = `${APP_ORIGIN}/index.html`;

/** The page's policy: like the bridge's, but the page talks only through the preload (no network at all). */
export const ELECTRON_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export interface WindowSettings {
  /** Absolute path of the bundled preload script (CommonJS: sandboxed preloads cannot load ES modules). */
  preload: string;
  /** Kiosk mode: full screen, no window chrome, no way out for the customer. */
  kiosk: boolean;
  /** Full screen without kiosk lock (attended terminals, development). */
  fullscreen: boolean;
}

export function windowOptions(settings: WindowSettings): BrowserWindowConstructorOptions {
  return {
    width: 1080,
    height: 1920,
    show: false,
    kiosk: settings.kiosk,
    fullscreen: settings.kiosk || settings.fullscreen,
    autoHideMenuBar: true,
    backgroundColor: '#fafafa',
    webPreferences: {
      preload: settings.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      devTools: false,
      safeDialogs: true,
    },
  };
}

/** True for a URL of the app's own pages; every other navigation is refused. */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

/** Response headers with the app's CSP and hardening headers added (replacing any the response had). */
export function withSecurityHeaders(
  headers: Record<string, string[] | string> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (
      lower === 'content-security-policy' ||
      lower === 'x-content-type-options' ||
      lower === 'referrer-policy'
    )
      continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  out['Content-Security-Policy'] = [ELECTRON_CSP];
  out['X-Content-Type-Options'] = ['nosniff'];
  out['Referrer-Policy'] = ['no-referrer'];
  return out;
}
