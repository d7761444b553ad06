/**
 * Issue #28, the HTTP hot path: a 2025 session's POST is answered with plain JSON when nothing but
 * its answer travels, and with an SSE stream when the request sends something first (progress, a
 * log message, a request to the client, `tools/list_changed` of a search that bound tools) or
 * takes longer than the upgrade delay. Through the real `quiver serve --http` on both databases
 * (sessions stored in each), a real folder plugin (the forwarding fixture), raw HTTP to see the
 * content types, and a real SDK client for progress and sampling.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { createForwardingPluginFolder } from './fixtures/forwarding-server.ts';
import { AdaptiveStreamableHTTPServerTransport } from '../../src/gateway/adaptive-transport.ts';

const PROTOCOL = '2025-11-25';

interface Answer {
  status: number;
  contentType: string;
  /** JSON-RPC messages in order (one for a JSON body; every non-empty event of a stream). */
  messages: Array<Record<string, any>>;
  /** SSE events with an id (the priming event included). */
  eventIds: string[];
}

/** Reads a whole answer: a JSON body, or an SSE stream until it ends. */
async function readAnswer(response: Response): Promise<Answer> {
  const contentType = response.headers.get('content-type') ?? '';
  const text = await response.text();
  if (!contentType.startsWith('text/event-stream')) return { status: response.status, contentType, messages: text ? [JSON.parse(text)] : [], eventIds: [] };
  const messages: Array<Record<string, any>> = [];
  const eventIds: string[] = [];
  for (const block of text.split('\n\n')) {
    const id = /^id: ?(.*)$/m.exec(block)?.[1];
    if (id) eventIds.push(id);
    const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((match) => match[1]).join('\n');
    if (data.trim() !== '') messages.push(JSON.parse(data));
  }
  return { status: response.status, contentType, messages, eventIds };
}

describe('the adaptive transport on its own', () => {
  it('answers JSON when only the answer travels, opens a stream for a notification or after the delay', async () => {
    const transport = new AdaptiveStreamableHTTPServerTransport({ sessionIdGenerator: () => 's', upgradeAfterMs: 200 });
    const seen: Array<Record<string, any>> = [];
    transport.onmessage = (message) => void seen.push(message as Record<string, any>);
    await transport.start();
    const delivered = async (id: number) => {
      for (let i = 0; i < 200 && !seen.some((message) => message.id === id); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    const post = (body: unknown) =>
      transport.handleRequest(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL, 'mcp-session-id': 's' },
          body: JSON.stringify(body),
        }),
      );
    const init = post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await delivered(0);
    await transport.send({ jsonrpc: '2.0', id: 0, result: { protocolVersion: PROTOCOL, capabilities: {}, serverInfo: { name: 's', version: '1' } } });
    const initAnswer = await readAnswer(await init);
    assert.equal(initAnswer.contentType, 'application/json');
    assert.equal(initAnswer.messages[0]!.id, 0);

    // Quick and alone: JSON.
    const quick = post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await delivered(1);
    await transport.send({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    assert.deepEqual((await readAnswer(await quick)).messages, [{ jsonrpc: '2.0', id: 1, result: { tools: [] } }]);

    // A related notification first: a stream with the notification, then the answer.
    const chatty = post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', _meta: { progressToken: 'p' } } });
    await delivered(2);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } }, { relatedRequestId: 2 });
    await transport.send({ jsonrpc: '2.0', id: 2, result: { content: [] } });
    const chattyAnswer = await readAnswer(await chatty);
    assert.equal(chattyAnswer.contentType, 'text/event-stream');
    assert.deepEqual(chattyAnswer.messages.map((message) => message.method ?? message.id), ['notifications/progress', 2]);

    // Slow: the stream opens after the delay, the answer follows on it.
    const slow = post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'y' } });
    const response = await slow; // resolved by the upgrade, before any answer exists
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    await transport.send({ jsonrpc: '2.0', id: 3, result: { content: [] } });
    assert.deepEqual((await readAnswer(response)).messages.map((message) => message.id), [3]);

    // A request still waiting when the session closes is not left hanging.
    const orphan = post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'z' } });
    await delivered(4);
    assert.equal(transport.pendingJsonAnswers, 1);
    await transport.close();
    const orphanAnswer = await readAnswer(await orphan);
    assert.deepEqual(orphanAnswer.messages, []);
    assert.equal(transport.pendingJsonAnswers, 0);
    assert.deepEqual(seen.map((message) => message.id), [0, 1, 2, 3, 4]);
  });
});

describeEachBackend('JSON or SSE per request through quiver serve --http (issue #28)', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let server: { child: ChildProcess; url: string } | undefined;
  let key: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-adaptive-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off' };
    store = await processStore(backend);
    Object.assign(env, store.env);
    await createForwardingPluginFolder(root, 'fwd');
    const added = await runBinary(['plugin', 'add', join(root, 'fwd'), '--name', 'fwd'], env, 120_000);
    assert.equal(added.code, 0, added.stderr);
    const created = await runBinary(['keys', 'create', 'adaptive', '--scope', 'mcp', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
    server = await startServe(['--http', '127.0.0.1:0'], env);
  });

  after(async () => {
    if (server) await stopChild(server.child);
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  function post(body: unknown, sessionId?: string): Promise<Response> {
    return fetch(`${server!.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': PROTOCOL,
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      },
      body: JSON.stringify(body),
    });
  }

  it('a request that sends nothing else gets its result as JSON; one that binds tools or reports progress gets a stream', { timeout: 120_000 }, async () => {
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } } });
    const sessionId = init.headers.get('mcp-session-id');
    assert.ok(sessionId, 'a session id');
    const initAnswer = await readAnswer(init);
    assert.equal(initAnswer.contentType, 'application/json');
    assert.equal(initAnswer.messages[0]!.result.protocolVersion, PROTOCOL);
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status, 202);

    const listed = await readAnswer(await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, sessionId));
    assert.equal(listed.contentType, 'application/json');
    assert.ok(listed.messages[0]!.result.tools.some((tool: { name: string }) => tool.name === 'search_tools'));

    // The first search binds tools: tools/list_changed travels with it, so it streams (priming event first).
    const search = { name: 'search_tools', arguments: { query: 'report progress and logs', limit: 20 } };
    const first = await readAnswer(await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: search }, sessionId));
    assert.equal(first.contentType, 'text/event-stream');
    assert.deepEqual(first.messages.map((message) => message.method ?? message.id), ['notifications/tools/list_changed', 2]);
    assert.equal(first.eventIds.length, 3, 'priming event, notification and answer carry event ids');
    assert.match(JSON.stringify(first.messages[1]!.result), /fwd__report/);
    // The same search again (every tool of the plugin is bound already) binds nothing new: its answer alone, as JSON.
    const again = await readAnswer(await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: search }, sessionId));
    assert.equal(again.contentType, 'application/json', JSON.stringify(again.messages));
    assert.match(JSON.stringify(again.messages[0]!.result), /fwd__report/);

    // Progress: a stream carrying the three steps under the client's token, then the result.
    const report = await readAnswer(
      await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'fwd__report', arguments: { tag: 'R' } }, _meta: { progressToken: 'tok-R' } } }, sessionId),
    );
    assert.equal(report.contentType, 'text/event-stream');
    const progress = report.messages.filter((message) => message.method === 'notifications/progress').map((message) => [message.params.progressToken, message.params.progress]);
    assert.deepEqual(progress, [['tok-R', 1], ['tok-R', 2], ['tok-R', 3]]);
    assert.equal(report.messages.at(-1)!.id, 4);
    // Without a token it still logs (no level set: every message is forwarded), so it still streams.
    const logged = await readAnswer(await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'fwd__report', arguments: { tag: 'L' } } } }, sessionId));
    assert.equal(logged.contentType, 'text/event-stream');
    assert.deepEqual(logged.messages.filter((message) => message.method === 'notifications/message').map((message) => message.params.level), ['debug', 'info']);
    assert.equal(logged.messages.at(-1)!.id, 5);
    // A plugin call that sends nothing else: JSON.
    const quiet = await readAnswer(await post({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'fwd__level', arguments: {} } } }, sessionId));
    assert.equal(quiet.contentType, 'application/json');
    assert.equal(quiet.messages[0]!.id, 6);
    assert.ok(!quiet.messages[0]!.result.isError, JSON.stringify(quiet.messages[0]));
  });

  it('an SDK client gets progress and answers the plugin\'s sampling and elicitation through its call', { timeout: 120_000 }, async () => {
    const client = new Client({ name: 'adaptive-sdk', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled here' }, model: 'test-model' }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'E' } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server!.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      await client.callTool({ name: 'search_tools', arguments: { query: 'ask the client for sampling and elicitation', limit: 3 } });
      const steps: number[] = [];
      const report = (await client.callTool({ name: 'call_tool', arguments: { name: 'fwd__report', arguments: { tag: 'S' } } }, undefined, { onprogress: (p) => void steps.push(p.progress) })) as CallToolResult;
      assert.ok(!report.isError);
      assert.deepEqual(steps, [1, 2, 3]);
      const asked = (await client.callTool({ name: 'call_tool', arguments: { name: 'fwd__ask', arguments: { tag: 'S' } } })) as CallToolResult;
      const text = (asked.content[0] as { text: string }).text;
      assert.match(text, /sampled here/);
      assert.match(text, /"action":"accept"/);
    } finally {
      await client.close();
    }
  });
});
