#!/usr/bin/env node
// Thin launcher: runs the compiled build (always, in an installed package; when fresh, in a
// source checkout) or else the sources through tsx (see entry.mjs). The CLI itself lives in
// src/cli/main.ts. When neither can run, the launcher says why in the CLI's error convention
// (`quiver: <message>`, one line of JSON with --json) and exits 1; errors of the CLI's own
// modules are not caught here, so a bug keeps its stack.
import module from 'node:module';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveEntry } from './entry.mjs';
import { serveTuning } from './serve-tuning.mjs';

const argv = process.argv.slice(2);

// `quiver serve` re-executes itself with allocator settings and a one-thread V8 worker pool
// before loading anything else (issue #28: idle RSS; bin/serve-tuning.mjs); execve keeps the
// pid and every open fd.
const tuned = serveTuning(argv, process.env, process.execArgv, { canExecve: typeof process.execve === 'function', platform: process.platform });
if (tuned !== undefined) {
  if (tuned.warning) process.stderr.write(`quiver: ${tuned.warning}\n`);
  process.execve(process.execPath, [process.execPath, ...tuned.execArgv, ...process.argv.slice(1)], tuned.env);
}

// Node 22.1+ keeps the code it compiled for Quiver's modules (and their packages) in a cache
// folder between runs (issue #28: loading modules is most of a start). The cache follows
// NODE_COMPILE_CACHE when set; NODE_DISABLE_COMPILE_CACHE=1 turns it off; older Nodes skip this.
module.enableCompileCache?.();

/** The entry module's URL, registering tsx first for the sources; a message when there is none. */
async function locateMain() {
  let entry;
  try {
    entry = resolveEntry();
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  // The bundle of the CLI (scripts/bundle-cli.mjs, issue #28: a few files to load instead of
  // hundreds), else the per-file build (a build from before the bundle existed).
  if (entry.kind === 'dist') return { url: pathToFileURL(join(entry.root, existsSync(join(entry.root, 'bundle', 'cli.js')) ? 'bundle/cli.js' : 'cli/main.js')).href };
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch {
    return { problem: 'dist/ is missing or older than src/, and tsx (a devDependency) is not installed: run `npm install` or `npm run build`' };
  }
  return { url: new URL('../src/cli/main.ts', import.meta.url).href };
}

const located = await locateMain();
if (located.problem !== undefined) {
  process.stderr.write(argv.includes('--json') ? `${JSON.stringify({ error: { code: 'internal', message: located.problem } })}\n` : `quiver: ${located.problem}\n`);
  process.exitCode = 1;
} else {
  const { main } = await import(located.url);
  process.exitCode = await main(argv);
}
