/**
 * The memory bench measures children of the same build as the bench itself (here: sources under
 * tsx), and real `quiver serve` processes: idle with no plugin, and serving the seeded tools
 * after forwarded selects saw every one of them (issue #28). The servers' settled reading comes
 * after 3 s here instead of the bench's minute: what is tested is that each figure is read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchMemory } from './memory.ts';

test('benchMemory seeds and loads the tools in children run from the sources, and reads the RSS of quiver serve', async () => {
  const result = await benchMemory(200, { idleMs: 1_000, settledMs: 3_000 });
  assert.equal(result.tools, 200);
  assert.equal(result.build, 'src');
  for (const key of ['rssAfterSyncMb', 'rssAfterOpenMb', 'rssLoadedMb', 'heapUsedMb', 'heapTotalMb', 'databaseThreadHeapMb', 'wasmMemoryMb'] as const) assert.ok(result[key] > 0, key);
  // The serve figure is of a server that selected among the seeded tools, not of an empty one.
  assert.equal(result.serve.withToolsCandidates, 200);
  for (const key of ['idleNoPluginMb', 'idleNoPluginAfter5sMb', 'idleNoPluginPeakMb', 'withToolsMb', 'withToolsAfter5sMb', 'withToolsPeakMb'] as const) assert.ok(result.serve[key] > 0, key);
  assert.match(result.serve.target, /≤ 150 MB.*≤ 300 MB/);
});
