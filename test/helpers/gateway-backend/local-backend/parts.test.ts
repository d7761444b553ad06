import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { QuiverError } from '../../../../src/core/errors.ts';
import type { BackendSession, GatewayTool } from '../../../../src/gateway/backend.ts';
import { findVisibleTool, listedPlugin, listedTools, pluginVisible, visibleTools } from './access.ts';
import { lexicalTokens, rankMarketplace, rankTools, toolDocument } from './lexical.ts';
import { collectPages } from './pages.ts';
import type { LocalPluginSpec, PluginState } from './types.ts';
import { upstreamError } from './upstream-error.ts';

const session = (overrides: Partial<BackendSession> = {}): BackendSession => ({
  sessionId: 's', workspace: 'default', project: null, orgId: null, userId: null, roles: [], tier: null, ...overrides,
});

function tool(pluginName: string, name: string, extra: Partial<GatewayTool> = {}): GatewayTool {
  return { qualifiedName: `${pluginName}__${name}`, pluginName, description: '', inputSchema: { type: 'object' }, visibility: 'on-demand', tokens: 1, ...extra };
}

function plugin(spec: Partial<LocalPluginSpec> & { name: string }, tools: GatewayTool[]): PluginState {
  return { spec: { command: 'none', ...spec }, client: undefined, transport: undefined, connecting: undefined, tools, originalNames: new Map(), documents: new Map() };
}

describe('test backend access', () => {
  const open = plugin({ name: 'open' }, [tool('open', 'a'), tool('open', 'hidden', { visibility: 'silent' })]);
  const granted = plugin({ name: 'granted', workspaces: ['ws1'], grants: { orgs: ['org-a'], roles: ['finance'], users: ['u1'] } }, [tool('granted', 'b')]);
  const quiet = plugin({ name: 'quiet', manifest: { visibility: 'silent' } }, [tool('quiet', 'c')]);
  const plugins = new Map([['open', open], ['granted', granted], ['quiet', quiet]]);

  it('needs the workspace and any one grant', () => {
    assert.equal(pluginVisible(granted, session({ workspace: 'ws1', orgId: 'org-a' })), true);
    assert.equal(pluginVisible(granted, session({ workspace: 'ws1', roles: ['finance'] })), true);
    assert.equal(pluginVisible(granted, session({ workspace: 'ws1', userId: 'u1' })), true);
    assert.equal(pluginVisible(granted, session({ workspace: 'ws1', orgId: 'org-b', userId: 'u2', roles: ['sales'] })), false);
    assert.equal(pluginVisible(granted, session({ workspace: 'ws2', orgId: 'org-a' })), false);
    assert.equal(pluginVisible(open, session()), true);
  });

  it('lists non-silent tools only, narrowed by the expert allow-list, but finds a silent tool for a call', () => {
    assert.deepEqual(visibleTools(plugins, session()).map((t) => t.qualifiedName), ['open__a', 'quiet__c']);
    assert.deepEqual(visibleTools(plugins, session({ expertAllowList: ['quiet__c'] })).map((t) => t.qualifiedName), ['quiet__c']);
    assert.equal(findVisibleTool(plugins, session(), 'open__hidden')?.tool.qualifiedName, 'open__hidden');
    assert.equal(findVisibleTool(plugins, session(), 'granted__b'), undefined, 'an invisible plugin\'s tool does not exist');
    assert.equal(findVisibleTool(plugins, session({ expertAllowList: ['open__a'] }), 'open__hidden'), undefined);
    assert.equal(findVisibleTool(plugins, session(), 'not-qualified'), undefined);
  });

  it('never lists a silent plugin and lists only its listed tools', () => {
    assert.equal(listedPlugin(plugins, session(), 'quiet'), undefined);
    assert.equal(listedPlugin(plugins, session(), 'open'), open);
    assert.deepEqual(listedTools(open, session()).map((t) => t.qualifiedName), ['open__a']);
  });
});

describe('test backend search', () => {
  it('splits camelCase and snake_case, drops stop words and folds plurals', () => {
    assert.deepEqual(lexicalTokens('getWeatherForecasts for the city_names, please'), ['get', 'weather', 'forecast', 'city', 'name']);
    assert.deepEqual(lexicalTokens('class address'), ['class', 'address']);
  });

  it('ranks by BM25 with the name counted three times, ties by name, and nothing for no match', () => {
    const tools = [tool('p', 'sendEmail'), tool('p', 'weather', { description: 'send weather by email' }), tool('p', 'aaSendEmail')];
    const documents = new Map([
      ['p__sendEmail', toolDocument({ name: 'sendEmail', inputSchema: {} }, undefined)],
      ['p__weather', toolDocument({ name: 'weather', description: 'send weather by email', inputSchema: {} }, undefined)],
      ['p__aaSendEmail', toolDocument({ name: 'sendEmail', inputSchema: {} }, undefined)],
    ]);
    assert.equal(documents.get('p__sendEmail')?.counts.get('email'), 3);
    const ranked = rankTools(tools, ['send', 'email'], (t) => documents.get(t.qualifiedName), 10);
    assert.deepEqual(ranked.map((r) => r.tool.qualifiedName), ['p__aaSendEmail', 'p__sendEmail', 'p__weather']);
    assert.equal(rankTools(tools, ['send'], (t) => documents.get(t.qualifiedName), 1).length, 1);
    assert.deepEqual(rankTools(tools, ['pdf'], (t) => documents.get(t.qualifiedName), 10), []);
  });

  it('adds parameter words and the plugin\'s title and tags to a tool\'s document', () => {
    const document = toolDocument({ name: 'run', inputSchema: { properties: { city: { description: 'Town name' } } } }, { title: 'Atlas', tags: ['maps'] });
    for (const word of ['city', 'town', 'atla', 'map']) assert.ok(document.counts.has(word), word);
  });

  it('suggests marketplace entries by shared words, best first', () => {
    const entries = [
      { name: 'pdf-tools', title: 'PDF tools', summary: 'Convert PDF files' },
      { name: 'mail', title: 'Mail', summary: 'Send email' },
    ] as Parameters<typeof rankMarketplace>[0];
    assert.deepEqual(rankMarketplace(entries, 'convert my pdf', 5).map((e) => e.name), ['pdf-tools']);
    assert.deepEqual(rankMarketplace(entries, 'weather', 5), []);
  });
});

describe('test backend parts', () => {
  it('follows cursors until there is none', async () => {
    const pages: Record<string, { items: number[]; nextCursor?: string }> = { start: { items: [1, 2], nextCursor: 'b' }, b: { items: [3], nextCursor: 'c' }, c: { items: [] } };
    const asked: Array<string | undefined> = [];
    const items = await collectPages(async (cursor) => (asked.push(cursor), pages[cursor ?? 'start']!));
    assert.deepEqual(items, [1, 2, 3]);
    assert.deepEqual(asked, [undefined, 'b', 'c']);
  });

  it('maps SDK failures to the backend error contract', () => {
    const spec: LocalPluginSpec = { name: 'p', command: 'x', callTimeoutMs: 500 };
    const code = (error: unknown, signal?: AbortSignal) => {
      const mapped = upstreamError(spec, "a call of 'p__t'", error, signal);
      assert.ok(mapped instanceof QuiverError);
      return [mapped.code, mapped.message];
    };
    assert.equal(code(new McpError(ErrorCode.InvalidParams, 'bad'))[0], 'invalid_input');
    assert.deepEqual(code(new McpError(ErrorCode.RequestTimeout, 'slow')), ['timeout', "plugin 'p' did not answer a call of 'p__t' within 500 ms"]);
    assert.equal(code(new McpError(ErrorCode.ConnectionClosed, 'gone'))[0], 'unavailable');
    assert.deepEqual(code(new McpError(ErrorCode.InternalError, 'boom')), ['upstream_error', "plugin 'p' answered a call of 'p__t' with an error: boom"]);
    assert.equal(code(new Error('spawn ENOENT'))[0], 'unavailable');
    assert.deepEqual(code(new Error('x'), AbortSignal.abort()), ['unavailable', "a call of 'p__t' was cancelled"]);
  });
});
