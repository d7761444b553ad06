/**
 * Issue #24: `subscriptions/listen` of a 2026-07-28 client over stdio. The stdio gateway
 * (`runStdioGateway`, the SDK v2 `serveStdio` entry) runs in process on a pair of streams with
 * the local backend's real fixture MCP servers; the client's JSON-RPC lines are written as a
 * client sends them. The stream opens with the acknowledgement; a catalog change (a plugin going
 * away) reaches it as `notifications/tools/list_changed` tagged with the listen request's id;
 * a stream that asked for prompt changes only never gets the tool change; without a listen
 * stream no change notification is written at all.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { runStdioGateway, type StdioGateway } from '../../src/gateway/stdio.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import { collectStdioFrames, identity, marketplace, standardPlugins, waitForFrame } from './helpers.ts';

type Frame = { id?: number; method?: string; result?: unknown; params?: { _meta?: Record<string, unknown> } };
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'listen-stdio', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

describe('subscriptions/listen of a 2026-07-28 client over stdio (issue #24)', { timeout: 120_000 }, () => {
  let backend: LocalTestBackend;
  let gateway: Gateway;
  const connections: StdioGateway[] = [];

  before(async () => {
    backend = await createLocalTestBackend({ plugins: standardPlugins(), marketplace });
    gateway = createGateway({ backend, options: { sessions: { sweepIntervalMs: 0 } } });
  });
  after(async () => {
    await Promise.allSettled(connections.map((connection) => connection.close()));
    await gateway?.close();
    await backend?.close();
  });

  /** A stdio connection: `send` writes a line, `waitFor` finds a frame the gateway wrote. */
  async function connect() {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const frames = collectStdioFrames<Frame>(stdout);
    connections.push(await runStdioGateway({ gateway, identity: identity(), stdin, stdout }));
    const send = (message: object) => stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const waitFor = (test: (frame: Frame) => boolean, timeoutMs = 30_000): Promise<Frame | undefined> => waitForFrame(frames, test, timeoutMs);
    return { frames, send, waitFor };
  }

  it('acknowledges, then tags a catalog change with the subscription id; filters and quiet connections hold', async () => {
    const tools = await connect();
    const prompts = await connect();
    const quiet = await connect();
    tools.send({ id: 1, method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: META } });
    prompts.send({ id: 5, method: 'subscriptions/listen', params: { notifications: { promptsListChanged: true }, _meta: META } });
    quiet.send({ id: 2, method: 'tools/list', params: { _meta: META } });
    const ack = await tools.waitFor((frame) => frame.method === 'notifications/subscriptions/acknowledged');
    assert.ok(ack, JSON.stringify(tools.frames));
    assert.equal(ack.params?._meta?.['io.modelcontextprotocol/subscriptionId'], 1);
    assert.ok(await prompts.waitFor((frame) => frame.method === 'notifications/subscriptions/acknowledged'));
    assert.ok(await quiet.waitFor((frame) => frame.id === 2 && frame.result !== undefined), JSON.stringify(quiet.frames));

    await backend.removePlugin('util');
    const changed = await tools.waitFor((frame) => frame.method === 'notifications/tools/list_changed');
    assert.ok(changed, `a tools/list_changed on the stream: ${JSON.stringify(tools.frames)}`);
    assert.equal(changed.params?._meta?.['io.modelcontextprotocol/subscriptionId'], 1);
    assert.ok(await prompts.waitFor((frame) => frame.method === 'notifications/prompts/list_changed'));
    assert.equal(prompts.frames.some((frame) => frame.method === 'notifications/tools/list_changed'), false);
    // Nobody listening on this connection: nothing unasked is written.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(quiet.frames.filter((frame) => frame.method !== undefined), []);
  });
});
