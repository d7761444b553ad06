/**
 * Issue #24: `subscriptions/listen` for 2026-07-28 clients on the in-process HTTP gateway with
 * real fixture MCP servers. The stream opens with the acknowledgement; a catalog change (a
 * plugin going away) reaches it as `notifications/tools/list_changed` tagged with the
 * subscription id; a stream that asked only for prompt changes gets no tool change.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { identity, startHttpHarness, waitForFrame, type HttpHarness } from './helpers.ts';

type Frame = { method?: string; params?: { _meta?: Record<string, unknown> } };

describe('subscriptions/listen of a 2026-07-28 client (issue #24)', { timeout: 120_000 }, () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness();
  });
  after(() => harness.close());

  /** Opens a listen stream; `next()` resolves with its next JSON-RPC frame. */
  async function listen(notifications: Record<string, boolean>) {
    const abort = new AbortController();
    const response = await fetch(harness.url, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
        'x-test-identity': JSON.stringify(identity()),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'subscriptions/listen',
        params: {
          notifications,
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'listen', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const frames: Frame[] = [];
    const pump = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          const lines = buffer.split('\n');
          buffer = lines.pop() ?? '';
          for (const line of lines) if (line.startsWith('data:')) frames.push(JSON.parse(line.slice(5)) as Frame);
        }
      } catch {
        // aborted
      }
    })();
    const waitFor = (test: (frame: Frame) => boolean, timeoutMs?: number) => waitForFrame(frames, test, timeoutMs);
    return { frames, waitFor, close: async () => { abort.abort(); await pump; } };
  }

  it('acknowledges first, then tags a catalog change with its subscription id; a prompts-only stream gets no tool change', async () => {
    const tools = await listen({ toolsListChanged: true });
    const prompts = await listen({ promptsListChanged: true });
    try {
      const ack = await tools.waitFor(() => true);
      assert.equal(ack?.method, 'notifications/subscriptions/acknowledged', JSON.stringify(tools.frames));
      assert.ok(await prompts.waitFor((frame) => frame.method === 'notifications/subscriptions/acknowledged'));
      await harness.backend.removePlugin('util');
      const changed = await tools.waitFor((frame) => frame.method === 'notifications/tools/list_changed');
      assert.ok(changed, `a tools/list_changed on the stream: ${JSON.stringify(tools.frames)}`);
      const id = changed.params?._meta?.['io.modelcontextprotocol/subscriptionId'];
      assert.equal(id, 1, 'tagged with the listen request\'s id');
      assert.equal(ack?.params?._meta?.['io.modelcontextprotocol/subscriptionId'], id, 'the same subscription');
      // The prompts-only stream got its own change, and never the tools one.
      assert.ok(await prompts.waitFor((frame) => frame.method === 'notifications/prompts/list_changed'));
      assert.equal(prompts.frames.some((frame) => frame.method === 'notifications/tools/list_changed'), false);
    } finally {
      await tools.close();
      await prompts.close();
    }
  });
});
