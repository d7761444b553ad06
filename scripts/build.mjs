// Compiles src/ to dist/ (plain JavaScript, no tsx at run time), copies the SQL migrations,
// and writes dist/.build-stamp, which bin/entry.mjs compares with src/ to avoid stale builds.
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
writeFileSync(join(root, 'dist/.build-stamp'), new Date().toISOString());
console.error('[quiver] built dist/');
