/**
 * @module store/data-dir-lock
 * A PGlite data folder may be opened by one process only: two writers would corrupt it.
 * The lock is a file created with O_EXCL holding the owner's pid; a lock whose process is
 * gone is stale and taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';

const LOCK_FILE = 'quiver.lock';

interface LockInfo {
  pid: number;
  startedAt: string;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(path: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, startedAt: String(parsed.startedAt) } : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock on `dataDir` (creating the folder) and returns a function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        const current = readLock(path);
        if (current?.pid === process.pid) rmSync(path, { force: true });
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readLock(path);
      if (holder && holder.pid !== process.pid && processAlive(holder.pid)) {
        throw new QuiverError(
          ErrorCodes.dataDirLocked,
          `data folder ${dataDir} is in use by another Quiver process (pid ${holder.pid}, since ${holder.startedAt}); ` +
            'stop that process or pass a different --data folder',
          { details: { dataDir, pid: holder.pid } },
        );
      }
      if (holder?.pid === process.pid) {
        throw new QuiverError(ErrorCodes.dataDirLocked, `data folder ${dataDir} is already open in this process`, {
          details: { dataDir, pid: process.pid },
        });
      }
      // Stale (owner gone) or unreadable lock: remove it and try again.
      rmSync(path, { force: true });
    }
  }
  throw new QuiverError(ErrorCodes.dataDirLocked, `could not take the lock on data folder ${dataDir}`);
}
