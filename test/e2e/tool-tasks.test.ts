/**
 * Issue #12: task-based tool execution (MCP tasks) passed through the production gateway over
 * Streamable HTTP to a real plugin process, on both databases. A task-augmented `tools/call`
 * creates the plugin's task under a gateway id; `tasks/get`, `tasks/result`, `tasks/list`
 * and `tasks/cancel` work for the session that owns it and for no other.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { startSurfaceGateway, type SurfaceGateway } from './fixtures/surface-gateway.ts';

/** A task-augmented tools/call, as a tasks-aware client sends it. */
function callAsTask(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

const invalidParams = (error: McpError) => error.code === ErrorCode.InvalidParams;

describeEachBackend('tool tasks through the gateway', (backend) => {
  let surface: SurfaceGateway;
  before(async () => {
    surface = await startSurfaceGateway(await backend.open());
  });
  after(async () => {
    await surface?.close();
  });

  it('initialize declares tasks; the tool keeps its taskSupport', async () => {
    const client = await surface.connect('default');
    assert.deepEqual(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const brew = (await client.listTools()).tools.find((tool) => tool.name === 'north__brew_north');
    assert.deepEqual(brew?.execution, { taskSupport: 'optional' });
  });

  it('a task runs at the plugin under a gateway id; its result comes back with the session\'s URIs', async () => {
    const client = await surface.connect('default');
    const { task } = await callAsTask(client, 'north__brew_north', {});
    assert.equal(task.status, 'working');
    assert.doesNotMatch(task.taskId, /north-task/, 'the plugin\'s own task id is not shown');
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'working');
    assert.deepEqual((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId), [task.taskId]);
    // tasks/result waits for the end; the plugin finishes the brew when poured.
    const pending = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await client.callTool({ name: 'north__pour_north' });
    const result = (await pending) as CallToolResult;
    assert.deepEqual(result.content, [
      { type: 'resource_link', uri: 'quiver://north/north%3A%2F%2Fnotes%2F1', name: 'brewed' },
      { type: 'text', text: 'brewed brew_north until poured' },
    ]);
    assert.deepEqual(result._meta?.['io.modelcontextprotocol/related-task'], { taskId: task.taskId });
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');
    // Without task the same tool is an ordinary call.
    const direct = (await client.callTool({ name: 'north__brew_north', arguments: { ms: 1 } })) as CallToolResult;
    assert.deepEqual(direct.content, [{ type: 'text', text: 'brewed directly' }]);
  });

  it("a session cannot see, read or cancel another session's task", async () => {
    const owner = await surface.connect('default', { name: 'owner' });
    const other = await surface.connect('native', { name: 'other' });
    const { task } = await callAsTask(owner, 'south__brew_south', {});
    await assert.rejects(other.experimental.tasks.getTask(task.taskId), invalidParams);
    await assert.rejects(other.experimental.tasks.cancelTask(task.taskId), invalidParams);
    await assert.rejects(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema), invalidParams);
    assert.deepEqual((await other.experimental.tasks.listTasks()).tasks, []);
    // The owner cancels it.
    assert.equal((await owner.experimental.tasks.cancelTask(task.taskId)).status, 'cancelled');
    assert.equal((await owner.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
  });

  it('a task for a tool that does not offer tasks, or an unknown tool, is InvalidParams', async () => {
    const client = await surface.connect('default');
    await assert.rejects(callAsTask(client, 'north__about', {}), /does not support task-augmented calls/);
    await assert.rejects(callAsTask(client, 'north__nothing', {}), invalidParams);
    await assert.rejects(client.experimental.tasks.getTask('no-such-task'), /Unknown task: no-such-task/);
  });
});
