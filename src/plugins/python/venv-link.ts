/**
 * @module plugins/python/venv-link
 * A virtual environment's interpreter is a link out of the plugin's folder by design
 * (`.venv/bin/python` → `/usr/bin/python3.11`), and the launch check refuses links out of the
 * folder (issue #18 finding 4). This names the one exception (issue #26): a `bin/python*` of a
 * folder that has a `pyvenv.cfg`, whose link ends at a `python3` or `python3.N` under /usr — the
 * system interpreter the sandbox shows anyway, which a launch could name as `python3` directly.
 * Nothing is read through the link; only where it ends is looked at.
 */
import { realpath } from 'node:fs/promises';
import { basename, posix } from 'node:path';
import { readSourceFile, SourceFileError } from '../source-files.ts';

/** True when `relativeCommand` (relative to `root`) is a venv's interpreter linking to a system Python. */
export async function isVenvInterpreter(root: string, relativeCommand: string): Promise<boolean> {
  const normalized = posix.normalize(relativeCommand.split('\\').join('/'));
  if (normalized.startsWith('../') || !/(^|\/)bin\/python(3(\.\d+)?)?$/.test(normalized)) return false;
  const venv = posix.dirname(posix.dirname(normalized));
  // pyvenv.cfg must itself be a plain file inside the folder.
  const config = await readSourceFile(root, posix.join(venv, 'pyvenv.cfg'), { maxBytes: 64 * 1024 }).catch((error: unknown) => {
    if (error instanceof SourceFileError) return undefined;
    throw error;
  });
  if (config === undefined || !/^\s*home\s*=/m.test(config)) return false;
  const target = await realpath(posix.join(root, normalized)).catch(() => undefined);
  return target !== undefined && target.startsWith('/usr/') && /^python3(\.\d+)?$/.test(basename(target));
}
