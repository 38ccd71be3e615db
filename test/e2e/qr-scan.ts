import { createRequire } from 'node:module';
import jsQRModule from 'jsqr';
import type { Page } from 'playwright-core';

/** jsqr's types do not resolve under this module setting: its one call, typed here. */
const jsQR = jsQRModule as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

/** pngjs ships no types: the one call used here. */
const { PNG } = createRequire(import.meta.url)('pngjs') as {
  PNG: { sync: { read(png: Buffer): { data: Buffer; width: number; height: number } } };
};

/** The QR code of the element `testId`, read from a screenshot of it as a phone's camera would. */
export async function scanQr(page: Page, testId: string): Promise<string> {
  const png = PNG.sync.read(await page.getByTestId(testId).screenshot());
  const code = jsQR(
    new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
    png.width,
    png.height,
  );
  if (code === null) throw new Error('no QR code could be read from the screen');
  return code.data;
}
