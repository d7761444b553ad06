/**
 * Issue #24, protocol fidelity: a client that did not declare a capability is not offered tools
 * that need it, when the plugin lists them per capability. The plugin
 * (test/fixtures/capability-plugin, v2 server SDK, 2026-07-28 only) lists `confirm_delete` only
 * to requests declaring elicitation, `summarize_topic` only with sampling, `draft_and_confirm`
 * only with both, `count_words` always. Installed from a folder through the real app (discovery
 * in its sandbox) on both databases: the catalog records what each tool needs; the production
 * gateway serves loopback HTTP. 2026-07-28 clients (raw requests: the capabilities vary per
 * request) and 2025-11-25 clients (SDK 1.x, capabilities per session) that declare the
 * capability see the tool in `tools/list` (exposure `all`), find it with `search_tools` and
 * call it through `call_tool`; those that do not are not offered it and their call is refused
 * as an unknown tool naming the missing capability (before, it reached the plugin, which
 * refused it with -32021, or, for a 2025 client, was listed and found like any other tool).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { readToolClientRequirements, replaceToolClientRequirements } from '../../src/store/repositories/tool-client-requirements.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { postModern, type ModernAnswer } from '../helpers/modern-post.ts';
import { serveAppMcp } from '../helpers/serve-app-mcp.ts';
import { capabilityPluginFolder } from '../helpers/sdk-plugin-folders.ts';

type Workspace = 'listing' | 'searching';
type Capabilities = Record<string, Record<string, unknown>>;

const NONE: Capabilities = {};
const ELICITATION: Capabilities = { elicitation: { form: {} } };
const BOTH: Capabilities = { elicitation: { form: {} }, sampling: {} };
const ALL_TOOLS = ['caps__confirm_delete', 'caps__count_words', 'caps__draft_and_confirm', 'caps__summarize_topic'];
const QUERY = 'count words, delete a file, summarize a topic, draft a letter';
const textOf = (result: { content?: unknown }): string => ((result.content ?? []) as Array<{ text?: string }>).map((item) => item.text ?? '').join('');
const pluginTools = (names: string[]): string[] => names.filter((name) => name.startsWith('caps__')).sort();

describeEachBackend('tools offered by the client capabilities the caller declared (issue #24)', (backend) => {
  let root: string;
  let app: App;
  let url: URL;
  const keys = new Map<Workspace, string>();
  let stop = async (): Promise<void> => undefined;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-capability-tools-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    app = await createApp(loadConfig({ QUIVER_HOME: join(root, 'home'), QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db: await backend.open() });
    await app.plugins.add(capabilityPluginFolder(join(root, 'caps')), { name: 'caps' });
    // `listing` shows every tool in tools/list; `searching` is the default search surface.
    await app.plugins.setWorkspaceExposureMode('default', 'all');
    keys.set('listing', (await app.apiKeys.create({ name: 'listing', scopes: ['mcp'] })).key);
    const searching = await app.plugins.createWorkspace({ name: 'searching' });
    await app.plugins.enable('caps', { workspace: 'searching' });
    keys.set('searching', (await app.apiKeys.create({ name: 'searching', scopes: ['mcp'], workspaceId: searching.id })).key);
    const served = await serveAppMcp(app);
    url = served.url;
    stop = served.close;
  });
  after(async () => {
    await stop();
    await app?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** One 2026-07-28 request declaring `capabilities` in its `_meta`. */
  const post = (workspace: Workspace, method: string, params: Record<string, unknown>, capabilities: Capabilities): Promise<ModernAnswer> =>
    postModern(url, keys.get(workspace)!, method, params, capabilities);

  /** An SDK 1.x client (2025-11-25) declaring `capabilities` in its initialize. */
  async function legacyClient(workspace: Workspace, capabilities: Capabilities): Promise<Client> {
    const client = new Client({ name: 'era-2025', version: '1.0.0' }, { capabilities });
    // No handlers: the plugin's tools answer at once and never ask the client anything.
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${keys.get(workspace)!}` } } }));
    return client;
  }

  const found = (result: { structuredContent?: unknown }): string[] => pluginTools(((result.structuredContent as { tools?: Array<{ name: string }> }).tools ?? []).map((tool) => tool.name));

  it('discovery records which client capabilities each tool is listed for only; a sync records them anew', async () => {
    const { rows } = await app.db.query<{ id: string }>("SELECT id FROM plugins WHERE name = 'caps'");
    const pluginId = rows[0]!.id;
    const expected = { confirm_delete: ['elicitation'], draft_and_confirm: ['elicitation', 'sampling'], summarize_topic: ['sampling'] };
    assert.deepEqual(await readToolClientRequirements(app.db, pluginId), expected);
    // Rows that disagree with the plugin are replaced by the next sync's discovery.
    assert.equal(await replaceToolClientRequirements(app.db, pluginId, { count_words: ['roots'] }, new Date()), true);
    assert.equal(await replaceToolClientRequirements(app.db, pluginId, { count_words: ['roots'] }, new Date()), false, 'the same rows: nothing written');
    await app.plugins.sync('caps');
    assert.deepEqual(await readToolClientRequirements(app.db, pluginId), expected);
  });

  it("a 2026 client's tools/list, search and call follow the capabilities each request declares", async () => {
    const listed = async (capabilities: Capabilities): Promise<string[]> => {
      const answer = await post('listing', 'tools/list', {}, capabilities);
      assert.ok(answer.result, JSON.stringify(answer));
      return pluginTools((answer.result['tools'] as Array<{ name: string }>).map((tool) => tool.name));
    };
    assert.deepEqual(await listed(NONE), ['caps__count_words']);
    assert.deepEqual(await listed(ELICITATION), ['caps__confirm_delete', 'caps__count_words']);
    assert.deepEqual(await listed(BOTH), ALL_TOOLS);
    // The same request again lists the same (a list varies by the request's own capabilities only).
    assert.deepEqual(await listed(NONE), ['caps__count_words']);

    const refused = await post('listing', 'tools/call', { name: 'caps__confirm_delete', arguments: { path: '/tmp/a' } }, NONE);
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
    assert.match(refused.error?.message ?? '', /Unknown tool: caps__confirm_delete.*'elicitation'/);
    const deleted = await post('listing', 'tools/call', { name: 'caps__confirm_delete', arguments: { path: '/tmp/a' } }, ELICITATION);
    assert.equal(textOf(deleted.result ?? {}), 'deleted /tmp/a', JSON.stringify(deleted));

    const search = async (capabilities: Capabilities): Promise<string[]> => {
      const answer = await post('searching', 'tools/call', { name: 'search_tools', arguments: { query: QUERY, limit: 10 } }, capabilities);
      assert.ok(answer.result && answer.result['isError'] !== true, JSON.stringify(answer));
      return found(answer.result as { structuredContent?: unknown });
    };
    assert.deepEqual(await search(NONE), ['caps__count_words']);
    assert.deepEqual(await search(BOTH), ALL_TOOLS);
    const through = (capabilities: Capabilities) => post('searching', 'tools/call', { name: 'call_tool', arguments: { name: 'caps__draft_and_confirm', arguments: { topic: 'tides' } } }, capabilities);
    const half = await through(ELICITATION);
    assert.equal(half.error?.code, -32602, JSON.stringify(half));
    assert.match(half.error?.message ?? '', /Unknown tool: caps__draft_and_confirm.*'sampling'/);
    assert.doesNotMatch(half.error?.message ?? '', /'elicitation'/, 'only what is missing is named');
    assert.equal(textOf((await through(BOTH)).result ?? {}), 'sent a letter about tides');
    const plain = await post('searching', 'tools/call', { name: 'call_tool', arguments: { name: 'caps__count_words', arguments: { sentence: 'one two three' } } }, NONE);
    assert.equal(textOf(plain.result ?? {}), '3 words', JSON.stringify(plain));
  });

  it('a 2025 client is offered what its session declared: listed, found and callable, or refused', async () => {
    const capable = await legacyClient('listing', BOTH);
    const bare = await legacyClient('listing', NONE);
    try {
      assert.deepEqual(pluginTools((await capable.listTools()).tools.map((tool) => tool.name)), ALL_TOOLS);
      assert.deepEqual(pluginTools((await bare.listTools()).tools.map((tool) => tool.name)), ['caps__count_words']);
      const summary = (await capable.callTool({ name: 'caps__summarize_topic', arguments: { topic: 'gulls' } })) as CallToolResult;
      assert.equal(textOf(summary), 'summary of gulls');
      await assert.rejects(bare.callTool({ name: 'caps__summarize_topic', arguments: { topic: 'gulls' } }), /Unknown tool: caps__summarize_topic.*'sampling'/);
    } finally {
      await Promise.all([capable.close(), bare.close()]);
    }

    const searcher = await legacyClient('searching', ELICITATION);
    const plainSearcher = await legacyClient('searching', NONE);
    try {
      const search = async (client: Client): Promise<string[]> => found((await client.callTool({ name: 'search_tools', arguments: { query: QUERY, limit: 10 } })) as CallToolResult);
      assert.deepEqual(await search(searcher), ['caps__confirm_delete', 'caps__count_words']);
      assert.deepEqual(await search(plainSearcher), ['caps__count_words']);
      // Nothing it may not use entered its list either (the 2025 search surface binds what it finds).
      assert.deepEqual(pluginTools((await plainSearcher.listTools()).tools.map((tool) => tool.name)).filter((name) => name !== 'caps__count_words'), []);
      const deleted = (await searcher.callTool({ name: 'call_tool', arguments: { name: 'caps__confirm_delete', arguments: { path: '/tmp/b' } } })) as CallToolResult;
      assert.equal(textOf(deleted), 'deleted /tmp/b');
      await assert.rejects(
        plainSearcher.callTool({ name: 'call_tool', arguments: { name: 'caps__confirm_delete', arguments: { path: '/tmp/b' } } }),
        /Unknown tool: caps__confirm_delete.*'elicitation'/,
      );
      assert.deepEqual(pluginTools((await plainSearcher.listTools()).tools.map((tool) => tool.name)).filter((name) => name !== 'caps__count_words'), [], 'a refused call binds nothing');
    } finally {
      await Promise.all([searcher.close(), plainSearcher.close()]);
    }
  });

  it('search fills its limit from what the caller may use, logs only that, and list_capabilities counts only that', async () => {
    const bare = await legacyClient('searching', NONE);
    const capable = await legacyClient('searching', BOTH);
    try {
      // The best match needs sampling: a bare client still gets its one result, the tool it may use.
      const query = 'summarize a topic';
      const one = async (client: Client): Promise<string[]> => found((await client.callTool({ name: 'search_tools', arguments: { query, limit: 1 } })) as CallToolResult);
      assert.deepEqual(await one(capable), ['caps__summarize_topic']);
      assert.deepEqual(await one(bare), ['caps__count_words']);
      // The selection event lists what was offered, so no outcome counts against a tool never shown.
      await app.selection.flush();
      const { rows } = await app.db.query<{ names: string[] }>(
        `SELECT ARRAY(SELECT p.name || '__' || t.name FROM unnest(e.selected_tool_ids) AS s(id) JOIN tools t ON t.id = s.id JOIN plugins p ON p.id = t.plugin_id ORDER BY 1) AS names
           FROM tool_selection_events e WHERE e.query_text = $1 ORDER BY e.created_at`,
        [query],
      );
      assert.deepEqual(
        rows.map((row) => pluginTools(row.names)),
        [['caps__summarize_topic'], ['caps__count_words']],
      );

    } finally {
      await Promise.all([capable.close(), bare.close()]);
    }

    // list_capabilities is the surface of the `capabilities` exposure mode.
    const listing = await app.plugins.createWorkspace({ name: 'capability-list' });
    await app.plugins.enable('caps', { workspace: 'capability-list' });
    await app.plugins.setWorkspaceExposureMode('capability-list', 'capabilities');
    const key = (await app.apiKeys.create({ name: 'capability-list', scopes: ['mcp'], workspaceId: listing.id })).key;
    const connect = async (capabilities: Capabilities): Promise<Client> => {
      const client = new Client({ name: 'era-2025', version: '1.0.0' }, { capabilities });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      return client;
    };
    const bareLister = await connect(NONE);
    const capableLister = await connect(BOTH);
    try {
      const counted = async (client: Client): Promise<number | undefined> => {
        const listed = (await client.callTool({ name: 'list_capabilities', arguments: {} })) as CallToolResult;
        const capabilities = (listed.structuredContent as { capabilities: Array<{ name: string; toolCount: number }> }).capabilities;
        return capabilities.find((capability) => capability.name === 'caps')?.toolCount;
      };
      assert.equal(await counted(capableLister), 4);
      assert.equal(await counted(bareLister), 1);
    } finally {
      await Promise.all([capableLister.close(), bareLister.close()]);
    }
  });
});
