import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../log/index.js';
import { buildRenderer } from '../../host/bridge/build-renderer.js';
import { startBridge } from '../../host/bridge/server.js';
import { createTerminalHost } from '../../host/terminal-host.js';
import { electronBinary } from '../../../main/electron-available.js';
import { parseCommandArgs, parsePort } from '../args.js';
import type { Command } from '../output.js';

const command: Command = {
  name: 'start',
  summary: 'run the terminal (Electron kiosk window, or headless UI on 127.0.0.1)',
  usage: `parking-terminal start [--config FILE] [--headless] [--port N]
  --config FILE  configuration (JSON or YAML); embedded defaults otherwise
  --headless     serve the UI on 127.0.0.1 for any browser instead of opening the Electron window
  --port N       port of the headless UI (default bridge.port of the configuration; 0 = any free port)
Prints the URL of the screen (with this start's secret) and, when none is configured, the operator PIN generated
for this start. Stops on SIGINT/SIGTERM.`,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { config: { type: 'string' }, headless: { type: 'boolean' }, port: { type: 'string' } },
      false,
    );
    const configFile = values.config ? resolve(io.cwd, values.config) : undefined;
    const config = loadConfig(configFile);
    const port = parsePort(values.port, '--port') ?? config.bridge.port;
    const out = (line: string): void => void io.stdout.write(`${line}\n`);

    const electron = values.headless ? undefined : electronBinary();
    if (!values.headless && electron) {
      // The Electron main process builds its own TerminalHost from the same configuration (main/main.ts).
      const child = spawn(electron, [resolve(import.meta.dirname, '../../../dist/main/main.js')], {
        stdio: 'inherit',
        env: { ...process.env, PARKING_TERMINAL_CONFIG: configFile ?? '' },
      });
      io.signal.addEventListener('abort', () => child.kill('SIGTERM'), { once: true });
      return await new Promise<number>((done) => child.once('exit', (code) => done(code ?? 0)));
    }
    if (!values.headless)
      out('Electron is not installed on this machine: running headless (UI served on 127.0.0.1).');

    const logger = createLogger({
      level: config.log.level,
      ...(config.log.file ? { destination: config.log.file } : {}),
    });
    const host = await createTerminalHost(config, { logger, cwd: io.cwd });
    const staticDir = await buildRenderer();
    const bridge = await startBridge(host, { port, staticDir, logger });
    out(`Parking Terminal (${config.terminal.model}) ready: ${bridge.url}`);
    if (host.sandboxUrl) out(`Sandbox gateway: ${host.sandboxUrl}`);
    if (host.generatedOperatorPin) out(`Operator PIN for this start: ${host.generatedOperatorPin}`);

    await new Promise<void>((done) => {
      if (io.signal.aborted) done();
      else io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await bridge.close();
    await host.close();
    logger.flush();
    return 0;
  },
};
export default command;
