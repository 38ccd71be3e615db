import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from './main.js';
import { capturedIo } from './testing/io.js';

describe('parking-terminal', () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };

  it.each(['--version', '-v', 'version'])('%s prints the application version and exits 0', async (arg) => {
    const { io, out } = capturedIo(process.cwd());
    expect(await main([arg], io)).toBe(0);
    expect(out()).toBe(`parking-terminal ${version}\n`);
  });

  it('an unknown command is a usage error that points to --help', async () => {
    const { io, out } = capturedIo(process.cwd());
    expect(await main(['--verison'], io)).toBe(2);
    expect(JSON.parse(out())).toMatchObject({ error: { code: 'UNKNOWN_COMMAND' } });
  });
});
