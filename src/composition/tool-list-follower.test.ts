import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../core/logger.ts';
import type { InstallReport } from '../plugins/service/types.ts';
import type { AnnouncedToolList, Discovery } from '../runtime/index.ts';
import { createToolListFollower } from './tool-list-follower.ts';

/** What the announcing connection lists (its own tools/list, issue #24). */
const LISTED: Discovery = { serverInfo: undefined, capabilities: undefined, instructions: undefined, tools: [{ name: 'added_at_runtime', inputSchema: { type: 'object' } }], resources: [], prompts: [], launch: undefined, durationMs: 1 };
const announcedBy = (listing: () => Promise<Discovery> = async () => LISTED): AnnouncedToolList => ({ version: '1.0.0', discover: listing });

/** A supervisor stand-in that only fans out notifications, and a sync that waits to be released. */
function harness() {
  let listener: ((pluginId: string, announced: AnnouncedToolList) => void) | undefined;
  const syncs: string[] = [];
  const releases: Array<() => void> = [];
  let started: (() => void) | undefined;
  const follower = createToolListFollower({
    supervisor: { onToolListChanged: (fn) => ((listener = fn), () => (listener = undefined)) },
    plugins: {
      sync: (pluginId, options) => {
        // The sync takes the list the announcing connection serves, not a fresh process's.
        assert.deepEqual(options, { keepRunning: true, announced: { version: '1.0.0', discovery: LISTED } });
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
  return { notify: (id: string) => listener?.(id, announcedBy()), syncs, releases, follower, nextSync, subscribed: () => listener !== undefined };
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
    let listener: ((pluginId: string, announced: AnnouncedToolList) => void) | undefined;
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
    listener!('a', announcedBy());
    await finished;
    await new Promise((resolve) => setImmediate(resolve));
    finished = new Promise<void>((resolve) => (done = resolve));
    listener!('a', announcedBy());
    await finished;
    assert.equal(calls, 2);
    await follower.close();
  });

  it('re-discovers afresh when the announcing connection can no longer list its tools', async () => {
    let listener: ((pluginId: string, announced: AnnouncedToolList) => void) | undefined;
    let seen: unknown;
    let done: () => void = () => undefined;
    const follower = createToolListFollower({
      supervisor: { onToolListChanged: (fn) => ((listener = fn), () => undefined) },
      plugins: {
        sync: async (pluginId, options) => {
          seen = options;
          done();
          return { plugin: { name: pluginId }, tools: { inserted: [], updated: [], deleted: [], revived: [], unchanged: 0, total: 0 }, warnings: [] } as unknown as InstallReport;
        },
      },
      logger: silentLogger,
      debounceMs: 0,
    });
    const finished = new Promise<void>((resolve) => (done = resolve));
    listener!('a', announcedBy(async () => { throw new Error('connection closed'); }));
    await finished;
    assert.deepEqual(seen, { keepRunning: true });
    await follower.close();
  });
});
