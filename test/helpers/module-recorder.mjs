// Records every module a Node process loads, for tests that assert a module graph (issue #28):
// `node --import ./module-recorder.mjs …` with QUIVER_TEST_MODULE_LOG=<file> appends one URL a
// line to that file: ES modules (and CommonJS entered through import) as the loader hook sees
// them, and at exit every file in the CommonJS cache (a package loaded with require, such as
// the lazily required TypeScript compiler, is seen there on every Node version).
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const log = process.env.QUIVER_TEST_MODULE_LOG;
if (!log) throw new Error('module-recorder: set QUIVER_TEST_MODULE_LOG to the file to write');
register(new URL('./module-recorder-hooks.mjs', import.meta.url), { data: { log } });
const requireCache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const files = Object.keys(requireCache).map((path) => pathToFileURL(path).href);
  if (files.length > 0) appendFileSync(log, `${files.join('\n')}\n`);
});
