/**
 * @module plugins/install/staging
 * The staging folder of one install, under `<cacheDir>/.staging`: created on first use, marked
 * with the process it belongs to (so start-up recovery removes it only once that process is
 * gone, recovery.ts), readable by the sandbox user, and removed when the install is placed or fails.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processOwner } from '../../store/process-owner.ts';

/** The file in each staging folder naming the process it belongs to. */
export const STAGING_OWNER_FILE = 'owner.json';

/** One install's staging folder. */
export interface Staging {
  /** The folder, once created. */
  readonly path: string | undefined;
  /** Creates the folder (named `<prefix>-…`) unless it exists; returns it. */
  ensure(prefix: string): Promise<string>;
  /** Removes the folder (idempotent). */
  discard(): Promise<void>;
}

/** A staging folder below `cacheDir`, not created until `ensure`. */
export function createStaging(cacheDir: string): Staging {
  let path: string | undefined;
  return {
    get path() {
      return path;
    },
    async ensure(prefix) {
      if (path !== undefined) return path;
      const root = join(cacheDir, '.staging');
      await mkdir(root, { recursive: true });
      const folder = await mkdtemp(join(root, `${prefix}-`));
      path = folder;
      // Whose it is, so start-up recovery removes it only once this process is gone (recovery.ts).
      await writeFile(join(folder, STAGING_OWNER_FILE), JSON.stringify(processOwner() ?? { host: hostname(), pid: process.pid }));
      // Sandboxed plugins run as an unprivileged user: they must be able to read their folder.
      await chmod(folder, 0o755);
      return folder;
    },
    async discard() {
      if (path !== undefined) await rm(path, { recursive: true, force: true });
      path = undefined;
    },
  };
}
