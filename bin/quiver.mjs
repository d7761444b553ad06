#!/usr/bin/env node
// Thin launcher: runs the compiled build when it is fresh, else the sources through tsx
// (see entry.mjs). The CLI itself lives in src/cli/main.ts.
import { resolveEntry } from './entry.mjs';

const entry = resolveEntry();
let main;
if (entry.kind === 'dist') {
  ({ main } = await import(new URL(`file://${entry.root}/cli/main.js`).href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
