/**
 * Issue #24 through the real binary: a plugin on the v2 SDK that speaks only 2026-07-28
 * (test/fixtures/modern-plugin, `initialize` answered with -32022) is installed from a folder by
 * `quiver plugin add` (discovery in the UNVERIFIED sandbox), found by `search_tools`, and called
 * by a 2025-era SDK 1.x client over `quiver serve --stdio`. Its Multi Round-Trip Requests reach
 * that client the 2025 way (Quiver is the shim): `elicitation/create`, `sampling/createMessage`
 * and `roots/list` pushed on the call's stream, answered by the client, and the plugin retried
 * with the answers and its `requestState` (the plugin verifies the state it sealed).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { repositoryRoot } from '../runtime/helpers.ts';

/** The fixture as an installable folder: its files plus the v2 SDK packages it imports (the sandbox sees only the folder). */
function modernPluginFolder(root: string): string {
  const folder = join(root, 'modern');
  cpSync(join(repositoryRoot, 'test/fixtures/modern-plugin'), folder, { recursive: true });
  const skip = (path: string): boolean => /\.(map|d\.[cm]?ts)$/.test(path);
  for (const dependency of ['@modelcontextprotocol/server', '@modelcontextprotocol/core', 'zod']) {
    mkdirSync(join(folder, 'node_modules', dependency), { recursive: true });
    cpSync(join(repositoryRoot, 'node_modules', dependency), join(folder, 'node_modules', dependency), { recursive: true, filter: (path) => !skip(path) });
  }
  return folder;
}

const textOf = (result: CallToolResult): string => (result.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join('');

describe('a 2026-07-28 plugin through quiver serve, called by a 2025 client (issue #24)', () => {
  let root: string;
  let env: Record<string, string>;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-modern-plugin-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    const added = await runBinary(['plugin', 'add', modernPluginFolder(root), '--name', 'modern', '--json'], env, 180_000);
    assert.equal(added.code, 0, added.stderr);
    for (const tool of ['reverse_words', 'place_order', 'draft_note']) assert.match(added.stdout, new RegExp(tool), `discovered ${tool}`);
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('is found by search_tools and its input requests are answered by the calling 2025 client', { timeout: 180_000 }, async () => {
    const seen: string[] = [];
    const client = new Client({ name: 'era-2025', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(`elicitation: ${request.params.message}`);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.push(`sampling: ${JSON.stringify(request.params.messages[0]?.content)}`);
      return { role: 'assistant', content: { type: 'text', text: 'bees make honey' }, model: 'test-model' };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.push('roots');
      return { roots: [{ uri: 'file:///home/ada/notes', name: 'notes' }] };
    });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }));
    try {
      const search = (await client.callTool({ name: 'search_tools', arguments: { query: 'place an order for an item', limit: 3 } })) as CallToolResult;
      assert.ok(!search.isError, textOf(search));
      assert.match(textOf(search), /modern__place_order/);

      const plain = (await client.callTool({ name: 'call_tool', arguments: { name: 'modern__reverse_words', arguments: { sentence: 'eras two of tale a' } } })) as CallToolResult;
      assert.equal(textOf(plain), 'a tale of two eras', textOf(plain));

      const ordered = (await client.callTool({ name: 'call_tool', arguments: { name: 'modern__place_order', arguments: { item: 'tea' } } })) as CallToolResult;
      assert.equal(textOf(ordered), 'ordered tea for Ada', textOf(ordered));
      assert.deepEqual(seen, ['elicitation: Order tea?']);

      seen.length = 0;
      const note = (await client.callTool({ name: 'call_tool', arguments: { name: 'modern__draft_note', arguments: { topic: 'bees' } } })) as CallToolResult;
      assert.equal(textOf(note), 'bees make honey @ file:///home/ada/notes', textOf(note));
      assert.deepEqual(seen.sort(), ['roots', 'sampling: {"type":"text","text":"Write a note about bees"}']);
    } finally {
      await client.close();
    }
  });
});
