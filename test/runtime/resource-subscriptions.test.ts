/**
 * Issue #12: the supervisor's resource subscriptions on a real plugin process
 * (`runtime/supervisor/resource-extras.ts`): listeners share one upstream subscription, a
 * subscribed connection is not stopped as idle, a crashed plugin's subscription is renewed on
 * its next process, and the last listener leaving unsubscribes upstream. Also task handles
 * (`tool-tasks.ts`): a task's requests reach the connection that created it, and creating one
 * is admitted like a call (rate limits).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isQuiverError } from '../../src/core/errors.ts';
import { signalProcess } from '../../src/runtime/process-tree.ts';
import { createSupervisor, type Supervisor } from '../../src/runtime/supervisor.ts';
import { createSurfacePluginFolder } from '../e2e/fixtures/surface-server.ts';
import { fixtureSpec } from './helpers.ts';

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(what);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('supervisor resource subscriptions and tasks on a real plugin', () => {
  let root: string;
  let supervisor: Supervisor;
  let spec: ReturnType<typeof fixtureSpec>;
  let folder: string;
  const stats = async () => JSON.parse(textOf(await supervisor.callTool(spec, 'stats_north'))) as { subscribes: number; unsubscribes: number; subscribed: string[] };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-subs-'));
    chmodSync(root, 0o755);
    folder = await createSurfacePluginFolder(root, 'north');
    // Short idle timeout: an unheld connection would stop between the steps below.
    supervisor = createSupervisor({ idleTimeoutMs: 150, restartBackoff: { initialMs: 10, maxMs: 50 } });
    spec = fixtureSpec('north', { script: join(folder, 'server.mjs'), cwd: folder });
  });
  after(async () => {
    await supervisor.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('two listeners, one upstream subscribe; held past the idle timeout; renewed after a crash; one unsubscribe', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const a = await supervisor.subscribeResource(spec, 'north://memo', (uri) => first.push(uri));
    const b = await supervisor.subscribeResource(spec, 'north://memo', (uri) => second.push(uri));
    assert.deepEqual(supervisor.resourceSubscriptions(), [{ entry: 'north@1.0.0', uri: 'north://memo', listeners: 2 }]);
    const pid = supervisor.processes()[0]?.pid;
    assert.ok(pid);
    await new Promise((resolve) => setTimeout(resolve, 400)); // > idleTimeoutMs
    assert.equal(supervisor.processes()[0]?.pid, pid, 'a subscribed connection is not stopped as idle');
    assert.deepEqual(await stats(), { subscribes: 1, unsubscribes: 0, subscribed: ['north://memo'] });

    await supervisor.callTool(spec, 'touch_north', { uri: 'north://memo' });
    await eventually(() => first.length === 1 && second.length === 1, 'both listeners told');

    signalProcess(pid, 'SIGKILL');
    await eventually(async () => {
      const live = supervisor.processes()[0];
      return live !== undefined && live.pid !== pid && (await stats()).subscribed.includes('north://memo');
    }, 'the subscription renewed on the new process');
    await supervisor.callTool(spec, 'touch_north', { uri: 'north://memo' });
    await eventually(() => first.length === 2 && second.length === 2, 'updates flow from the new process');

    await a.unsubscribe();
    assert.equal((await stats()).unsubscribes, 0, 'one listener left: still subscribed upstream');
    await b.unsubscribe();
    await b.unsubscribe(); // idempotent
    assert.deepEqual(await stats(), { subscribes: 1, unsubscribes: 1, subscribed: [] });
    assert.deepEqual(supervisor.resourceSubscriptions(), []);
  });

  it('a stop Quiver asked for ends the subscription instead of starting the plugin again', async () => {
    const subscription = await supervisor.subscribeResource(spec, 'north://notes/2', () => undefined);
    assert.equal(supervisor.processes().length, 1);
    await supervisor.stop('north');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(supervisor.processes(), [], 'no process started for the subscription');
    await subscription.unsubscribe();
    assert.deepEqual(supervisor.resourceSubscriptions(), []);
  });

  it('templates and completion pass through', async () => {
    assert.deepEqual((await supervisor.listResourceTemplates(spec)).map((t) => t.uriTemplate), ['north://notes/{id}']);
    const completion = await supervisor.complete(spec, { ref: { type: 'ref/resource', uri: 'north://notes/{id}' }, argument: { name: 'id', value: '1' } });
    assert.deepEqual(completion.completion.values.slice(0, 2), ['resource:north://notes/{id}', 'id=1']);
  });

  it('a task handle reaches the connection holding the task', async () => {
    const task = await supervisor.createToolTask(spec, 'brew_north', {}, { ttl: 10_000 });
    assert.match(task.created.taskId, /^north-task-/);
    assert.equal((await task.get()).status, 'working');
    const result = task.result();
    await supervisor.callTool(spec, 'pour_north');
    assert.equal(((await result).content[1] as { text: string }).text, 'brewed brew_north until poured');
    assert.equal((await task.get()).status, 'completed');
  });

  it("creating a task is admitted like a call: the tool's rate limit refuses the next one", async () => {
    const limited = fixtureSpec('north-limited', {
      script: join(folder, 'server.mjs'),
      cwd: folder,
      execution: { rateLimits: { tools: { brew_north: { requestsPerMinute: 1, burst: 1 } } } },
    });
    const first = await supervisor.createToolTask(limited, 'brew_north', { ms: 1 }, {});
    assert.equal(first.created.status, 'working');
    await assert.rejects(supervisor.createToolTask(limited, 'brew_north', { ms: 1 }, {}), (error) => isQuiverError(error, 'rate_limited'));
  });
});
