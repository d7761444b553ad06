/**
 * The supervisor against real fixture servers over real stdio: lifecycle (lazy start, reuse,
 * pool, idle stop, stop/close), discovery with pagination, timeouts and hangs, crashes,
 * crash loops, retries, breakers, rate and concurrency limits, events, health, redaction.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../../src/core/errors.ts';
import { descendantsOf, isAlive, signalProcess } from '../../src/runtime/process-tree.ts';
import { createSupervisor, type SupervisorOptions } from '../../src/runtime/supervisor.ts';
import type { CallEvent } from '../../src/runtime/types.ts';
import { createCapturingLogger, createTestClock, eventually, firstText, fixtureSpec, leftovers, paginatedServer } from './helpers.ts';


function make(options: SupervisorOptions = {}) {
  const events: CallEvent[] = [];
  const logger = createCapturingLogger();
  // A sandboxed cold start takes about a second here and several on a loaded machine: 20 s, as the
  // other supervisor tests allow (the start-timeout test sets its own).
  const supervisor = createSupervisor({ stopGraceMs: 100, startTimeoutMs: 20_000, defaultTimeoutMs: 5_000, logger, onCall: (event) => events.push(event), ...options });
  return { supervisor, events, logger };
}

describe('supervisor lifecycle', () => {
  it('starts lazily, reuses one connection across calls, and close() leaves nothing behind', async () => {
    const { supervisor, events } = make();
    const spec = fixtureSpec('lazy');
    assert.deepEqual(supervisor.processes(), [], 'nothing runs before the first call');
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'one' })), 'one');
    const [first] = supervisor.processes();
    assert.ok(first?.pid && isAlive(first.pid));
    await Promise.all(Array.from({ length: 20 }, (_, index) => supervisor.callTool(spec, 'add', { a: index, b: 1 })));
    assert.deepEqual(supervisor.processes().map((process) => process.pid), [first.pid], 'one process for the plugin version');
    assert.equal(events.length, 21);
    assert.ok(events.every((event) => event.outcome === 'success' && event.pluginId === 'lazy' && event.attempts === 1));
    await supervisor.close();
    assert.equal(isAlive(first.pid), false);
    assert.deepEqual(leftovers(supervisor.id), []);
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), (error) => isQuiverError(error, 'unavailable'));
  });

  it('keeps one process per plugin version', async () => {
    const { supervisor } = make();
    await supervisor.callTool(fixtureSpec('versions', { version: '1.0.0' }), 'echo', { message: 'a' });
    await supervisor.callTool(fixtureSpec('versions', { version: '2.0.0' }), 'echo', { message: 'b' });
    assert.deepEqual(supervisor.processes().map((process) => process.version).sort(), ['1.0.0', '2.0.0']);
    await supervisor.stop('versions');
    assert.deepEqual(supervisor.processes(), []);
    assert.equal(firstText(await supervisor.callTool(fixtureSpec('versions'), 'echo', { message: 'again' })), 'again', 'starts again after stop');
    await supervisor.close();
  });

  it('grows a bounded pool under concurrent load', async () => {
    const { supervisor } = make({ poolSize: 3 });
    const spec = fixtureSpec('pool');
    await Promise.all(Array.from({ length: 30 }, () => supervisor.callTool(spec, 'slow', { ms: 150 })));
    const count = supervisor.processes().length;
    assert.ok(count >= 2 && count <= 3, `pool of ${count}`);
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });

  it('stops idle processes after idleTimeoutMs', async () => {
    const { supervisor } = make({ idleTimeoutMs: 200 });
    await supervisor.callTool(fixtureSpec('idle'), 'echo', { message: 'x' });
    const pid = supervisor.processes()[0]!.pid!;
    await eventually(() => supervisor.processes().length === 0 && !isAlive(pid), 5_000, 'idle shutdown');
    assert.equal(supervisor.health()[0]?.state, 'idle');
    await supervisor.close();
  });

  it('recycles the connection when the spec changes (rotated credentials)', async () => {
    const { supervisor } = make();
    await supervisor.callTool(fixtureSpec('rotate', { env: { FIXTURE_SECRET: 'first-secret' } }), 'echo', { message: 'x' });
    const result = await supervisor.callTool(fixtureSpec('rotate', { env: { FIXTURE_SECRET: 'second-secret' } }), 'whoami');
    assert.equal(JSON.parse(firstText(result)).secret, 'second-secret');
    await eventually(() => supervisor.processes().length === 1, 3_000, 'old process retired');
    await supervisor.close();
  });

  it('respects maxProcesses by evicting the least recently used idle process', async () => {
    const { supervisor } = make({ maxProcesses: 2 });
    for (const id of ['evict-a', 'evict-b', 'evict-c']) await supervisor.callTool(fixtureSpec(id), 'echo', { message: id });
    assert.deepEqual(supervisor.processes().map((process) => process.pluginId).sort(), ['evict-b', 'evict-c']);
    await supervisor.close();
  });
});

describe('discovery and listing', () => {
  it('discover() starts, lists tools/resources/prompts following every cursor, and stops', async () => {
    const { supervisor } = make();
    const discovery = await supervisor.discover(fixtureSpec('paged', { script: paginatedServer }), { timeoutMs: 30_000 }); // start included
    assert.deepEqual(discovery.tools.map((tool) => tool.name), ['tool_0', 'tool_1', 'tool_2', 'tool_3', 'tool_4', 'tool_5', 'tool_6']);
    assert.equal(discovery.resources.length, 5);
    assert.equal(discovery.prompts.length, 3);
    assert.equal(discovery.serverInfo?.name, 'paginated-fixture');
    assert.deepEqual(supervisor.processes(), [], 'discovery leaves no pooled process');
    assert.deepEqual(leftovers(supervisor.id), [], 'and no process at all');
    assert.equal((await supervisor.listTools(fixtureSpec('paged', { script: paginatedServer }))).length, 7, 'listTools paginates too');
    await supervisor.close();
  });

  it('discover() of a server hanging in initialize times out and kills it', async () => {
    const { supervisor } = make();
    const started = Date.now();
    await assert.rejects(supervisor.discover(fixtureSpec('hang-init', { env: { QUIVER_FIXTURE_MODE: 'hang-initialize' } }), { timeoutMs: 500 }), (error) => isQuiverError(error, 'timeout'));
    assert.ok(Date.now() - started < 3_000);
    await eventually(() => leftovers(supervisor.id).length === 0, 3_000, 'hung discovery process killed');
    await supervisor.close();
  });

  it('lists and reads resources and prompts through the pool', async () => {
    const { supervisor } = make();
    const spec = fixtureSpec('resources');
    assert.deepEqual((await supervisor.listResources(spec)).map((resource) => resource.uri), ['fixture://readme']);
    const read = await supervisor.readResource(spec, 'fixture://readme');
    assert.equal((read.contents[0] as { text: string }).text, 'fixture readme');
    assert.deepEqual((await supervisor.listPrompts(spec)).map((prompt) => prompt.name), ['greet']);
    const prompt = await supervisor.getPrompt(spec, 'greet', { name: 'Ada' });
    assert.equal((prompt.messages[0]!.content as { text: string }).text, 'Hello Ada');
    await supervisor.close();
  });
});

describe('timeouts, hangs and crashes', () => {
  it('times out a hanging call; the process still answers, so it is kept', async () => {
    const { supervisor, events } = make();
    const spec = fixtureSpec('hang');
    await assert.rejects(supervisor.callTool(spec, 'hang', {}, { timeoutMs: 300 }), (error) => isQuiverError(error, 'timeout') && /within 300 ms/.test(error.message));
    assert.equal(events.at(-1)?.outcome, 'timeout');
    const pid = supervisor.processes()[0]!.pid!;
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'alive' })), 'alive');
    assert.equal(supervisor.processes()[0]!.pid, pid);
    await supervisor.close();
  });

  // The spec is built by hand here: this checks the supervisor honours spec.execution. That a PID's
  // profile reaches spec.execution through the install path is test/runtime/execution-profile.test.ts.
  it('uses the spec execution.timeoutRecommendation when the call gives none', async () => {
    const { supervisor } = make();
    const spec = fixtureSpec('pid-timeout', { execution: { timeoutRecommendation: 250 } });
    // The process is up before timing: a sandboxed cold start on a loaded machine can take seconds.
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'warm' })), 'warm');
    const started = Date.now();
    await assert.rejects(supervisor.callTool(spec, 'hang'), (error) => isQuiverError(error, 'timeout') && /within 250 ms/.test(error.message));
    assert.ok(Date.now() - started < 2_000);
    await supervisor.close();
  });

  it('recycles a process whose event loop is stuck (ping fails after the timeout), leaving no zombie', async () => {
    const { supervisor } = make({ pingTimeoutMs: 300 });
    const spec = fixtureSpec('busy');
    await supervisor.callTool(spec, 'echo', { message: 'warm' });
    const pid = supervisor.processes()[0]!.pid!;
    await assert.rejects(supervisor.callTool(spec, 'busy', {}, { timeoutMs: 300 }), (error) => isQuiverError(error, 'timeout'));
    await eventually(() => !isAlive(pid), 5_000, 'stuck process killed');
    await eventually(() => leftovers(supervisor.id).length === 0, 5_000, 'its whole tree gone');
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'fresh' })), 'fresh', 'a new process serves the next call');
    await supervisor.close();
  });

  it('reports a crash mid-call as unavailable with the exit reason, redacting secrets, then restarts', async () => {
    const { supervisor, logger } = make({ restartBackoff: { initialMs: 10 } });
    const spec = fixtureSpec('crashy', { env: { FIXTURE_SECRET: 'hunter2-very-secret' } });
    await assert.rejects(supervisor.callTool(spec, 'crash'), (error) => {
      assert.ok(isQuiverError(error, 'unavailable'));
      assert.match(error.message, /crashed/);
      assert.match(error.message, /exited with code 3/);
      assert.ok(!error.message.includes('hunter2-very-secret'), error.message);
      return true;
    });
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'back' })), 'back');
    assert.ok(logger.lines.some((line) => line.includes('[redacted]')), 'the crash was logged, redacted');
    assert.ok(!logger.lines.some((line) => line.includes('hunter2-very-secret')), 'no log line holds the secret');
    assert.equal(supervisor.health()[0]?.recentCrashes, 1);
    await supervisor.close();
  });

  it('a plugin crashing on start goes into crash-loop and then fails fast until reset', async () => {
    const { supervisor, events } = make({ restartBackoff: { initialMs: 5, maxMs: 20 }, crashLoop: { maxCrashes: 3, windowMs: 60_000 } });
    const spec = fixtureSpec('crash-start', { env: { QUIVER_FIXTURE_MODE: 'crash-on-start', FIXTURE_SECRET: 'start-secret-123' } });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), (error) => {
        assert.ok(isQuiverError(error, 'unavailable'), String(error));
        assert.match(error.message, /failed to start: the process exited with code 7/);
        assert.ok(!error.message.includes('start-secret-123'));
        return true;
      });
    }
    const crashesBefore = supervisor.health()[0]!.recentCrashes;
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), (error) => isQuiverError(error, 'unavailable') && /crash loop/.test(error.message));
    // Fails fast: refused without starting the process again (no new crash), not timed (issue #28).
    assert.equal(supervisor.health()[0]!.recentCrashes, crashesBefore, 'no new start attempt');
    assert.equal(events.at(-1)?.outcome, 'rejected');
    const health = supervisor.health()[0]!;
    assert.equal(health.state, 'crash-loop');
    assert.equal(health.score, 0);
    supervisor.reset('crash-start');
    assert.notEqual(supervisor.health()[0]!.state, 'crash-loop');
    await supervisor.close();
  });

  it('a plugin hanging in initialize fails its start after startTimeoutMs', async () => {
    const { supervisor } = make({ startTimeoutMs: 300 });
    await assert.rejects(supervisor.callTool(fixtureSpec('hang-start', { env: { QUIVER_FIXTURE_MODE: 'hang-initialize' } }), 'echo', { message: 'x' }), (error) => isQuiverError(error, 'unavailable') && /handshake within 300 ms/.test(error.message));
    await eventually(() => leftovers(supervisor.id).length === 0, 3_000, 'hung process killed');
    await supervisor.close();
  });

  it('crash-loop state expires after its cooldown', async () => {
    const clock = createTestClock();
    const { supervisor } = make({ clock, restartBackoff: { initialMs: 1, maxMs: 1 }, crashLoop: { maxCrashes: 2, cooldownMs: 10_000 } });
    const spec = fixtureSpec('cooldown', { env: { QUIVER_FIXTURE_MODE: 'crash-on-start' } });
    for (let attempt = 0; attempt < 2; attempt += 1) await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }));
    assert.equal(supervisor.health()[0]!.state, 'crash-loop');
    clock.advance(10_001);
    assert.notEqual(supervisor.health()[0]!.state, 'crash-loop');
    await supervisor.close();
  });
});

describe('retries (seed 000 §3.2.3), only for read-only or idempotent tools', () => {
  const retryPolicy = { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50 };

  it('retries a read-only tool after a crash and succeeds', async () => {
    const { supervisor, events } = make({ restartBackoff: { initialMs: 5 } });
    // The crash markers go to $HOME, the plugin's own state folder: every level is sandboxed (issue #23).
    const spec = fixtureSpec('retry-read', { execution: { retryPolicy } });
    assert.equal(firstText(await supervisor.callTool(spec, 'crash-once-read')), 'crash-once-read ok');
    assert.equal(events.at(-1)?.attempts, 2);
    assert.equal(firstText(await supervisor.callTool(spec, 'crash-once-idempotent')), 'crash-once-idempotent ok', 'idempotentHint also retries');
    await supervisor.close();
  });

  it('never retries a tool without readOnlyHint/idempotentHint', async () => {
    const { supervisor, events } = make({ restartBackoff: { initialMs: 5 } });
    const spec = fixtureSpec('retry-write', { execution: { retryPolicy } });
    await assert.rejects(supervisor.callTool(spec, 'crash-once-write'), (error) => isQuiverError(error, 'unavailable'));
    assert.equal(events.at(-1)?.attempts, 1);
    await supervisor.close();
  });

  it('does not retry without a retry policy', async () => {
    const { supervisor, events } = make({ restartBackoff: { initialMs: 5 } });
    await assert.rejects(supervisor.callTool(fixtureSpec('no-policy'), 'crash-once-read'));
    assert.equal(events.at(-1)?.attempts, 1);
    await supervisor.close();
  });
});

describe('circuit breakers, rate limits and concurrency', () => {
  it('opens the tool breaker after N tool errors, half-opens after its timeout, closes on success', async () => {
    const clock = createTestClock();
    const { supervisor, events } = make({ clock });
    const spec = fixtureSpec('breaker', { execution: { circuitBreakerConfig: { failureThreshold: 3, successThreshold: 1, timeout: 1_000, halfOpenRequests: 1 } } });
    for (let index = 0; index < 3; index += 1) assert.equal((await supervisor.callTool(spec, 'fail')).isError, true);
    await assert.rejects(supervisor.callTool(spec, 'fail'), (error) => isQuiverError(error, 'circuit_open') && /fail/.test(error.message));
    assert.equal(events.at(-1)?.outcome, 'rejected');
    assert.equal(supervisor.health()[0]!.toolBreakers.fail, 'open');
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'other tool' })), 'other tool', 'other tools are unaffected');
    clock.advance(1_000);
    assert.equal(supervisor.health()[0]!.toolBreakers.fail, 'half-open');
    assert.equal((await supervisor.callTool(spec, 'fail')).isError, true, 'the trial goes through');
    assert.equal(supervisor.health()[0]!.toolBreakers.fail, 'open', 'a failed trial re-opens');
    await supervisor.close();
  });

  it('opens the plugin breaker on timeouts and closes it again after successful trials', async () => {
    const clock = createTestClock();
    const { supervisor } = make({ clock });
    const spec = fixtureSpec('plugin-breaker', { execution: { circuitBreakerConfig: { failureThreshold: 2, successThreshold: 2, timeout: 500, halfOpenRequests: 1 } } });
    for (let index = 0; index < 2; index += 1) await assert.rejects(supervisor.callTool(spec, 'hang', {}, { timeoutMs: 150 }), (error) => isQuiverError(error, 'timeout'));
    assert.equal(supervisor.health()[0]!.breaker, 'open');
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'x' }), (error) => isQuiverError(error, 'circuit_open') && (error.details as { scope: string }).scope === 'plugin');
    clock.advance(500);
    assert.equal(supervisor.health()[0]!.breaker, 'half-open');
    await supervisor.callTool(spec, 'echo', { message: 'trial 1' });
    await supervisor.callTool(spec, 'echo', { message: 'trial 2' });
    assert.equal(supervisor.health()[0]!.breaker, 'closed');
    await supervisor.close();
  });

  it('rejects calls beyond the plugin and tool token buckets with rate_limited', async () => {
    const { supervisor, events } = make();
    // One token a minute: a slow (sandboxed) start cannot refill a bucket between the calls.
    const spec = fixtureSpec('rated', { execution: { rateLimits: { plugin: { requestsPerMinute: 1, burst: 5 }, tools: { add: { requestsPerMinute: 1, burst: 2 } } } } });
    await supervisor.callTool(spec, 'add', { a: 1, b: 1 });
    await supervisor.callTool(spec, 'add', { a: 1, b: 1 });
    await assert.rejects(supervisor.callTool(spec, 'add', { a: 1, b: 1 }), (error) => isQuiverError(error, 'rate_limited') && /retry in \d+ ms/.test(error.message));
    assert.equal(events.at(-1)?.outcome, 'rejected');
    await supervisor.callTool(spec, 'echo', { message: 'a' });
    await supervisor.callTool(spec, 'echo', { message: 'b' });
    await supervisor.callTool(spec, 'echo', { message: 'c' });
    await assert.rejects(supervisor.callTool(spec, 'echo', { message: 'd' }), (error) => isQuiverError(error, 'rate_limited'), 'plugin bucket of 5');
    await supervisor.close();
  });

  it('caps concurrent calls per tool and per plugin', async () => {
    const { supervisor } = make();
    const spec = fixtureSpec('capped', { execution: { concurrency: { tools: { slow: 1 }, plugin: 3, maxQueue: 1 } } });
    const started = Date.now();
    const first = supervisor.callTool(spec, 'slow', { ms: 200 });
    const second = supervisor.callTool(spec, 'slow', { ms: 200 });
    await assert.rejects(supervisor.callTool(spec, 'slow', { ms: 200 }), (error) => isQuiverError(error, 'rate_limited') && /concurrency/.test(error.message));
    await Promise.all([first, second]);
    assert.ok(Date.now() - started >= 400, 'the two slow calls ran one after the other');
    await supervisor.close();
  });

  it('a cancelled call is reported and does not count against the breaker', async () => {
    const { supervisor } = make();
    const spec = fixtureSpec('cancel', { execution: { circuitBreakerConfig: { failureThreshold: 1 } } });
    const controller = new AbortController();
    const call = supervisor.callTool(spec, 'hang', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(call, (error) => isQuiverError(error, 'cancelled'));
    assert.equal(supervisor.health()[0]!.breaker, 'closed');
    await supervisor.close();
  });

  it('an unknown tool is a tool error: it moves the tool breaker, not the plugin breaker', async () => {
    const { supervisor, events } = make();
    const spec = fixtureSpec('unknown', { execution: { circuitBreakerConfig: { failureThreshold: 1 } } });
    // The SDK's McpServer answers an unknown tool with an isError result ("Tool … not found").
    const result = await supervisor.callTool(spec, 'no_such_tool');
    assert.equal(result.isError, true);
    assert.match(firstText(result), /not found/);
    assert.equal(events.at(-1)?.errorClass, 'tool_error');
    assert.equal(supervisor.health()[0]!.breaker, 'closed');
    assert.equal(supervisor.health()[0]!.toolBreakers.no_such_tool, 'open');
    assert.equal(firstText(await supervisor.callTool(spec, 'echo', { message: 'fine' })), 'fine');
    await supervisor.close();
  });
});

describe('health', () => {
  it('reports state, pid, calls, failures, latency percentiles, breaker and score', async () => {
    const { supervisor } = make();
    const spec = fixtureSpec('healthy');
    for (let index = 0; index < 9; index += 1) await supervisor.callTool(spec, 'echo', { message: String(index) });
    await supervisor.callTool(spec, 'fail');
    const [health] = supervisor.health();
    assert.ok(health);
    assert.equal(health.state, 'running');
    assert.ok(health.pid && isAlive(health.pid));
    assert.equal(health.calls, 10);
    assert.equal(health.failures, 1);
    assert.equal(health.successRate, 0.9);
    assert.ok(health.p50LatencyMs !== undefined && health.p95LatencyMs !== undefined && health.p50LatencyMs <= health.p95LatencyMs);
    assert.equal(health.breaker, 'closed');
    assert.ok(health.score >= 70 && health.score < 100, `score ${health.score}`);
    assert.ok(health.startedAt instanceof Date);
    await supervisor.close();
  });

  it('pings idle connections when enabled and recycles a dead one', async () => {
    const { supervisor } = make({ pingIntervalMs: 100, pingTimeoutMs: 200 });
    const spec = fixtureSpec('pinged');
    await supervisor.callTool(spec, 'echo', { message: 'x' });
    const pid = supervisor.processes()[0]!.pid!;
    // Freeze the server itself (the launcher pid is bwrap; the node process is below it).
    const tree = descendantsOf(pid);
    for (const member of tree) process.kill(member, 'SIGSTOP');
    try {
      await eventually(() => supervisor.processes().length === 0, 5_000, 'frozen process recycled by the pinger');
    } finally {
      for (const member of tree) signalProcess(member, 'SIGCONT');
    }
    await eventually(() => !isAlive(pid) && tree.every((member) => !isAlive(member)), 5_000, 'frozen process killed');
    await supervisor.close();
  });
});
