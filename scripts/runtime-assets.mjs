// The files dist/ needs beside the compiled JavaScript, copied from src/: the SQL migrations, the
// web files, and the embedded database's worker thread with its statement cache (plain JavaScript
// loaded by path, store/pglite-thread.ts). One list for scripts/build.mjs and for tests that assemble a dist/.
import { cpSync } from 'node:fs';
import { join } from 'node:path';

/** Copies the run-time assets of `root`/src into `root`/dist. */
export function copyRuntimeAssets(root) {
  cpSync(join(root, 'src/store/migrations'), join(root, 'dist/store/migrations'), { recursive: true });
  cpSync(join(root, 'src/web'), join(root, 'dist/web'), { recursive: true });
  for (const file of ['pglite-worker.mjs', 'pglite-statements.mjs']) cpSync(join(root, 'src/store', file), join(root, 'dist/store', file));
}
