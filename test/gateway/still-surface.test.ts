/**
 * Issue #24: the still search surface for 2026-07-28 clients, on the in-process HTTP gateway
 * with real fixture MCP servers. The list is the meta-tools then the always/pinned tools in
 * name order; a search, a call and a loop the guard catches leave it byte-identical; the loop
 * is refused until the next search; and a call after a search still teaches (the principal
 * state reports the search's outcome with the tool called), with no session.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { identity, startHttpHarness, type HttpHarness } from './helpers.ts';

type CallResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown; isError?: boolean };
const text = (result: unknown) => ((result as CallResult).content ?? []).map((block) => block.text ?? '').join('\n');

describe('the still surface of a 2026-07-28 client (issue #24)', { timeout: 120_000 }, () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness();
  });
  after(() => harness.close());

  async function modernClient(who = identity()): Promise<{ client: ModernClient; transport: ModernHttpTransport }> {
    const transport = new ModernHttpTransport(harness.url, { requestInit: { headers: { 'x-test-identity': JSON.stringify(who) } } });
    const client = new ModernClient({ name: 'still', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    return { client, transport };
  }

  it('lists meta-tools then always tools; search, call and a caught loop leave it byte-identical; the call teaches', async () => {
    const { client, transport } = await modernClient();
    try {
      const first = (await client.listTools()).tools;
      assert.deepEqual(first.map((tool) => tool.name), ['search_tools', 'call_tool', 'memory__remember']);
      const bytes = JSON.stringify(first);

      const searched = await client.callTool({ name: 'search_tools', arguments: { query: 'echo a message back', limit: 3 } });
      const found = (searched.structuredContent as { tools: Array<{ name: string; inputSchema?: unknown }> }).tools;
      assert.ok(found.some((tool) => tool.name === 'util__echo' && tool.inputSchema), text(searched));
      assert.equal(JSON.stringify((await client.listTools()).tools), bytes, 'unchanged by the search');

      // The loop guard catches the repeated identical call; the list stays, the tool is refused.
      let looped = '';
      for (let i = 0; i < 6 && !looped.includes('Loop detected'); i++) {
        looped = text(await client.callTool({ name: 'call_tool', arguments: { name: 'util__echo', arguments: { message: 'same' } } }));
      }
      assert.match(looped, /Loop detected/);
      assert.equal(JSON.stringify((await client.listTools()).tools), bytes, 'unchanged by the loop');
      const refused = await client.callTool({ name: 'call_tool', arguments: { name: 'util__echo', arguments: { message: 'again' } } }).catch((error: Error) => error);
      assert.match(refused instanceof Error ? refused.message : text(refused), /repeated identical calls/);

      // A new search re-admits it and reports the first search's outcome: it taught util__echo.
      await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers' } });
      const outcome = harness.backend.outcomes.at(-1) as { toolsCalled: string[] } | undefined;
      assert.ok(outcome, 'an outcome was recorded without a session');
      assert.deepEqual(outcome.toolsCalled, ['util__echo']);
      assert.equal(transport.sessionId, undefined);
      assert.equal(harness.handler.sessionCount, 0, 'no HTTP session was opened');
    } finally {
      await client.close();
    }
  });

  it("call_tool's target travels as the Mcp-Param-Tool-Name header; one that disagrees with the body is refused (-32020)", async () => {
    const { client } = await modernClient();
    try {
      const callTool = (await client.listTools()).tools.find((tool) => tool.name === 'call_tool');
      assert.equal((callTool?.inputSchema.properties as Record<string, Record<string, unknown>>)['name']?.['x-mcp-header'], 'Tool-Name');
      const called = await client.callTool({ name: 'call_tool', arguments: { name: 'util__echo', arguments: { message: 'through a header' } } });
      assert.match(text(called), /through a header/, 'the SDK client sends the header and the call goes through');
    } finally {
      await client.close();
    }
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const response = await fetch(harness.url, {
      method: 'POST',
      headers: {
        'x-test-identity': JSON.stringify(identity()),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'call_tool',
        'mcp-param-tool-name': 'util__add',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'util__echo', arguments: { message: 'x' } }, _meta: meta } }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: number } }).error.code, -32020);
  });
});
