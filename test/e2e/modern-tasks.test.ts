/**
 * Issue #24: the Tasks extension (`io.modelcontextprotocol/tasks`) for 2026-07-28 clients,
 * bridged to a real 2025-era plugin's tasks, through the production gateway over Streamable
 * HTTP on both databases. Raw 2026-07-28 requests (the v2 client library has no tasks API):
 * `server/discover` declares the extension; a `tools/call` of a task-capable tool from a client
 * that declared the extension is answered `resultType: "task"` under Quiver's own id (directly
 * on an `all` workspace, through `call_tool` on the still surface); `tasks/get` polls it to
 * `completed` with the result inlined (URIs in the caller's addressing); another principal gets
 * -32602 for the id; a client without the extension gets an ordinary result, and -32021 for
 * `tasks/get`; `tasks/cancel` cancels at the plugin.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../helpers/backends.ts';
import { postModern, type ModernAnswer } from '../helpers/modern-post.ts';
import { startSurfaceGateway, type SurfaceGateway, type SurfaceWorkspace } from './fixtures/surface-gateway.ts';

const TASKS = 'io.modelcontextprotocol/tasks';

describeEachBackend('the Tasks extension for 2026-07-28 clients (issue #24)', (backend) => {
  let surface: SurfaceGateway;
  before(async () => {
    surface = await startSurfaceGateway(await backend.open());
  });
  after(async () => {
    await surface?.close();
  });

  /** One 2026-07-28 request as the workspace's key; `tasks` declares the extension. */
  const post = (workspace: SurfaceWorkspace, method: string, params: Record<string, unknown>, tasks = true): Promise<ModernAnswer> =>
    postModern(surface.url, surface.keyOf(workspace), method, params, tasks ? { extensions: { [TASKS]: {} } } : {});

  async function pollUntil(workspace: SurfaceWorkspace, taskId: string, status: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const got = await post(workspace, 'tasks/get', { taskId });
      assert.ok(got.result, JSON.stringify(got));
      if (got.result['status'] === status) return got.result;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`task ${taskId} never reached ${status}`);
  }

  it('server/discover declares the extension', async () => {
    const discovered = await post('default', 'server/discover', {});
    assert.deepEqual((discovered.result?.['capabilities'] as { extensions?: unknown }).extensions, { [TASKS]: {} });
  });

  it('a task-capable tool runs as a task; tasks/get polls it to its result; another principal cannot read it', async () => {
    const created = await post('default', 'tools/call', { name: 'north__brew_north', arguments: {} });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    assert.equal(created.result?.['status'], 'working');
    const taskId = String(created.result?.['taskId']);
    assert.doesNotMatch(taskId, /north-task/, "the plugin's own task id is not shown");
    assert.equal(typeof created.result?.['ttlMs'], 'number');

    const working = await post('default', 'tasks/get', { taskId });
    assert.equal(working.result?.['resultType'], 'complete');
    assert.equal(working.result?.['status'], 'working');
    assert.equal(working.result?.['result'], undefined);

    // Another principal (another workspace's key) is told the task does not exist.
    const stranger = await post('finder', 'tasks/get', { taskId });
    assert.equal(stranger.error?.code, -32602, JSON.stringify(stranger));
    assert.match(stranger.error?.message ?? '', /not found/);
    const strangerCancel = await post('finder', 'tasks/cancel', { taskId });
    assert.equal(strangerCancel.error?.code, -32602);

    // A client without the extension gets neither the task nor an answer about it.
    const undeclared = await post('default', 'tasks/get', { taskId }, false);
    assert.equal(undeclared.error?.code, -32021, JSON.stringify(undeclared));
    assert.deepEqual((undeclared.error?.data as { requiredCapabilities?: unknown }).requiredCapabilities, { extensions: { [TASKS]: {} } });

    assert.equal((await post('default', 'tasks/update', { taskId, inputResponses: {} })).result?.['resultType'], 'complete');
    await post('default', 'tools/call', { name: 'north__pour_north', arguments: {} });
    const completed = await pollUntil('default', taskId, 'completed');
    assert.deepEqual((completed['result'] as { content?: unknown }).content, [
      { type: 'resource_link', uri: 'quiver://north/north%3A%2F%2Fnotes%2F1', name: 'brewed' },
      { type: 'text', text: 'brewed brew_north until poured' },
    ]);
    // Asked again, the same final state (kept until the retention ends).
    assert.deepEqual((await post('default', 'tasks/get', { taskId })).result?.['result'], completed['result']);
  });

  it('through call_tool on the still surface; without the extension the same call is ordinary; cancel', async () => {
    const created = await post('finder', 'tools/call', { name: 'call_tool', arguments: { name: 'brew_north', arguments: {} } });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    const taskId = String(created.result?.['taskId']);

    const plain = await post('finder', 'tools/call', { name: 'call_tool', arguments: { name: 'brew_north', arguments: { ms: 1 } } }, false);
    assert.equal(plain.result?.['resultType'], 'complete', JSON.stringify(plain));
    assert.deepEqual(plain.result?.['content'], [{ type: 'text', text: 'brewed directly' }]);

    assert.equal((await post('finder', 'tasks/cancel', { taskId })).result?.['resultType'], 'complete');
    await pollUntil('finder', taskId, 'cancelled');
    const unknown = await post('finder', 'tasks/get', { taskId: 'no-such-task' });
    assert.equal(unknown.error?.code, -32602);
  });

  it('a principal holds at most 32 tasks: with 32 unfinished a new one is refused; a finished one makes room', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 32; i++) {
      const created = await post('native', 'tools/call', { name: 'brew_north', arguments: {} });
      assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
      ids.push(String(created.result?.['taskId']));
    }
    const refused = await post('native', 'tools/call', { name: 'brew_north', arguments: {} });
    assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
    assert.match(refused.error?.message ?? '', /32 unfinished tasks/);
    // Pouring finishes every brew; the one whose final state was read makes room for a new task.
    await post('native', 'tools/call', { name: 'pour_north', arguments: {} });
    await pollUntil('native', ids[0]!, 'completed');
    const next = await post('native', 'tools/call', { name: 'brew_north', arguments: {} });
    assert.equal(next.result?.['resultType'], 'task', JSON.stringify(next));
    assert.equal((await post('native', 'tasks/get', { taskId: ids[0]! })).error?.code, -32602, 'the oldest finished task was let go');
    assert.equal((await post('native', 'tasks/get', { taskId: ids[1]! })).result?.['taskId'], ids[1]);
    await post('native', 'tasks/cancel', { taskId: String(next.result?.['taskId']) });
  });
});
