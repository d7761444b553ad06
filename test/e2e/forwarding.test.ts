/**
 * Issue #12 "Forwarding": through the real `quiver serve` (stdio and Streamable HTTP), with a
 * real folder plugin installed by `quiver plugin add` and real SDK clients: progress comes back
 * under the client's own token, log messages name the plugin and follow the session's level,
 * the plugin's sampling, elicitation and roots requests are answered by the client that made
 * the call, a cancelled call is cancelled at the plugin, a client without those capabilities
 * gets clear errors at once, and two concurrent sessions on one pooled plugin each see only
 * their own progress, logs and requests. Also (issue #12's second round): progress on
 * `resources/read` and `prompts/get`, a plugin's sampling during `completion/complete`, a URL
 * elicitation's `notifications/elicitation/complete` and a task's `notifications/tasks/status`
 * reach only the session they belong to. Forwarding never touches the store, so this runs on the
 * embedded store only (the other e2e files cover PostgreSQL); one stdio and one HTTP `quiver serve`.
 * Most of its time is starting `quiver` processes: measured 115 to 190 s at a load average of
 * 20 to 30 on 2 cores, hence the generous timeouts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
  TaskStatusNotificationSchema,
  CallToolResultSchema,
  type CallToolResult,
  type LoggingMessageNotification,
  type ProgressNotification,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createForwardingPluginFolder } from './fixtures/forwarding-server.ts';

/** What one client saw from the plugin through Quiver. */
interface Seen {
  sampling: string[];
  elicitation: string[];
  roots: number;
  logs: Array<LoggingMessageNotification['params']>;
  progress: Array<ProgressNotification['params']>;
  /** URL elicitations asked (their messages) and the elicitation ids whose completion arrived. */
  urls: string[];
  completed: string[];
  taskStatus: Array<TaskStatusNotification['params']>;
}

/** A client that records what reaches it; with `capable`, it declares and answers sampling, elicitation and roots. */
function recordingClient(tag: string, capable: boolean): { client: Client; seen: Seen } {
  const seen: Seen = { sampling: [], elicitation: [], roots: 0, logs: [], progress: [], urls: [], completed: [], taskStatus: [] };
  const capabilities = capable ? { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } : {};
  const client = new Client({ name: `forwarding-${tag}`, version: '1.0.0' }, { capabilities });
  if (capable) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const asked = JSON.stringify(request.params.messages);
      seen.sampling.push(asked);
      return { role: 'assistant', content: { type: 'text', text: `${tag} answers` }, model: 'test-model' };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      if (request.params.mode === 'url') {
        seen.urls.push(request.params.message);
        return { action: 'accept' };
      }
      seen.elicitation.push(request.params.message);
      return { action: 'accept', content: { name: tag } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.roots += 1;
      return { roots: [{ uri: `file:///work/${tag}`, name: tag }] };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => void seen.logs.push(notification.params));
  // Replaces the SDK's own progress routing: the test sends its own tokens and sees them raw.
  client.setNotificationHandler(ProgressNotificationSchema, async (notification) => void seen.progress.push(notification.params));
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => void seen.completed.push(notification.params.elicitationId));
  client.setNotificationHandler(TaskStatusNotificationSchema, async (notification) => void seen.taskStatus.push(notification.params));
  return { client, seen };
}

const textOf = (result: CallToolResult): string => (result.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join('');
const jsonOf = (result: CallToolResult): Record<string, any> => JSON.parse(textOf(result)) as Record<string, any>;

async function call(client: Client, name: string, args: Record<string, unknown> = {}, progressToken?: string): Promise<CallToolResult> {
  const result = (await client.callTool({ name: `fwd__${name}`, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) })) as CallToolResult;
  assert.ok(!result.isError, textOf(result));
  return result;
}

/** Waits until `ready()` holds (a notification arrives on its own; nothing to await): at most 30 s, for loaded CI machines. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !ready(); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** A task-augmented tools/call, as a tasks-aware client sends it. */
function callAsTask(client: Client, name: string) {
  return client.request({ method: 'tools/call', params: { name: `fwd__${name}`, arguments: {}, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

/** Polls a plugin counter until it reaches `want` (notifications are one-way: no answer to wait for). */
async function untilCount(client: Client, tool: string, field: string, want: number): Promise<number> {
  let value = 0;
  for (let i = 0; i < 50; i += 1) {
    value = Number(jsonOf(await call(client, tool))[field]);
    if (value >= want) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return value;
}

describe('forwarding per session through quiver serve (issue #12)', () => {
  let root: string;
  let env: Record<string, string>;

  function stdio(): Transport {
    return new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' });
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-forwarding-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    await createForwardingPluginFolder(root, 'fwd');
    const added = await runBinary(['plugin', 'add', join(root, 'fwd'), '--name', 'fwd'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
    const exposure = await runBinary(['workspace', 'set', 'default', '--exposure', 'all'], env);
    assert.equal(exposure.code, 0, exposure.stderr);
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('over stdio: progress, logs, sampling, elicitation, roots and cancellation reach the right places', { timeout: 120_000 }, async () => {
    const { client, seen } = recordingClient('A', true);
    await client.connect(stdio());
    try {
      assert.ok(client.getServerCapabilities()?.logging, 'Quiver declares logging');
      await client.setLoggingLevel('info');
      const report = jsonOf(await call(client, 'report', { tag: 'A' }, 'client-token-A'));
      // The plugin saw a token of Quiver's own; the client got its progress under its own token.
      assert.notEqual(report['token'], null);
      assert.notEqual(report['token'], 'client-token-A');
      assert.deepEqual(seen.progress.map((p) => [p.progressToken, p.progress, p.total, p.message]), [1, 2, 3].map((step) => ['client-token-A', step, 3, `A step ${step}`]));
      // Info reaches the session, named for the plugin; debug is below the session's level.
      assert.deepEqual(seen.logs, [{ level: 'info', logger: 'fwd', data: { tag: 'A', note: 'report done' } }]);
      assert.equal(jsonOf(await call(client, 'level'))['level'], 'info');
      await client.setLoggingLevel('debug');
      seen.logs.length = 0;
      await call(client, 'report', { tag: 'A' });
      assert.deepEqual(seen.logs.map((log) => [log.level, log.logger]), [['debug', 'fwd/worker'], ['info', 'fwd']]);
      assert.equal(jsonOf(await call(client, 'level'))['level'], 'debug');

      const asked = jsonOf(await call(client, 'ask', { tag: 'A' }));
      assert.equal(asked['sampling'].result.content.text, 'A answers');
      assert.deepEqual(asked['elicitation'].result, { action: 'accept', content: { name: 'A' } });
      assert.equal(seen.sampling.length, 1);
      assert.match(seen.sampling[0]!, /sample for A/);
      assert.deepEqual(seen.elicitation, ['form for A']);

      const roots = jsonOf(await call(client, 'roots'));
      assert.deepEqual(roots['result'], { roots: [{ uri: 'file:///work/A', name: 'A' }] });
      await client.sendRootsListChanged();
      assert.equal(await untilCount(client, 'roots_changes', 'rootsChanges', 1), 1);

      // A cancelled call is cancelled at the plugin (the SDK sends notifications/cancelled upstream).
      const controller = new AbortController();
      const held = client.callTool({ name: 'fwd__hold', arguments: {} }, undefined, { signal: controller.signal });
      // Once the plugin holds the call (a cancel that reaches Quiver before it has forwarded the call
      // has nothing upstream to cancel; a fixed 300 ms could end before that on a loaded machine).
      assert.equal(await untilCount(client, 'cancelled', 'held', 1), 1);
      controller.abort();
      await assert.rejects(held);
      assert.equal(await untilCount(client, 'cancelled', 'cancelled', 1), 1);

      // Progress of reads and prompts: a token of Quiver's own per request, back under the client's.
      const progressUri = (await client.listResources()).resources.find((resource) => resource.name === 'progress')!.uri;
      seen.progress.length = 0;
      const [read1, read2, prompt] = await Promise.all([
        client.readResource({ uri: progressUri, _meta: { progressToken: 'read-1' } }),
        client.readResource({ uri: progressUri, _meta: { progressToken: 'read-2' } }),
        client.getPrompt({ name: 'fwd__progress', arguments: { tag: 'P' }, _meta: { progressToken: 'prompt-1' } }),
      ]);
      const upstreamTokens = [...[read1, read2].map((read) => (read.contents[0] as { text: string }).text), (prompt.messages[0]!.content as { text: string }).text].map((text) => JSON.parse(text).token as string | null);
      assert.equal(new Set(upstreamTokens).size, 3, `one token per request: ${JSON.stringify(upstreamTokens)}`);
      for (const token of upstreamTokens) assert.match(String(token), /^quiver-/);
      const stepsOf = (token: string) => seen.progress.filter((p) => p.progressToken === token).map((p) => [p.progress, p.total, p.message]);
      assert.deepEqual(stepsOf('read-1'), [[1, 2, 'read step 1'], [2, 2, 'read step 2']]);
      assert.deepEqual(stepsOf('read-2'), [[1, 2, 'read step 1'], [2, 2, 'read step 2']]);
      assert.deepEqual(stepsOf('prompt-1'), [[1, 2, 'P step 1'], [2, 2, 'P step 2']]);
      assert.equal(seen.progress.length, 6);

      // The plugin's sampling while it answers completion/complete reaches this client.
      seen.sampling.length = 0;
      const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'fwd__progress' }, argument: { name: 'tag', value: 'x' } });
      assert.deepEqual(completion.completion.values, ['A answers']);
      assert.equal(seen.sampling.length, 1);
      assert.match(seen.sampling[0]!, /complete x/);

      // A URL elicitation completes after its call ended: only its own id arrives.
      assert.deepEqual(jsonOf(await call(client, 'url_ask', { tag: 'A' }))['result'], { action: 'accept' });
      assert.deepEqual(seen.urls, ['visit for A']);
      await until(() => seen.completed.length > 0);
      assert.deepEqual(seen.completed, ['url-A']);

      // A task's status notification arrives under the gateway's task id.
      const { task } = await callAsTask(client, 'slow_task');
      assert.doesNotMatch(task.taskId, /plugin-task/);
      await until(() => seen.taskStatus.length > 0);
      assert.deepEqual(seen.taskStatus.map((status) => [status.taskId, status.status]), [[task.taskId, 'completed']]);
      assert.equal(textOf((await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult), 'task done');
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP: concurrent sessions on one pooled plugin each get only their own progress, logs and requests; a client without the capabilities is refused at once', { timeout: 180_000 }, async () => {
    const created = await runBinary(['keys', 'create', 'forwarding', '--scope', 'mcp', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const key = (JSON.parse(created.stdout) as { key: string }).key;
    const served = await startServe(['--http', '127.0.0.1:0'], env);
    const clients = [recordingClient('A', true), recordingClient('B', true), recordingClient('C', false), recordingClient('D', false)];
    const tags = ['A', 'B', 'C', 'D'];
    try {
      for (const { client } of clients) {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      }
      const runs = clients.flatMap(({ client }, i) => {
        const tag = tags[i]!;
        const work = [call(client, 'report', { tag }, `token-${tag}`), call(client, 'report', { tag }, `token-${tag}-2`)];
        return i < 2 ? [...work, call(client, 'ask', { tag })] : work;
      });
      const results = await Promise.all(runs);
      clients.forEach(({ seen }, i) => {
        const tag = tags[i]!;
        for (const progress of seen.progress) {
          assert.match(String(progress.progressToken), new RegExp(`^token-${tag}(-2)?$`));
          assert.match(String(progress.message), new RegExp(`^${tag} step`));
        }
        assert.equal(seen.progress.length, 6, `${tag} got all of its own progress: ${JSON.stringify(seen.progress)}`);
        for (const log of seen.logs) assert.equal((log.data as { tag: string }).tag, tag, `${tag} got another session's log`);
        for (const asked of seen.sampling) assert.match(asked, new RegExp(`sample for ${tag}"`));
        for (const form of seen.elicitation) assert.equal(form, `form for ${tag}`);
      });
      // The two sessions that answer requests each answered their own, exactly once.
      for (const i of [0, 1]) {
        assert.equal(clients[i]!.seen.sampling.length, 1);
        assert.deepEqual(clients[i]!.seen.elicitation, [`form for ${tags[i]}`]);
        // Each had the connection to itself while its calls ran: its logs were all forwarded.
        assert.equal(clients[i]!.seen.logs.length, 4, `${tags[i]} got its logs`);
      }
      const asks = [results[2]!, results[5]!].map(jsonOf);
      assert.deepEqual(asks.map((asked) => asked['elicitation'].result.content.name), ['A', 'B']);

      // A client that declared none of them: clear errors at once, not a hang.
      const plain = clients[2]!.client;
      const started = performance.now();
      const refused = jsonOf(await call(plain, 'ask', { tag: 'C' }));
      assert.match(refused['sampling'].error.message, /cannot forward sampling\/createMessage from plugin 'fwd': the client that made this call did not declare the 'sampling' capability/);
      assert.match(refused['elicitation'].error.message, /cannot forward elicitation\/create .*did not declare the 'elicitation' capability/);
      assert.match(jsonOf(await call(plain, 'roots'))['error'].message, /did not declare the 'roots' capability/);
      assert.ok(performance.now() - started < 10_000, 'refused at once');
      // Alone on the connection and with no level set, it gets every message of its own call.
      clients[2]!.seen.logs.length = 0;
      await call(plain, 'report', { tag: 'C' });
      assert.deepEqual(clients[2]!.seen.logs.map((log) => [log.level, log.logger]), [['debug', 'fwd/worker'], ['info', 'fwd']]);

      // URL elicitations and tasks of two sessions at once: completions and task status (sent
      // after the calls were answered, so on each session's own stream) reach only their session.
      const [, , taskA, taskB] = await Promise.all([
        call(clients[0]!.client, 'url_ask', { tag: 'A' }),
        call(clients[1]!.client, 'url_ask', { tag: 'B' }),
        callAsTask(clients[0]!.client, 'slow_task'),
        callAsTask(clients[1]!.client, 'slow_task'),
      ]);
      await until(() => [0, 1].every((i) => clients[i]!.seen.completed.length > 0 && clients[i]!.seen.taskStatus.length > 0));
      assert.deepEqual(clients[0]!.seen.completed, ['url-A']);
      assert.deepEqual(clients[1]!.seen.completed, ['url-B']);
      assert.deepEqual(clients[0]!.seen.taskStatus.map((status) => [status.taskId, status.status]), [[taskA.task.taskId, 'completed']]);
      assert.deepEqual(clients[1]!.seen.taskStatus.map((status) => [status.taskId, status.status]), [[taskB.task.taskId, 'completed']]);
      for (const i of [2, 3]) assert.deepEqual([clients[i]!.seen.completed, clients[i]!.seen.taskStatus], [[], []]);
    } finally {
      await Promise.allSettled(clients.map(({ client }) => client.close()));
      await stopChild(served.child);
    }
  });
});
