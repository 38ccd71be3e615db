#!/usr/bin/env node
// The production entry of the `parking-terminal` command, compiled to dist/src/cli/run.js by `npm run build`: the
// kiosk service (deploy/systemd/parking-terminal.service) and bin/parking-terminal.js, once dist/ is current, run it.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
