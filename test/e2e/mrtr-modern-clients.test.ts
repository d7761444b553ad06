/**
 * Issue #24, Multi Round-Trip Requests toward 2026-07-28 clients, through the real binary on
 * each backend. Two real plugins: Quiver's conformance plugin on SDK 1.x (2025 era: it asks the
 * user by pushing elicitation / sampling / roots requests mid-call) and a 2026-only plugin on
 * the v2 SDK (it returns input_required). A real v2 client pinned to 2026-07-28
 * (`@modelcontextprotocol/client`, auto-fulfilling input requests with its own handlers) calls
 * their tools through `call_tool`, over HTTP with a key and over stdio: Quiver answers each
 * with input_required, the client retries with its answers, and the plugin's result comes
 * back (one round, several requests in one round, several rounds, a prompt). Raw requests check
 * what a client library hides: the sealed requestState is refused when altered, when another
 * principal sends it, and when it was already answered; a call that needed a capability the
 * request did not declare is -32021 with HTTP 400.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { QUIVER_BIN, runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { MODERN, postModern } from '../helpers/modern-post.ts';
import { conformancePluginFolder, modernPluginFolder } from '../helpers/sdk-plugin-folders.ts';

type CallResult = { content?: Array<{ type: string; text?: string }>; isError?: boolean };
const text = (result: unknown): string => ((result as CallResult).content ?? []).map((item) => item.text ?? '').join('');

/** A pinned v2 client that answers every input request and records each one it was asked. */
function answeringClient(name: string): { client: ModernClient; asked: string[] } {
  const asked: string[] = [];
  const client = new ModernClient(
    { name, version: '1.0.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: MODERN } }, inputRequired: { autoFulfill: true, maxRounds: 5 } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    const message = String(request.params.message);
    asked.push(`elicitation: ${message}`);
    const properties = Object.keys((request.params as { requestedSchema?: { properties?: object } }).requestedSchema?.properties ?? {});
    const content: Record<string, string | boolean> = {};
    for (const property of properties) content[property] = property === 'color' ? 'blue' : property === 'ok' ? true : property === 'context' ? 'tea time' : 'Ada';
    return { action: 'accept', content };
  });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    asked.push(`sampling: ${JSON.stringify(request.params.messages[0]?.content)}`);
    return { role: 'assistant', content: { type: 'text', text: 'bees make honey' }, model: 'test-model' };
  });
  client.setRequestHandler('roots/list', async () => {
    asked.push('roots');
    return { roots: [{ uri: 'file:///home/ada/notes', name: 'notes' }] };
  });
  return { client, asked };
}

describeEachBackend('input_required relayed to 2026-07-28 clients (issue #24)', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let served: { child: ChildProcess; url: string } | undefined;
  let mcpUrl: URL;
  const keys: Record<'a' | 'b', string> = { a: '', b: '' };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-mrtr-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folders
    store = await processStore(backend);
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent', ...store.env };
    for (const [name, folder] of [
      ['legacy', conformancePluginFolder(join(root, 'legacy'))],
      ['modern', modernPluginFolder(join(root, 'modern'))],
    ] as const) {
      const added = await runBinary(['plugin', 'add', folder, '--name', name], env, 240_000);
      assert.equal(added.code, 0, added.stderr);
    }
    for (const principal of ['a', 'b'] as const) {
      // Two principals: a state is bound to the identity a key gives (its user), not to one key.
      const created = await runBinary(['keys', 'create', `mrtr-${principal}`, '--scope', 'mcp', '--user', `user-${principal}`, '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      keys[principal] = (JSON.parse(created.stdout) as { key: string }).key;
    }
    served = await startServe(['--http', '127.0.0.1:0'], env, 180_000);
    mcpUrl = new URL('/mcp', served.url);
  });

  after(async () => {
    if (served) await stopChild(served.child);
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  const callThrough = (client: ModernClient, name: string) => client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } }, { timeout: 120_000 });

  it('a pinned v2 client over HTTP: one round, three requests in one round, two rounds, a 2026 plugin, a prompt', { timeout: 300_000 }, async () => {
    const { client, asked } = answeringClient('mrtr-http');
    await client.connect(new ModernHttpTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${keys.a}` } } }));
    try {
      assert.equal(text(await callThrough(client, 'legacy__push_elicitation')), 'Hello, Ada!');
      assert.deepEqual(asked.splice(0), ['elicitation: What is your name?']);

      assert.equal(text(await callThrough(client, 'legacy__push_multiple_inputs')), 'name=Ada, greeting=bees make honey, roots=1');
      assert.deepEqual(asked.splice(0).sort(), ['elicitation: What is your name?', 'roots', 'sampling: {"type":"text","text":"Generate a greeting"}']);

      assert.equal(text(await callThrough(client, 'legacy__push_multi_round')), 'Ada likes blue');
      assert.deepEqual(asked.splice(0), ['elicitation: Step 1: What is your name?', 'elicitation: Step 2: What is your favorite color?']);

      // 2026 plugin → 2026 client: the plugin's own input_required, relayed through the paused call.
      const ordered = await client.callTool({ name: 'call_tool', arguments: { name: 'modern__place_order', arguments: { item: 'tea' } } }, { timeout: 120_000 });
      assert.equal(text(ordered), 'ordered tea for Ada');
      assert.deepEqual(asked.splice(0), ['elicitation: Order tea?']);

      const note = await client.callTool({ name: 'call_tool', arguments: { name: 'modern__draft_note', arguments: { topic: 'bees' } } }, { timeout: 120_000 });
      assert.equal(text(note), 'bees make honey @ file:///home/ada/notes');
      assert.deepEqual(asked.splice(0).sort(), ['roots', 'sampling: {"type":"text","text":"Write a note about bees"}']);

      const prompt = await client.getPrompt({ name: 'legacy__push_prompt' }, { timeout: 120_000 });
      assert.equal((prompt.messages[0]?.content as { text?: string }).text, 'Use this context: tea time');
    } finally {
      await client.close();
    }
  });

  it('a pinned v2 client over stdio: the same round trip', { timeout: 300_000 }, async () => {
    const { client, asked } = answeringClient('mrtr-stdio');
    await client.connect(new ModernStdioTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }));
    try {
      assert.equal(text(await callThrough(client, 'legacy__push_elicitation')), 'Hello, Ada!');
      assert.equal(text(await callThrough(client, 'legacy__push_multi_round')), 'Ada likes blue');
      assert.deepEqual(asked, ['elicitation: What is your name?', 'elicitation: Step 1: What is your name?', 'elicitation: Step 2: What is your favorite color?']);
    } finally {
      await client.close();
    }
  });

  /** A raw 2026-07-28 POST as principal `who`. */
  async function post(who: 'a' | 'b', method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = { elicitation: {}, sampling: {}, roots: {} }) {
    const message = await postModern(mcpUrl, keys[who], method, params, capabilities, { timeoutMs: 120_000 });
    return { status: message.status, message };
  }

  const confirmTool = { name: 'call_tool', arguments: { name: 'legacy__push_tampered_state', arguments: {} } };

  it('the sealed requestState: altered, another principal, answered twice: refused; the right retry resumes', { timeout: 300_000 }, async () => {
    const first = await post('a', 'tools/call', confirmTool);
    assert.equal(first.message.result?.resultType, 'input_required', JSON.stringify(first.message));
    const requests = first.message.result?.inputRequests as Record<string, { method: string }>;
    const [key] = Object.keys(requests);
    assert.equal(requests[key!]!.method, 'elicitation/create');
    const state = String(first.message.result?.requestState);
    const answer = { [key!]: { action: 'accept', content: { ok: true } } };

    const tampered = await post('a', 'tools/call', { ...confirmTool, inputResponses: answer, requestState: `${state.slice(0, -2)}AA` });
    assert.equal(tampered.message.error?.code, -32602, JSON.stringify(tampered.message));
    const foreign = await post('b', 'tools/call', { ...confirmTool, inputResponses: answer, requestState: state });
    assert.equal(foreign.message.error?.code, -32602, 'another principal cannot resume the call');
    const otherTool = await post('a', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__push_request_state', arguments: {} }, inputResponses: answer, requestState: state });
    assert.equal(otherTool.message.error?.code, -32602, 'a state answers only the request it was minted for');

    const resumed = await post('a', 'tools/call', { ...confirmTool, inputResponses: answer, requestState: state });
    assert.equal(resumed.message.result?.resultType, 'complete', JSON.stringify(resumed.message));
    assert.equal(text(resumed.message.result), 'state-ok: confirmed=true');
    const replayed = await post('a', 'tools/call', { ...confirmTool, inputResponses: answer, requestState: state });
    assert.equal(replayed.message.error?.code, -32602, 'an answered state is not accepted again');
    assert.match(replayed.message.error?.message ?? '', /ended|already answered/);
  });

  it('each principal sees only its own input requests; a missing answer is asked again', { timeout: 300_000 }, async () => {
    const [a, b] = await Promise.all([
      post('a', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__push_elicitation', arguments: {} } }),
      post('b', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__push_sampling', arguments: {} } }),
    ]);
    assert.deepEqual(Object.values(a.message.result?.inputRequests as object).map((request: { method: string }) => request.method), ['elicitation/create']);
    assert.deepEqual(Object.values(b.message.result?.inputRequests as object).map((request: { method: string }) => request.method), ['sampling/createMessage']);
    // Requests the plugin makes at once (Promise.all) all reach this principal's call. Whether they
    // come in one round depends on the plugin process being scheduled within Quiver's gathering
    // window (on a loaded machine it may not be: a 2025 push carries no mark of what it was sent
    // with), so the test answers each round and waits on the plugin's next requests, not on time;
    // one round for requests that arrive together is proven in src/gateway/mrtr/gather-round.test.ts.
    const answers: Record<string, unknown> = {
      'elicitation/create': { action: 'accept', content: { name: 'Ada' } },
      'sampling/createMessage': { role: 'assistant', content: { type: 'text', text: 'bees make honey' }, model: 'test-model' },
      'roots/list': { roots: [{ uri: 'file:///home/ada/notes', name: 'notes' }] },
    };
    const multiple = { name: 'call_tool', arguments: { name: 'legacy__push_multiple_inputs', arguments: {} } };
    const methods: string[] = [];
    let round = await post('a', 'tools/call', multiple);
    while (round.message.result?.resultType === 'input_required' && methods.length < 3) {
      const requests = round.message.result.inputRequests as Record<string, { method: string }>;
      methods.push(...Object.values(requests).map((request) => request.method));
      const inputResponses = Object.fromEntries(Object.entries(requests).map(([key, request]) => [key, answers[request.method]]));
      round = await post('a', 'tools/call', { ...multiple, inputResponses, requestState: round.message.result.requestState });
    }
    assert.deepEqual(methods.sort(), ['elicitation/create', 'roots/list', 'sampling/createMessage'], 'each request the plugin made is asked once, of this principal');
    assert.equal(round.message.result?.resultType, 'complete', JSON.stringify(round.message));
    assert.equal(text(round.message.result), 'name=Ada, greeting=bees make honey, roots=1');
    const again = await post('a', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__push_elicitation', arguments: {} }, inputResponses: {}, requestState: a.message.result?.requestState });
    assert.equal(again.message.result?.resultType, 'input_required', 'the unanswered request is asked again');
    assert.deepEqual(Object.keys(again.message.result?.inputRequests as object), Object.keys(a.message.result?.inputRequests as object));
  });

  it('a call that needed a capability the request did not declare: -32021 naming it, HTTP 400; only declared ones are asked', { timeout: 300_000 }, async () => {
    const missing = await post('a', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__test_missing_capability', arguments: {} } }, {});
    assert.equal(missing.status, 400);
    assert.equal(missing.message.error?.code, -32021, JSON.stringify(missing.message));
    assert.deepEqual((missing.message.error?.data as { requiredCapabilities?: unknown }).requiredCapabilities, { sampling: {} });

    const samplingOnly = await post('a', 'tools/call', { name: 'call_tool', arguments: { name: 'legacy__push_capabilities', arguments: {} } }, { sampling: {} });
    assert.deepEqual(Object.values(samplingOnly.message.result?.inputRequests as object).map((request: { method: string }) => request.method), ['sampling/createMessage']);
  });
});
