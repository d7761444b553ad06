/**
 * The end-to-end gateway benches of `quiver bench` (issue #18 finding 9), shortened: the real
 * binary on the embedded default with a real (dependency-free) MCP server installed as a
 * folder plugin. Under 20 concurrent HTTP sessions doing search + call for a few seconds,
 * nothing times out, nothing answers 5xx and nothing fails.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRawPluginFolder } from '../plugins/raw-server.ts';
import { benchGatewayLoad } from '../../src/cli/bench/gateway-load.ts';
import { benchGatewaySearch } from '../../src/cli/bench/gateway-search.ts';
import type { BenchPlugin } from '../../src/cli/bench/bench-home.ts';

describe('gateway benches end to end (shortened)', { timeout: 300_000 }, () => {
  let sources: string;
  let plugins: BenchPlugin[];
  const queries = ['echo the given text back', 'answer with a tool error', 'repeat what I say', 'a tool that always fails'];

  before(async () => {
    sources = await mkdtemp(join(tmpdir(), 'quiver-load-bench-'));
    await chmod(sources, 0o755); // the sandbox user must reach the plugin folder
    plugins = [{ source: await createRawPluginFolder(sources, 'raw'), name: 'raw' }];
  });
  after(async () => {
    await rm(sources, { recursive: true, force: true });
  });

  it('20 concurrent sessions doing search + call over HTTP: zero timeouts, zero 5xx, zero failures', async () => {
    const result = await benchGatewayLoad({
      sessions: 20,
      durationMs: 3_000,
      staggerMs: 200,
      keys: 2,
      plugins,
      queries,
      call: { name: 'raw__echo', arguments: (round) => ({ text: `round ${round}` }), bindQuery: 'echo the given text back' },
    });
    assert.equal(result.timeouts, 0);
    assert.equal(result.serverErrors, 0);
    assert.equal(result.refused, 0);
    assert.equal(result.otherErrors, 0, result.errorSamples.join('\n'));
    assert.ok(result.searches >= 20 && result.calls >= 20, `${result.searches} searches, ${result.calls} calls`);
    assert.ok(result.searchP50Ms > 0 && result.searchP99Ms >= result.searchP50Ms);
    // The sessions arrived over 200 ms; a 3 s window is all in its first 10 s.
    assert.equal(result.staggerMs, 200);
    assert.equal(result.searchP99FirstTenSecondsMs, result.searchP99Ms);
    assert.ok(Number.isNaN(result.searchP99AfterTenSecondsMs));
    // Every session called once before the timed window; the server's first call is reported apart.
    assert.ok(result.firstCallMs > 0, `firstCallMs ${result.firstCallMs}`);
    if (process.platform === 'linux') {
      assert.ok(result.serverCpuSeconds! > 0 && result.searchesPerCpuSecond! > 0);
      assert.ok(result.serverRunQueueWaitSeconds !== null && result.serverRunQueueWaitSeconds >= 0);
    }
  });

  it('search_tools through quiver serve --stdio, with the engine alone beside it', async () => {
    const result = await benchGatewaySearch({ iterations: 30, warmup: 5, limit: 2, plugins, queries });
    assert.equal(result.tools, 2, 'the engine sees the installed plugin\'s tools');
    assert.equal(result.iterations, 30);
    assert.ok(result.searchP50Ms > 0 && result.searchP99Ms >= result.searchP50Ms);
    assert.ok(result.engine.p50Ms > 0 && result.engine.selectionsPerSecond > 0);
    // The machine's share beside it: the server's CPU and run-queue wait, an idle process's loop delay.
    if (process.platform === 'linux') assert.ok(result.server.cpuMs! > 0 && result.server.runQueueWaitMs! >= 0, JSON.stringify(result.server));
    const idle = result.idleEventLoopDelay;
    assert.ok(idle.p50Ms > 0 && idle.p99Ms >= idle.p50Ms && idle.maxMs >= idle.p99Ms, JSON.stringify(idle));
  });
});
