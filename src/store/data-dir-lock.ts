/**
 * @module store/data-dir-lock
 * A PGlite data folder may be opened by one process only: two writers would corrupt it.
 * The lock is a file created with O_EXCL holding the owner's identity (host, boot id, pid and
 * process start time: store/process-owner.ts). A lock whose owner is gone is stale and taken
 * over at once, without waiting: that includes an owner killed with `kill -9` that is still a
 * zombie, and a pid since reused by an unrelated process (issue #18 finding 8).
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { QuiverError, ErrorCodes } from '../core/errors.ts';
import { isCurrentProcess, ownerState, processOwner, processOwnerSchema, type ProcessOwner } from './process-owner.ts';

/** The lock file in a PGlite data folder. */
export const LOCK_FILE = 'quiver.lock';

interface LockInfo {
  owner: ProcessOwner;
  startedAt: string;
}

function readLock(path: string): LockInfo | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object') return undefined;
  const record = raw as Record<string, unknown>;
  // Locks written before the owner carried a host are from this host: check them by pid.
  const owner = processOwnerSchema.safeParse({ host: hostname(), ...record });
  return owner.success ? { owner: owner.data, startedAt: String(record['startedAt']) } : undefined;
}

/** Takes the lock on `dataDir` (creating the folder) and returns a function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ ...(processOwner() ?? { host: hostname(), pid: process.pid }), startedAt: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        const current = readLock(path);
        if (current !== undefined && isCurrentProcess(current.owner)) rmSync(path, { force: true });
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readLock(path);
      // Same pid but another start time is a predecessor that had our pid (pid 1 in a container): stale.
      const self = holder !== undefined && isCurrentProcess(holder.owner);
      if (holder !== undefined && !self && ownerState(holder.owner, { checkOtherHosts: true }) === 'alive') {
        throw new QuiverError(
          ErrorCodes.dataDirLocked,
          `data folder ${dataDir} is in use by another Quiver process (pid ${holder.owner.pid}, since ${holder.startedAt}); ` +
            'stop that process or pass a different --data folder',
          { details: { dataDir, pid: holder.owner.pid, host: holder.owner.host } },
        );
      }
      if (self) {
        throw new QuiverError(ErrorCodes.dataDirLocked, `data folder ${dataDir} is already open in this process`, {
          details: { dataDir, pid: process.pid },
        });
      }
      // Stale (owner gone, a zombie, or its pid reused) or unreadable lock: remove it and try again.
      rmSync(path, { force: true });
    }
  }
  throw new QuiverError(ErrorCodes.dataDirLocked, `could not take the lock on data folder ${dataDir}`);
}
