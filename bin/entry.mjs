// Decides what `quiver` runs: the compiled build in dist/ when it is at least as new as every
// file under src/ (faster start, ~75 MB less memory than compiling on the fly), otherwise the
// TypeScript sources through tsx, so a source checkout never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function newestMtime(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** `{kind: 'dist' | 'src', root}`: where the CLI entry lives. */
export function resolveEntry() {
  const stamp = join(root, 'dist', '.build-stamp');
  if (existsSync(stamp)) {
    const sources = join(root, 'src');
    if (!existsSync(sources) || statSync(stamp).mtimeMs >= newestMtime(sources)) return { kind: 'dist', root: join(root, 'dist') };
  }
  return { kind: 'src', root: join(root, 'src') };
}
