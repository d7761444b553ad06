/**
 * The gateway backend's launch-spec and plugin-list caches count their hits and misses for
 * `/metrics` (issue #16): a miss per load, a hit per reuse within the TTL, a miss again after a
 * clear, and the entries held.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicPlugin } from '../../src/plugins/service.ts';
import type { UpstreamSpec } from '../../src/runtime/index.ts';
import { createBackendCaches } from '../../src/composition/gateway-backend/caches.ts';

test('backend caches count hits, misses and entries', async () => {
  let now = 0;
  const service = {
    list: async () => [{ name: 'alpha' }] as PublicPlugin[],
    upstreamSpec: async (name: string) => ({ name }) as unknown as UpstreamSpec,
  };
  const caches = createBackendCaches(service, 1000, () => now);
  assert.deepEqual(caches.stats(), { launchSpecs: { hits: 0, misses: 0, size: 0 }, pluginList: { hits: 0, misses: 0, size: 0 } });
  await caches.specFor('alpha');
  await caches.specFor('alpha');
  await caches.specFor('beta');
  await caches.plugins();
  await caches.plugins();
  assert.deepEqual(caches.stats(), { launchSpecs: { hits: 1, misses: 2, size: 2 }, pluginList: { hits: 1, misses: 1, size: 1 } });
  now += 1001;
  await caches.specFor('alpha');
  caches.clear();
  await caches.plugins();
  assert.deepEqual(caches.stats(), { launchSpecs: { hits: 1, misses: 3, size: 0 }, pluginList: { hits: 1, misses: 2, size: 1 } });
});
