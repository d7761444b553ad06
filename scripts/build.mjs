// Compiles src/ to dist/ (plain JavaScript, no tsx at run time), copies the SQL migrations,
// builds the PGlite template for new stores, and writes dist/.build-stamp, which bin/entry.mjs compares with src/ to avoid stale builds.
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (tsc.status !== 0) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  console.error('[quiver] build failed; `quiver` will run the sources through tsx');
  process.exit(tsc.status ?? 1);
}
cpSync(join(root, 'src/store/migrations'), join(root, 'dist/store/migrations'), { recursive: true });
cpSync(join(root, 'src/web'), join(root, 'dist/web'), { recursive: true });
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
writeFileSync(join(root, 'dist/.build-stamp'), new Date().toISOString());
console.error('[quiver] built dist/');
