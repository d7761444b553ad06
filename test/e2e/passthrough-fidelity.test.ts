/**
 * Issue #12: what a plugin declares reaches the client unchanged through `quiver serve
 * --stdio` — real installs (a folder plugin declaring every optional MCP field, and the
 * reference server-everything from npm), the real catalog on both databases, a real SDK
 * client; in exposure mode `all` and after a search binds the tools. Also `call_tool` from a
 * fresh session (clients that open a session per call) and its refusal of hidden tools.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, type CallToolResult, type McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { RICH_PROMPTS, RICH_RESOURCES, RICH_TOOLS, createRichPluginFolder } from './fixtures/rich-server.ts';

const everythingDir = new URL('../../node_modules/@modelcontextprotocol/server-everything/', import.meta.url).pathname;
const everythingVersion = (JSON.parse(readFileSync(join(everythingDir, 'package.json'), 'utf8')) as { version: string }).version;

/** The reference server's own tools/list and one structured call, straight from node_modules. */
async function everythingDirect(): Promise<{ tools: Tool[]; structured: CallToolResult }> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(everythingDir, 'dist/index.js'), 'stdio'], stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    const structured = (await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } })) as CallToolResult;
    return { tools, structured };
  } finally {
    await client.close();
  }
}

/** The tool as Quiver must list it: every declared field, under its qualified name. */
const qualified = (plugin: string, tool: Tool | (typeof RICH_TOOLS)[number]) => ({ ...tool, name: `${plugin}__${tool.name}` });

describeEachBackend('MCP fields pass through quiver serve --stdio', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let direct: { tools: Tool[]; structured: CallToolResult };

  /** One `quiver serve --stdio` session for `body` (one at a time: the embedded store has one owner). */
  async function withSession(flags: string[], body: (client: Client) => Promise<void>): Promise<void> {
    const client = new Client({ name: 'fidelity', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', ...flags], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }),
    );
    try {
      await body(client);
    } finally {
      await client.close();
    }
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-fidelity-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    store = await processStore(backend);
    Object.assign(env, store.env);
    await createRichPluginFolder(root, 'rich');
    const [rich, everything] = await Promise.all([
      runBinary(['plugin', 'add', join(root, 'rich'), '--name', 'rich'], env, 120_000),
      everythingDirect(),
    ]);
    assert.equal(rich.code, 0, rich.stderr);
    direct = everything;
    const added = await runBinary(['plugin', 'add', `npm:@modelcontextprotocol/server-everything@${everythingVersion}`, '--name', 'everything'], env, 300_000);
    assert.equal(added.code, 0, added.stderr);
    assert.equal((await runBinary(['workspace', 'create', 'other'], env)).code, 0);
  });

  after(async () => {
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('exposure all: tools/list carries every declared field; prompts and resources too; structuredContent untouched', () =>
    withSession(['--exposure', 'all'], async (client) => {
    const listed = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    for (const tool of RICH_TOOLS) assert.deepEqual(listed.get(`rich__${tool.name}`), qualified('rich', tool));
    assert.ok(direct.tools.some((tool) => tool.outputSchema !== undefined && tool.name === 'get-structured-content'));
    for (const tool of direct.tools) assert.deepEqual(listed.get(`everything__${tool.name}`), qualified('everything', tool), tool.name);

    const weather = (await client.callTool({ name: 'rich__weather', arguments: { city: 'Oslo' } })) as CallToolResult;
    assert.deepEqual(weather.structuredContent, { city: 'Oslo', celsius: 21.5 });
    assert.deepEqual(weather._meta, { 'example.com/source': 'fixture' });
    const structured = (await client.callTool({ name: 'everything__get-structured-content', arguments: { location: 'New York' } })) as CallToolResult;
    assert.deepEqual(structured.structuredContent, direct.structured.structuredContent);

    const prompts = (await client.listPrompts()).prompts.filter((prompt) => prompt.name.startsWith('rich__'));
    assert.deepEqual(prompts, RICH_PROMPTS.map((prompt) => ({ ...prompt, name: `rich__${prompt.name}` })));
    const resources = (await client.listResources()).resources.filter((resource) => resource.uri.startsWith('quiver://rich/'));
    assert.deepEqual(resources, RICH_RESOURCES.map((resource) => ({ ...resource, uri: `quiver://rich/${encodeURIComponent(resource.uri)}` })));
    }));

  it('search mode: a search binds the tools with every declared field, and calls keep structuredContent', () =>
    withSession([], async (client) => {
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'weather in a city as structured data', limit: 5 } })) as CallToolResult;
    assert.match(JSON.stringify(found.structuredContent), /rich__weather/);
    const again = (await client.callTool({ name: 'search_tools', arguments: { query: 'get structured content', limit: 5 } })) as CallToolResult;
    assert.match(JSON.stringify(again.structuredContent), /everything__get-structured-content/);
    const listed = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(listed.get('rich__weather'), qualified('rich', RICH_TOOLS[0]!));
    const reference = direct.tools.find((tool) => tool.name === 'get-structured-content')!;
    assert.deepEqual(listed.get('everything__get-structured-content'), qualified('everything', reference));
    const viaCallTool = (await client.callTool({ name: 'call_tool', arguments: { name: 'rich__weather', arguments: { city: 'Bergen' } } })) as CallToolResult;
    assert.deepEqual(viaCallTool.structuredContent, { city: 'Bergen', celsius: 21.5 });
    const bound = (await client.callTool({ name: 'everything__get-structured-content', arguments: { location: 'New York' } })) as CallToolResult;
    assert.deepEqual(bound.structuredContent, direct.structured.structuredContent);
    }));

  /** The refusal of a `call_tool` call, with the tool's name masked. */
  const refusal = async (client: Client, name: string) => {
    const error = await client.callTool({ name: 'call_tool', arguments: { name, arguments: { city: 'Oslo' } } }).then(
      () => assert.fail(`${name} ran`),
      (caught: McpError) => caught,
    );
    return { code: error.code, message: error.message.replace(name, 'NAME') };
  };

  it('call_tool from a fresh session runs a visible tool it never searched for, and binds it', () =>
    withSession([], async (client) => {
      assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'rich__weather'));
      const result = (await client.callTool({ name: 'call_tool', arguments: { name: 'rich__weather', arguments: { city: 'Tromsø' } } })) as CallToolResult;
      assert.deepEqual(result.structuredContent, { city: 'Tromsø', celsius: 21.5 });
      assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'rich__weather'));
    }));

  it('call_tool refuses a tool of another workspace exactly as one that does not exist', () =>
    withSession(['--workspace', 'other'], async (client) => {
      const hidden = await refusal(client, 'rich__weather');
      assert.equal(hidden.code, ErrorCode.InvalidParams);
      assert.deepEqual(hidden, await refusal(client, 'rich__no_such_tool'));
    }));
});
