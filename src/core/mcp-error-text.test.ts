import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutMcpErrorPrefix } from './mcp-error-text.ts';

describe('withoutMcpErrorPrefix', () => {
  it('takes off every leading SDK prefix and nothing else', () => {
    assert.equal(withoutMcpErrorPrefix('MCP error -32602: MCP error -32602: Invalid arguments'), 'Invalid arguments');
    assert.equal(withoutMcpErrorPrefix('MCP error 7: x'), 'x');
    assert.equal(withoutMcpErrorPrefix('Invalid arguments: MCP error -32602: inner'), 'Invalid arguments: MCP error -32602: inner');
    assert.equal(withoutMcpErrorPrefix('MCP error: no code'), 'MCP error: no code');
    assert.equal(withoutMcpErrorPrefix(''), '');
  });
});
