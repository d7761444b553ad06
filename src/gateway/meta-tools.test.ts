import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ALL_ERROR_CODES, QuiverError, toQuiverError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { mcpWireForm, requestFailure, toolCallFailure } from './errors.ts';
import { formatPromptName, formatResourceUri, parsePromptName, parseResourceUri, searchToolsDescription, toMcpTool } from './meta-tools.ts';

describe('search_tools description from the live catalog', () => {
  test('names plugins by size with categories, and summarises the rest', () => {
    const plugins = Array.from({ length: 14 }, (_, i) => ({ name: `p${i}`, title: `Plugin ${i}`, toolCount: i + 1, category: i % 2 ? 'data' : 'communication' }));
    const text = searchToolsDescription({ toolCount: 105, plugins }, 20);
    assert.match(text, /105 tools from 14 plugins: Plugin 13 \(14 tools, data\); Plugin 12/);
    assert.match(text, /and 2 more/);
    assert.match(text, /Categories: communication, data\./);
    assert.match(text, /up to 20 tools/);
    assert.match(searchToolsDescription({ toolCount: 1, plugins: [{ name: 'a', title: 'A', toolCount: 1 }] }, 5), /1 tool from 1 plugin: A \(1 tool\)/);
  });
  test('an empty catalog says so', () => {
    assert.match(searchToolsDescription({ toolCount: 0, plugins: [] }, 5), /No tools are installed/);
  });
});

describe('namespacing of resources and prompts', () => {
  test('round-trips and rejects foreign names', () => {
    const uri = formatResourceUri('notes', 'file:///a b?x=1');
    assert.deepEqual(parseResourceUri(uri), { pluginName: 'notes', uri: 'file:///a b?x=1' });
    assert.equal(parseResourceUri('file:///a'), undefined);
    assert.equal(parseResourceUri('quiver://Bad_Name/x'), undefined);
    assert.equal(parseResourceUri('quiver://ok/%E0%A4%A'), undefined);
    assert.deepEqual(parsePromptName(formatPromptName('p', 'greet__x')), { pluginName: 'p', name: 'greet__x' });
    assert.equal(parsePromptName('greet'), undefined);
    assert.equal(parsePromptName('p__'), undefined);
  });
});

describe('MCP error mapping (STYLE.md)', () => {
  test('caller mistakes → InvalidParams, never revealing forbidden tools', () => {
    assert.throws(() => toolCallFailure('x__y', new QuiverError('invalid_input', 'bad'), silentLogger), (error: McpError) => error.code === ErrorCode.InvalidParams && /Invalid arguments/.test(error.message));
    assert.throws(() => toolCallFailure('x__y', new QuiverError('forbidden', 'org b only'), silentLogger), (error: McpError) => error.code === ErrorCode.InvalidParams && /Unknown tool: x__y$/.test(error.message));
    assert.equal(mcpWireForm(new QuiverError('not_found', 'x')), 'unknown');
  });
  test('plugin trouble → isError results with the reason', () => {
    for (const code of ['circuit_open', 'timeout', 'unavailable', 'rate_limited'] as const) {
      const result = toolCallFailure('x__y', new QuiverError(code, `because ${code}`), silentLogger);
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, new RegExp(`\\(${code}\\): because ${code}`));
    }
    assert.equal(mcpWireForm(new QuiverError('upstream_error', 'x', { kind: 'operational' })), 'result');
  });
  test('a missing credential reaches the client as what it is, not as bad arguments', () => {
    const result = toolCallFailure('x__y', new QuiverError('missing_credential', "plugin 'x' needs GITHUB_TOKEN: quiver plugin secret set x GITHUB_TOKEN"), silentLogger);
    assert.equal(result.isError, true);
    const text = (result.content[0] as { text: string }).text;
    assert.match(text, /\(missing_credential\)/);
    assert.match(text, /GITHUB_TOKEN/);
    assert.doesNotMatch(text, /Invalid arguments/);
  });
  test('every error code has a wire form, and an unexpected error is always internal', () => {
    for (const code of ALL_ERROR_CODES) assert.ok(['unknown', 'invalid', 'result', 'internal'].includes(mcpWireForm(new QuiverError(code, 'x'))), code);
    assert.equal(mcpWireForm(new QuiverError('timeout', 'x', { kind: 'unexpected' })), 'internal');
  });
  test('bugs → InternalError without the cause', () => {
    assert.throws(() => toolCallFailure('x__y', new TypeError('secret detail'), silentLogger), (error: McpError) => error.code === ErrorCode.InternalError && !/secret/.test(error.message));
    assert.equal(mcpWireForm(toQuiverError(new Error('x'))), 'internal');
    assert.equal(requestFailure('prompt p', new QuiverError('timeout', 'slow'), silentLogger).code, ErrorCode.RequestTimeout);
    assert.equal(requestFailure('prompt p', new QuiverError('unavailable', 'down'), silentLogger).code, ErrorCode.InternalError);
    assert.equal(requestFailure('prompt p', new McpError(ErrorCode.InvalidParams, 'x'), silentLogger).code, ErrorCode.InvalidParams);
    assert.equal(requestFailure('prompt p', new RangeError('bug'), silentLogger).code, ErrorCode.InternalError);
  });
});

describe('tools as tools/list shows them (issue #24, protocol fidelity)', () => {
  const base = { qualifiedName: 'weather__ping', pluginName: 'weather', inputSchema: { type: 'object' as const }, visibility: 'visible', pinned: false, tokens: 0 } as const;
  test('a description the plugin left out is not invented, and annotations.title stays in the annotations', () => {
    const listed = toMcpTool({ ...base, description: '', annotations: { title: 'Ping it' } } as never);
    assert.equal('description' in listed, false);
    assert.equal('title' in listed, false);
    assert.deepEqual(listed.annotations, { title: 'Ping it' });
    assert.equal(toMcpTool({ ...base, description: 'Health check.', title: 'Ping' } as never).description, 'Health check.');
  });
});
