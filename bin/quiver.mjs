#!/usr/bin/env node
// Thin launcher. In a source checkout the TypeScript sources run directly through tsx,
// so there is no build step that can go stale; the CLI itself lives in src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
