/**
 * Error messages name things once (issue #15): the MCP SDK writes `MCP error <code>: ` into an
 * McpError's message and the receiving client adds it again, so a gateway error used to reach
 * clients as `MCP error -32602: MCP error -32602: …`. A real SDK client over Streamable HTTP.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fixturePlugin, startHttpHarness, type HttpHarness } from './helpers.ts';

const prefixes = (message: string) => message.match(/MCP error -?\d+: /g)?.length ?? 0;

describe('gateway errors on the wire carry the SDK prefix once', () => {
  let harness: HttpHarness;
  before(async () => {
    harness = await startHttpHarness({ plugins: [fixturePlugin('util', ['echo'])] });
  });
  after(async () => {
    await harness.close();
  });

  it('bad meta-tool arguments and an unknown tool: InvalidParams with one prefix', async () => {
    const { client, close } = await harness.connect();
    try {
      for (const [call, text] of [
        [{ name: 'search_tools', arguments: { query: 42 } }, /^MCP error -32602: Invalid arguments for tool search_tools: /],
        [{ name: 'util__nothing_here', arguments: {} }, /^MCP error -32602: Unknown tool: util__nothing_here/],
      ] as const) {
        await assert.rejects(client.callTool(call), (error: unknown) => {
          assert.ok(error instanceof McpError);
          assert.equal(error.code, ErrorCode.InvalidParams);
          assert.match(error.message, text);
          assert.equal(prefixes(error.message), 1, error.message);
          return true;
        });
      }
    } finally {
      await close();
    }
  });

  it('an unknown resource (requestFailure path): one prefix', async () => {
    const { client, close } = await harness.connect();
    try {
      await assert.rejects(client.readResource({ uri: 'quiver://util/none' }), (error: unknown) => {
        assert.ok(error instanceof McpError);
        assert.equal(prefixes(error.message), 1, error.message);
        return true;
      });
    } finally {
      await close();
    }
  });
});
