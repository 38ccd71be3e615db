import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The renderer's build. The bridge serves it under a strict CSP (`script-src 'self'; style-src 'self'`), so the
 * output must contain no inline script or style: no module-preload polyfill (Vite would inline it), no assets
 * inlined as data: URLs except images, relative base so that Electron can load it from a file URL too.
 */
export default defineConfig({
  root: here,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: resolve(here, '../dist/renderer'),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
