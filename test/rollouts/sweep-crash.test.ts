/**
 * A sweep killed with SIGKILL loses nothing in use (issue #29), on each database: a child process
 * sweeps a real plugin's cache (three unused version folders, two in use by an open rollout) and
 * is killed after its second folder went into the trash, before it was removed there. The
 * folders in use are untouched byte for byte; the next sweep empties the trash and finishes the
 * job; the canary of the open rollout still starts from its folder.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { createTaggedRepo, waitFor } from './helpers.ts';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/sweep-child.ts', import.meta.url));

/** A digest of a folder's tree: every path, its kind, and each file's bytes or link's target. */
async function treeDigest(root: string): Promise<string> {
  const hash = createHash('sha256');
  async function walk(path: string): Promise<void> {
    const info = await lstat(path);
    const name = relative(root, path);
    if (info.isDirectory()) {
      hash.update(`d ${name}\n`);
      for (const entry of (await readdir(path)).sort()) await walk(join(path, entry));
    } else if (info.isSymbolicLink()) hash.update(`l ${name} ${await readlink(path)}\n`);
    else hash.update(`f ${name} ${info.size}\n`).update(await readFile(path));
  }
  await walk(root);
  return hash.digest('hex');
}

const listed = async (folder: string) => (await readdir(folder).catch(() => [] as string[])).sort();

describeEachBackend('a sweep killed mid-way (issue #29)', (backend) => {
  let home: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  let app: App | undefined;
  const git = () => join(home, 'plugins', 'git');

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-sweep-crash-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), ['v1', 'v2', 'v3', 'v4', 'v5'].map((tag, index) => ({ tag, version: `${index + 1}.0.0`, tools: ['add', 'echo'] })));
    const store = await processStore(backend);
    drop = store.drop;
    env = {
      QUIVER_HOME: home,
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_VERIFY_ON_INSTALL: 'off',
      QUIVER_ROLLOUT_FOLDER_RETENTION_MS: '0',
      QUIVER_ROLLOUT_RECENT_CALL_MS: '0',
      QUIVER_ROLLOUT_SWEEP_INTERVAL_MS: '0',
      ...store.env,
    };
    app = await createApp(loadConfig(env));
    await app.plugins.add(remote, { name: 'calc', ref: 'v1' });
    // v1 → v2 promoted, v3 rolled back, v4 promoted, v5 left open as the canary: v1, v2 and v3 are unused.
    for (const [ref, move] of [['v2', 'promote'], ['v3', 'rollback'], ['v4', 'promote'], ['v5', 'open']] as const) {
      await app.rollouts.upgrade('calc', { ref });
      if (move === 'promote') await app.rollouts.promote('calc');
      if (move === 'rollback') await app.rollouts.rollback('calc', 'test');
    }
    await app.close();
    app = undefined;
  });
  after(async () => {
    await app?.close();
    await drop?.();
    await rm(home, { recursive: true, force: true });
  });

  it('kill -9 after a folder went into the trash: the folders in use are whole, the next sweep finishes', async () => {
    const before = await listed(git());
    assert.equal(before.length, 5, before.join(', '));
    app = await createApp(loadConfig(env));
    const view = await app.rollouts.status('calc');
    const inUse = view.slots.filter((slot) => slot.status === 'active' || slot.status === 'canary').map((slot) => slot.folder!).sort();
    assert.equal(inUse.length, 2, JSON.stringify(view.slots));
    const digests = new Map(await Promise.all(inUse.map(async (folder) => [folder, await treeDigest(folder)] as const)));
    await app.close();
    app = undefined;

    const marker = join(home, 'sweep-marker.json');
    const sweeper = spawn(process.execPath, ['--import', 'tsx', child], { cwd: repositoryRoot, env: { ...process.env, ...env, SWEEP_MARKER: marker }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    sweeper.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => sweeper.once('exit', (code, signal) => resolve(signal ?? code)));
    const stop = await waitFor('the sweeper to hold a folder in the trash', async () => readFile(marker, 'utf8').then((text) => JSON.parse(text) as { folder?: string; finished?: boolean }, () => undefined), 120_000).catch((error) => {
      throw new Error(`${(error as Error).message}; child stderr: ${stderr}`);
    });
    assert.equal(stop.finished, undefined, 'the sweeper stopped in the trash, not at the end');
    sweeper.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');

    // Nothing in use was touched; one unused folder is gone, one is in the trash, one not yet looked at.
    for (const [folder, digest] of digests) assert.equal(await treeDigest(folder), digest, `${folder} changed`);
    const afterKill = await listed(git());
    assert.equal(afterKill.length, 3, afterKill.join(', '));
    assert.equal((await listed(join(home, 'plugins', '.trash'))).length, 1);

    app = await createApp(loadConfig(env));
    const report = await app.rollouts.sweep();
    assert.equal(report.trashEmptied, 1);
    assert.deepEqual((await listed(git())).map((name) => join(git(), name)), inUse);
    assert.deepEqual(await listed(join(home, 'plugins', '.trash')), []);
    for (const [folder, digest] of digests) assert.equal(await treeDigest(folder), digest, `${folder} changed`);
    // The open rollout's canary still starts and answers from its folder.
    await app.rollouts.promote('calc');
    assert.equal((await app.rollouts.status('calc')).rollout?.status, 'promoted');
    const spec = await app.plugins.upstreamSpec('calc');
    assert.ok((await app.supervisor.listTools(spec)).some((tool) => tool.name === 'add'));
  });
});
