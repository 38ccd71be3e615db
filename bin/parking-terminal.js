#!/usr/bin/env node
// The `parking-terminal` command. Runs the TypeScript sources through tsx so that a fresh `npm install` is enough.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
