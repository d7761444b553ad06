// Decides what `quiver` runs.
// - A source checkout (src/cli/main.ts present): the compiled build in dist/ when it is at
//   least as new as every file under src/ (faster start, ~75 MB less memory than compiling on
//   the fly), otherwise the TypeScript sources through tsx, so an edit never runs stale code.
// - An installed package (`npm pack` ships no src/): dist/ alone. File times there are the
//   times npm extracted the files, not edit times, so comparing them would mean nothing, and
//   tsx is a devDependency that a consumer does not have.
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

/** `{kind: 'dist' | 'src', root}`: where the CLI entry lives. Throws when neither can run. */
export function resolveEntry() {
  const dist = join(root, 'dist');
  const stamp = join(dist, '.build-stamp');
  const sources = join(root, 'src');
  if (!existsSync(join(sources, 'cli', 'main.ts'))) {
    if (existsSync(stamp)) return { kind: 'dist', root: dist };
    throw new Error(`this installation has neither a compiled build (${stamp} is missing) nor sources: reinstall the quiver package`);
  }
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newestMtime(sources)) return { kind: 'dist', root: dist };
  return { kind: 'src', root: sources };
}
