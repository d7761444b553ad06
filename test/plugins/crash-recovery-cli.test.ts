/**
 * Issue #18 finding 8, end to end: a real `quiver plugin add` of a real git plugin whose server
 * hangs in discovery is killed with `kill -9` while discovery runs, and is left an unreaped
 * zombie (its parent never waits for it). A restart of the real CLI must then start at once
 * (the PGlite lock of the zombie is taken over), roll back the reserved plugin row and remove
 * the staging folder; a second restart finds nothing to do.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { readProcessStat } from '../../src/store/process-owner.ts';
import { createPluginRepo, openTempDir } from './helpers.ts';


/** Polls `condition` until it holds (a state of another process: there is no event to subscribe to). */
async function waitFor(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function list(folder: string): Promise<string[]> {
  return existsSync(folder) ? (await readdir(folder)).sort() : [];
}

describeEachBackend('a plugin install killed with kill -9 is rolled back at the next start', (backend) => {
  let root: string;
  let home: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let group: ChildProcess | undefined;

  before(async () => {
    root = await openTempDir('crash-cli');
    home = join(root, 'home');
    env = { QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent' };
    store = await processStore(backend);
    Object.assign(env, store.env);
  });
  after(async () => {
    // The shell's group: `sleep` (the zombie's parent) and anything the install left running.
    if (group?.pid !== undefined) {
      try {
        process.kill(-group.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await store?.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('rolls back the row and the staging folder, taking over the zombie lock without waiting', async () => {
    const repo = await createPluginRepo(root, 'hang', { name: 'hang-kill' });
    // sh starts the install in the background, prints its pid, and becomes `sleep`, which never
    // reaps it: after kill -9 the install stays a zombie, as under a careless supervisor.
    group = spawn('sh', ['-c', '"$0" "$1" plugin add "$2" --name hang-kill --json >/dev/null 2>&1 & echo $!; exec sleep 600', process.execPath, QUIVER_BIN, repo.remote], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    let out = '';
    group.stdout!.on('data', (chunk) => (out += chunk));
    await waitFor(() => /^\d+\n/.test(out), 'the pid of quiver plugin add');
    const pid = Number(out.trim());

    // Discovery has started once the sandbox's state folder exists inside the staging folder.
    const staging = join(home, 'plugins', '.staging');
    let stagingFolder = '';
    await waitFor(async () => {
      for (const name of await list(staging)) {
        if (existsSync(join(staging, name, 'state'))) {
          stagingFolder = name;
          return true;
        }
      }
      return false;
    }, 'the install to reach discovery');
    assert.equal(JSON.parse(await readFile(join(staging, stagingFolder, 'owner.json'), 'utf8')).pid, pid);

    process.kill(pid, 'SIGKILL');
    await waitFor(() => readProcessStat(pid)?.state === 'Z', 'the killed install to be a zombie');
    if (backend.name === 'pglite') {
      const lock = JSON.parse(await readFile(join(home, 'data', 'quiver.lock'), 'utf8')) as { pid: number };
      assert.equal(lock.pid, pid, 'the zombie still holds the data folder lock');
    }

    // Restart: the real CLI, with logs, so the rollback can be seen.
    const restart = await runBinary(['plugin', 'list', '--json'], { ...env, QUIVER_LOG_LEVEL: 'info' });
    assert.equal(restart.code, 0, restart.stderr);
    const { plugins } = JSON.parse(restart.stdout) as { plugins: Array<{ name: string }> };
    assert.ok(!plugins.some((plugin) => plugin.name === 'hang-kill'), restart.stdout);
    const rolledBack = restart.stderr.split('\n').filter((line) => line.includes('rolled back an install interrupted by a crash'));
    assert.equal(rolledBack.length, 1, restart.stderr);
    assert.match(rolledBack[0]!, /hang-kill/);
    assert.deepEqual(await list(staging), []);
    assert.deepEqual(await list(join(home, 'plugins', 'git')), [], 'nothing was placed in the cache');
    assert.deepEqual((await list(join(home, 'state'))).filter((name) => name.startsWith('installing-')), []);

    // Idempotent: a second start has nothing to roll back, and the name is free again.
    const again = await runBinary(['plugin', 'list', '--json'], { ...env, QUIVER_LOG_LEVEL: 'info' });
    assert.equal(again.code, 0, again.stderr);
    assert.ok(!again.stderr.includes('rolled back an install'), again.stderr);
  });
});
