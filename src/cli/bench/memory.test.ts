/** The memory bench measures children of the same build as the bench itself (here: sources under tsx). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchMemory } from './memory.ts';

test('benchMemory seeds and loads the tools in children run from the sources', async () => {
  const result = await benchMemory(200);
  assert.equal(result.tools, 200);
  assert.equal(result.build, 'src');
  for (const key of ['rssAfterSyncMb', 'rssAfterOpenMb', 'rssLoadedMb', 'heapUsedMb'] as const) assert.ok(result[key] > 0, key);
});
