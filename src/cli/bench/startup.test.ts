/** The start-up bench runs real quiver processes and prints each issue #28 target beside its figure. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchServeStartup } from './startup.ts';

test('benchServeStartup times serve, --help and a forwarded command, one run each', async () => {
  const result = await benchServeStartup(1);
  assert.ok(result.serve.firstStartMs > 0 && result.serve.warmReadyMs.runs === 1 && result.serve.warmReadyMs.median > 0);
  if (process.platform === 'linux') assert.ok(result.serve.warmCpuToReadyMs!.median > 0);
  assert.equal(result.help.wallMs.runs, 1);
  assert.ok(result.help.cpuMs.median > 0 && result.help.maxRssMb.median > 0);
  // The forwarded command ran (exit 0 is checked inside the bench) and reported its own usage.
  assert.equal(result.forwarded.command, 'quiver plugin list --json');
  assert.ok(result.forwarded.cpuMs.median > 0 && result.forwarded.maxRssMb.median > 0);
  assert.match(result.serve.target, /≤ 1000 ms/);
  assert.match(result.help.target, /≤ 300 ms/);
  assert.match(result.forwarded.target, /≤ 300 ms and ≤ 80 MB/);
});
