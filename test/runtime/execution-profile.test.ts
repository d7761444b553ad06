/**
 * Issue #11: the execution profile of a plugin's intelligence document reaches the runtime.
 * A folder plugin whose quiver.json PID says "timeout 200 ms, breaker opens after 2 failures"
 * is installed with the real `quiver plugin add` (out of process, embedded data folder); an app
 * on the same folder builds the spec through the plugins service and calls the real server:
 * a slow tool times out at ~200 ms (not the 30 s default), the second failure opens the
 * breaker, and the next call is refused `circuit_open` without reaching the plugin (its own call
 * counter proves it). `plugin show` reports the effective profile; a profile the runtime cannot
 * apply fails the install with a message naming the field.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { runBinary, runInProcess } from '../helpers/cli.ts';
import { createProfilePlugin } from './execution-profile-fixture.ts';
import { firstText } from './helpers.ts';

const PROFILE = {
  execution: { typicalLatency: 'fast', timeoutRecommendation: 200, circuitBreakerConfig: { failureThreshold: 2, timeout: 1_000 } },
};

describe('execution profile through quiver plugin add (issue #11)', { timeout: 180_000 }, () => {
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-profile-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') };
    const folder = await createProfilePlugin(join(home, 'sources'), 'slowpoke', PROFILE);
    const added = await runBinary(['plugin', 'add', folder, '--name', 'slowpoke'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('times out at the PID timeout and opens the breaker after the PID threshold', async () => {
    const app: App = await createApp(loadConfig({ ...env, QUIVER_LOG_LEVEL: 'silent' }));
    try {
      const spec = await app.plugins.upstreamSpec('slowpoke');
      assert.equal(spec.execution.timeoutRecommendation, 200);
      assert.equal(spec.execution.circuitBreakerConfig?.failureThreshold, 2);

      assert.equal(firstText(await app.supervisor.callTool(spec, 'echo', { text: 'warm' })), 'warm', 'the process is up before timing');
      const startedAt = performance.now();
      await assert.rejects(app.supervisor.callTool(spec, 'slow', { ms: 5_000 }), (error) => isQuiverError(error, 'timeout'));
      const elapsed = performance.now() - startedAt;
      assert.ok(elapsed >= 190 && elapsed < 2_000, `timed out after ${Math.round(elapsed)} ms, expected ~200 ms`);

      // Two failures: the plugin's breaker (threshold 2, not the default 5) opens.
      await assert.rejects(app.supervisor.callTool(spec, 'slow', { ms: 5_000 }), (error) => isQuiverError(error, 'timeout'));
      await assert.rejects(app.supervisor.callTool(spec, 'count'), (error) => isQuiverError(error, 'circuit_open') && (error.details as { scope?: string }).scope === 'plugin');

      // After the PID's 1 s open time, a trial call goes through: the plugin saw echo, slow, slow and
      // this count — never the refused call.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      assert.equal(firstText(await app.supervisor.callTool(spec, 'count')), '4');

      // An admin's document replaces the author's profile; one the runtime cannot apply is refused.
      const original = (await app.plugins.getIntelligence('slowpoke')).pid;
      const zeroThreshold = { ...original, execution: { circuitBreakerConfig: { failureThreshold: 0 } } };
      await assert.rejects(app.plugins.putIntelligence('slowpoke', zeroThreshold), (error) => isQuiverError(error, 'invalid_input') && /failureThreshold/.test(error.message));
      await app.plugins.putIntelligence('slowpoke', { ...original, execution: { timeoutRecommendation: 300 } });
      const changed = await app.plugins.upstreamSpec('slowpoke');
      assert.equal(changed.execution.timeoutRecommendation, 300);
      assert.equal(changed.execution.circuitBreakerConfig, undefined, 'the default breaker applies again');
      await app.plugins.putIntelligence('slowpoke', original);
    } finally {
      await app.close();
    }
  });

  it('plugin show reports the effective profile, defaults where the PID is silent', async () => {
    const shown = await runInProcess(['plugin', 'show', 'slowpoke', '--json'], env);
    assert.equal(shown.code, 0, shown.stderr);
    const { execution } = JSON.parse(shown.stdout) as { execution: Record<string, unknown> & { circuitBreaker: Record<string, number>; retryPolicy: Record<string, number> } };
    assert.equal(execution['timeoutMs'], 200);
    assert.equal(execution.circuitBreaker['failureThreshold'], 2);
    assert.equal(execution.circuitBreaker['timeout'], 1_000);
    assert.equal(execution.circuitBreaker['successThreshold'], 2, 'the documented default');
    assert.equal(execution.retryPolicy['maxAttempts'], 1, 'no retry policy: one attempt');
    assert.equal(execution['rateLimit'], null);
    assert.deepEqual(execution['fromPid'], ['timeoutRecommendation', 'circuitBreakerConfig']);
    const text = await runInProcess(['plugin', 'show', 'slowpoke'], env);
    assert.match(text.stdout, /execution: timeout 200 ms\*, attempts 1, breaker 2 failures\/1000 ms open\*/);
  });

  it('refuses at install a profile the runtime cannot apply, naming the field', async () => {
    const sources = join(home, 'sources');
    const zero = await createProfilePlugin(sources, 'zero-timeout', { execution: { timeoutRecommendation: 0 } });
    const zeroAdd = await runInProcess(['plugin', 'add', zero, '--name', 'zero-timeout'], env);
    assert.notEqual(zeroAdd.code, 0);
    assert.match(zeroAdd.stderr, /timeoutRecommendation/);

    const retries = await createProfilePlugin(sources, 'retry-forever', { execution: { retryPolicy: { maxRetries: 50 } } });
    const retriesAdd = await runInProcess(['plugin', 'add', retries, '--name', 'retry-forever'], env);
    assert.notEqual(retriesAdd.code, 0);
    assert.match(retriesAdd.stderr, /execution\.retryPolicy\.maxRetries/);
  });
});
