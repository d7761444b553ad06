// Compiles src/ to dist/ (plain JavaScript and .d.ts declarations, no tsx at run time), copies
// the SQL migrations and the web files, builds the PGlite template for new stores, and writes
// dist/.build-stamp, which bin/entry.mjs compares with src/ to avoid stale builds.
// The CLI also gets a bundle, dist/bundle/ (see bundle-cli.mjs): `quiver` starts from it.
// `--if-stale` does nothing when dist/ is already fresh: `npm pack` runs `prepack` (a full
// build, which must succeed) and then `prepare`, which should not compile everything twice.
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolveEntry } from '../bin/entry.mjs';
import { copyRuntimeAssets } from './runtime-assets.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.argv.includes('--if-stale') && resolveEntry().kind === 'dist') {
  console.error('[quiver] dist/ is up to date');
  process.exit(0);
}
// The stamp carries the start time: a source edited while tsc runs is newer, so stays stale.
const buildStarted = new Date();
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (tsc.status !== 0) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  console.error('[quiver] build failed; `quiver` will run the sources through tsx');
  process.exit(tsc.status ?? 1);
}
copyRuntimeAssets(root);
// Optional like the template: without the bundle `quiver` starts from the per-file build (slower).
try {
  const started = Date.now();
  const { bundleCli } = await import('./bundle-cli.mjs');
  const files = await bundleCli(root);
  console.error(`[quiver] bundled the CLI into ${files} files in dist/bundle (${Date.now() - started} ms)`);
} catch (error) {
  rmSync(join(root, 'dist/bundle'), { recursive: true, force: true });
  console.error(`[quiver] no CLI bundle (quiver starts from the per-file build): ${error instanceof Error ? error.message : error}`);
}
// A pre-initialised PGlite cluster (initdb + pgvector + all migrations) so a new store skips
// initdb (DESIGN §6). Optional: without it Quiver runs initdb, so a failure here only warns.
try {
  const started = Date.now();
  const { buildPGliteTemplate } = await import(pathToFileURL(join(root, 'dist/store/pglite-database.js')).href);
  const { loadMigrations } = await import(pathToFileURL(join(root, 'dist/store/migrator.js')).href);
  await buildPGliteTemplate(join(root, 'dist/store'), loadMigrations());
  console.error(`[quiver] built dist/store/pglite-template.tar.gz (${Date.now() - started} ms)`);
} catch (error) {
  for (const file of ['pglite-template.tar.gz', 'pglite-template.json']) rmSync(join(root, 'dist/store', file), { force: true });
  console.error(`[quiver] no PGlite template (new stores will run initdb): ${error instanceof Error ? error.message : error}`);
}
writeFileSync(join(root, 'dist/.build-stamp'), buildStarted.toISOString());
utimesSync(join(root, 'dist/.build-stamp'), buildStarted, buildStarted);
console.error('[quiver] built dist/');
