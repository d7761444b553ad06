import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../core/logger.ts';
import type { InstallReport } from '../plugins/service/types.ts';
import { createToolListFollower } from './tool-list-follower.ts';

/** A supervisor stand-in that only fans out notifications, and a sync that waits to be released. */
function harness() {
  let listener: ((pluginId: string) => void) | undefined;
  const syncs: string[] = [];
  const releases: Array<() => void> = [];
  let started: (() => void) | undefined;
  const follower = createToolListFollower({
    supervisor: { onToolListChanged: (fn) => ((listener = fn), () => (listener = undefined)) },
    plugins: {
      sync: (pluginId, options) => {
        assert.deepEqual(options, { keepRunning: true });
        syncs.push(pluginId);
        started?.();
        return new Promise<InstallReport>((resolve) =>
          releases.push(() => resolve({ plugin: { name: pluginId }, tools: { inserted: [], updated: [], deleted: [], revived: [], unchanged: 0, total: 0 }, warnings: [] } as unknown as InstallReport)),
        );
      },
    },
    logger: silentLogger,
    debounceMs: 0,
  });
  const nextSync = () => new Promise<void>((resolve) => (started = resolve));
  return { notify: (id: string) => listener?.(id), syncs, releases, follower, nextSync, subscribed: () => listener !== undefined };
}

describe('tool list follower', () => {
  // The follower's timers are unref'd (they must not keep a CLI alive): hold the loop open here.
  let keepAlive: NodeJS.Timeout;
  before(() => void (keepAlive = setInterval(() => undefined, 1000)));
  after(() => clearInterval(keepAlive));
  it('turns a storm of notifications into one sync, and notifications during a sync into exactly one more', async () => {
    const h = harness();
    let started = h.nextSync();
    for (let i = 0; i < 1000; i += 1) h.notify('a');
    await started;
    assert.deepEqual(h.syncs, ['a']);
    // During the sync: a thousand more ask for one follow-up, not a thousand.
    for (let i = 0; i < 1000; i += 1) h.notify('a');
    started = h.nextSync();
    h.releases.shift()!();
    await started;
    assert.deepEqual(h.syncs, ['a', 'a']);
    h.releases.shift()!();
    await h.follower.close();
    assert.deepEqual(h.syncs, ['a', 'a']);
    assert.equal(h.subscribed(), false);
  });

  it('syncs each plugin on its own', async () => {
    const h = harness();
    let started = h.nextSync();
    h.notify('a');
    await started;
    started = h.nextSync();
    h.notify('b');
    await started;
    assert.deepEqual(h.syncs, ['a', 'b']);
    h.releases.forEach((release) => release());
    await h.follower.close();
  });

  it('a failing sync is logged, not thrown, and the plugin can be followed again', async () => {
    let calls = 0;
    let listener: ((pluginId: string) => void) | undefined;
    let done: () => void = () => undefined;
    const follower = createToolListFollower({
      supervisor: { onToolListChanged: (fn) => ((listener = fn), () => undefined) },
      plugins: {
        sync: async () => {
          calls += 1;
          done();
          throw new Error('plugin gone');
        },
      },
      logger: silentLogger,
      debounceMs: 0,
    });
    let finished = new Promise<void>((resolve) => (done = resolve));
    listener!('a');
    await finished;
    await new Promise((resolve) => setImmediate(resolve));
    finished = new Promise<void>((resolve) => (done = resolve));
    listener!('a');
    await finished;
    assert.equal(calls, 2);
    await follower.close();
  });
});
