// Installs the locked dependencies when node_modules is missing, so `npm test` works on a
// fresh clone as the README's second command. Uses only Node built-ins.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
if (!existsSync(`${root}node_modules/.package-lock.json`)) {
  const command = existsSync(`${root}package-lock.json`) ? 'ci' : 'install';
  console.error(`[quiver] node_modules missing: running npm ${command}`);
  const result = spawnSync('npm', [command, '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
