import { it, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isQuiverError } from '../core/errors.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { ownerState, processOwner, readProcessStat } from './process-owner.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const lockModule = fileURLToPath(new URL('./data-dir-lock.ts', import.meta.url));

/** Polls `condition` until it holds (an event we cannot subscribe to); fails after `timeoutMs`. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('data folder lock', () => {
  let root: string;
  let sleeper: ChildProcess;
  const folders: string[] = [];
  const folder = (): string => {
    const path = join(root, `data-${folders.length}`);
    folders.push(path);
    return path;
  };
  const writeLock = (dir: string, content: Record<string, unknown>): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'quiver.lock'), JSON.stringify({ startedAt: '2020-01-01T00:00:00.000Z', ...content }));
  };
  const expectLocked = (dir: string, pid: number): void => {
    assert.throws(() => lockDataDir(dir), (error: unknown) => isQuiverError(error, 'data_dir_locked') && (error.details as { pid: number }).pid === pid);
  };

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-lock-'));
    // A live process that is not us, to hold locks in its name.
    sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
  });
  after(async () => {
    sleeper.kill('SIGKILL');
    await exited(sleeper);
    rmSync(root, { recursive: true, force: true });
  });

  it('is exclusive within a process and released on release()', () => {
    const dir = folder();
    const release = lockDataDir(dir);
    const lock = JSON.parse(readFileSync(join(dir, 'quiver.lock'), 'utf8')) as Record<string, unknown>;
    assert.equal(lock['pid'], process.pid);
    assert.equal(lock['host'], hostname());
    assert.equal(lock['startTicks'], readProcessStat(process.pid)?.startTicks);
    assert.throws(() => lockDataDir(dir), /already open in this process/);
    release();
    assert.ok(!existsSync(join(dir, 'quiver.lock')));
    lockDataDir(dir)();
  });

  it('is refused while its owner runs, whether written with a full identity or a bare pid', () => {
    const dir = folder();
    writeLock(dir, { ...processOwner(sleeper.pid!) });
    assert.equal(ownerState(processOwner(sleeper.pid!)!), 'alive');
    expectLocked(dir, sleeper.pid!);
    writeLock(dir, { pid: sleeper.pid });
    expectLocked(dir, sleeper.pid!);
  });

  it('is taken over when the pid now belongs to an unrelated process (start time differs)', () => {
    const dir = folder();
    const owner = processOwner(sleeper.pid!)!;
    writeLock(dir, { ...owner, startTicks: owner.startTicks! + 1 });
    const release = lockDataDir(dir);
    assert.equal((JSON.parse(readFileSync(join(dir, 'quiver.lock'), 'utf8')) as { pid: number }).pid, process.pid);
    release();
  });

  it('is taken over from a predecessor that had our own pid (pid 1 in a re-created container)', () => {
    const dir = folder();
    const self = processOwner()!;
    writeLock(dir, { ...self, host: 'old-container', startTicks: self.startTicks! + 1 });
    lockDataDir(dir)();
  });

  it('is taken over at once from a dead owner and from a previous boot', async () => {
    const dir = folder();
    const gone = spawn('true', [], { stdio: 'ignore' });
    const pid = gone.pid!;
    await exited(gone);
    writeLock(dir, { pid, host: hostname(), startTicks: 1 });
    lockDataDir(dir)();
    writeLock(dir, { ...processOwner(sleeper.pid!), bootId: 'a-previous-boot' });
    lockDataDir(dir)();
  });

  it('is taken over from an owner killed with kill -9 that is still an unreaped zombie', async () => {
    const dir = folder();
    // sh starts the lock taker in the background, then becomes `sleep`, which never reaps it:
    // once the taker has taken the real lock and SIGKILLed itself, it stays a zombie.
    const script = `import { lockDataDir } from ${JSON.stringify(lockModule)}; lockDataDir(${JSON.stringify(dir)}); process.kill(process.pid, 'SIGKILL');`;
    const parent = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} --import tsx --input-type=module -e "$0" & echo $!; exec sleep 600`, script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      parent.stdout!.on('data', (chunk) => (out += chunk));
      await waitFor(() => /^\d+\n/.test(out), 'the pid of the lock taker');
      const pid = Number(out.trim());
      await waitFor(() => readProcessStat(pid)?.state === 'Z', 'the lock taker to be a zombie');
      const lock = JSON.parse(readFileSync(join(dir, 'quiver.lock'), 'utf8')) as { pid: number };
      assert.equal(lock.pid, pid, 'the zombie holds the lock');
      // The zombie still answers kill(pid, 0): only its /proc state shows it is gone.
      assert.doesNotThrow(() => process.kill(pid, 0));
      const release = lockDataDir(dir);
      release();
    } finally {
      parent.kill('SIGKILL');
      await exited(parent);
    }
  });
});
