/**
 * Issue #24: tasks of a 2026-07-28 plugin (the `io.modelcontextprotocol/tasks` extension)
 * bridged through Quiver, on both databases. The plugin (test/fixtures/modern-task-plugin, v2
 * server SDK, the extension written at the request-handler level) is installed from a folder
 * and runs as a real process; the production gateway serves loopback HTTP. A 2026-07-28 client
 * (raw requests: the v2 client has no tasks API) that declares the extension calls its tools
 * and gets `resultType: "task"` under Quiver's own id, polls `tasks/get` to the result, sees a
 * failed task's error and cancels a task that would never end; another principal is told the
 * id does not exist; without the extension the same call is ordinary; a call the plugin answers
 * at once is still a task, already completed. A 2025-11-25 client (SDK
 * 1.x) runs the same tool as a 2025 task: `tasks/get` and the blocking `tasks/result`.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { postModern, type ModernAnswer } from '../helpers/modern-post.ts';
import { serveAppMcp } from '../helpers/serve-app-mcp.ts';
import { modernTaskPluginFolder } from '../helpers/sdk-plugin-folders.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
type Principal = 'default' | 'other';

describeEachBackend("tasks of a 2026-07-28 plugin through Quiver (issue #24)", (backend) => {
  let root: string;
  let app: App;
  let url: URL;
  const keys = new Map<Principal, string>();
  let stop = async (): Promise<void> => undefined;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-modern-tasks-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    app = await createApp(loadConfig({ QUIVER_HOME: join(root, 'home'), QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    await app.plugins.add(modernTaskPluginFolder(join(root, 'ledger')), { name: 'ledger' });
    await app.plugins.setWorkspaceExposureMode('default', 'all');
    keys.set('default', (await app.apiKeys.create({ name: 'default', scopes: ['mcp'] })).key);
    // Another principal that sees the same plugin: it still may not read the first one's tasks.
    const other = await app.plugins.createWorkspace({ name: 'other' });
    await app.plugins.setWorkspaceExposureMode('other', 'all');
    await app.plugins.enable('ledger', { workspace: 'other' });
    keys.set('other', (await app.apiKeys.create({ name: 'other', scopes: ['mcp'], workspaceId: other.id })).key);
    const served = await serveAppMcp(app);
    url = served.url;
    stop = served.close;
  });
  after(async () => {
    await stop();
    await app?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** One 2026-07-28 request as a principal; `tasks` declares the extension. */
  const post = (who: Principal, method: string, params: Record<string, unknown>, tasks = true): Promise<ModernAnswer> =>
    postModern(url, keys.get(who)!, method, params, tasks ? { extensions: { [TASKS]: {} } } : {});

  async function pollUntil(taskId: string, status: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < 300; attempt++) {
      const got = await post('default', 'tasks/get', { taskId });
      assert.ok(got.result, JSON.stringify(got));
      if (got.result['status'] === status) return got.result;
      assert.equal(got.result['status'], 'working', JSON.stringify(got.result));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`task ${taskId} never reached ${status}`);
  }

  it("a 2026 client's call becomes a task under Quiver's id; tasks/get polls it to the plugin's result; another principal cannot read it", async () => {
    const created = await post('default', 'tools/call', { name: 'ledger__compile_report', arguments: { topic: 'tides', ms: 1_500 } });
    assert.equal(created.result?.['resultType'], 'task', JSON.stringify(created));
    assert.equal(created.result?.['status'], 'working');
    const taskId = String(created.result?.['taskId']);
    assert.doesNotMatch(taskId, /ledger-/, "the plugin's own task id is not shown");

    const stranger = await post('other', 'tasks/get', { taskId });
    assert.equal(stranger.error?.code, -32602, JSON.stringify(stranger));
    assert.equal((await post('other', 'tasks/cancel', { taskId })).error?.code, -32602);

    const completed = await pollUntil(taskId, 'completed');
    assert.deepEqual((completed['result'] as { content?: unknown }).content, [{ type: 'text', text: 'report on tides' }]);

    // Without the extension the same call is ordinary (the plugin is not asked for a task either).
    const plain = await post('default', 'tools/call', { name: 'ledger__compile_report', arguments: { topic: 'tides' } }, false);
    assert.equal(plain.result?.['resultType'], 'complete', JSON.stringify(plain));
    assert.deepEqual(plain.result?.['content'], [{ type: 'text', text: 'report on tides (direct)' }]);

    // The plugin may answer a task-capable call at once: the client still gets its task, already completed.
    const quick = await post('default', 'tools/call', { name: 'ledger__quick_note', arguments: { topic: 'gulls' } });
    assert.equal(quick.result?.['resultType'], 'task', JSON.stringify(quick));
    const noted = await pollUntil(String(quick.result?.['taskId']), 'completed');
    assert.deepEqual((noted['result'] as { content?: unknown }).content, [{ type: 'text', text: 'report on gulls (direct)' }]);
  });

  it("a failed task shows the plugin's error; a task that would never end is cancelled at the plugin", async () => {
    const broken = await post('default', 'tools/call', { name: 'ledger__broken_report', arguments: { topic: 'tides' } });
    assert.equal(broken.result?.['resultType'], 'task', JSON.stringify(broken));
    const failed = await pollUntil(String(broken.result?.['taskId']), 'failed');
    assert.match((failed['error'] as { message?: string }).message ?? '', /the archive is offline/);

    const endless = await post('default', 'tools/call', { name: 'ledger__endless_report', arguments: { topic: 'tides' } });
    const taskId = String(endless.result?.['taskId']);
    assert.equal((await post('default', 'tasks/get', { taskId })).result?.['status'], 'working');
    assert.equal((await post('default', 'tasks/cancel', { taskId })).result?.['resultType'], 'complete');
    const cancelled = await pollUntil(taskId, 'cancelled');
    assert.equal(cancelled['statusMessage'], 'cancelled by the client');
  });

  it('a 2025-11-25 client runs the same tool as a 2025 task (tasks/get, tasks/result)', async () => {
    const client = new Client({ name: 'legacy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${keys.get('default')!}` } } }));
    try {
      const listed = await client.listTools();
      assert.equal(listed.tools.find((tool) => tool.name === 'ledger__compile_report')?.execution?.taskSupport, 'optional');
      const { task } = await client.request({ method: 'tools/call', params: { name: 'ledger__compile_report', arguments: { topic: 'reefs', ms: 500 }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
      assert.equal(task.status, 'working');
      assert.doesNotMatch(task.taskId, /ledger-/);
      assert.equal((await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).taskId, task.taskId);
      const result = (await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema)) as CallToolResult;
      assert.deepEqual(result.content, [{ type: 'text', text: 'report on reefs' }]);
      assert.equal((await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).status, 'completed');
    } finally {
      await client.close();
    }
  });
});
