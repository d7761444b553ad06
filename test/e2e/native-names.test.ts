/**
 * Issue #12, native names: a workspace set to `--native-names on` shows tools, prompts and
 * resources under their plugins' own names where no other plugin uses them; collisions keep
 * the `plugin__` prefix (and the CLI says why). Two real folder plugins sharing a tool, a
 * prompt and a resource URI, installed with the real CLI on both databases, reached by a
 * real SDK client through `quiver serve --stdio`; calls by native name reach the right plugin.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GATEWAY_TOOL_NAMES, nativeNaming } from '../../src/core/native-names.ts';
import { META_TOOL_NAMES } from '../../src/gateway/meta-tools.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { createTwinPluginFolder } from './fixtures/twin-server.ts';

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const sorted = (names: string[]) => [...names].sort();

describe('native naming rule', () => {
  it('keeps a name prefixed when two plugins serve it, when it is a gateway tool, or another item\'s prefixed name', () => {
    const naming = nativeNaming(
      [
        { pluginName: 'a', name: 'echo', prefixed: 'a__echo' },
        { pluginName: 'b', name: 'echo', prefixed: 'b__echo' },
        { pluginName: 'a', name: 'search_tools', prefixed: 'a__search_tools' },
        { pluginName: 'b', name: 'a__echo', prefixed: 'b__a__echo' },
        { pluginName: 'b', name: 'solo', prefixed: 'b__solo' },
      ],
      GATEWAY_TOOL_NAMES,
    );
    assert.deepEqual([...naming.byNative], [['solo', 'b__solo']]);
    assert.deepEqual(
      naming.keptPrefixed.map((kept) => [kept.prefixed, kept.reason]),
      [
        ['a__echo', "'echo' is served by 2 plugins: a, b"],
        ['a__search_tools', "'search_tools' is the name of a gateway tool"],
        ['b__a__echo', "'a__echo' is another item's prefixed name"],
        ['b__echo', "'echo' is served by 2 plugins: a, b"],
      ],
    );
    assert.equal(naming.shown.get('a__echo'), 'a__echo');
    assert.equal(naming.shown.get('b__solo'), 'solo');
  });

  it("the core's gateway tool names are the gateway's meta-tools", () => {
    assert.deepEqual(sorted([...GATEWAY_TOOL_NAMES]), sorted([...META_TOOL_NAMES]));
  });
});

describeEachBackend('native names through quiver serve --stdio', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;

  async function withSession(flags: string[], body: (client: Client) => Promise<void>): Promise<void> {
    const client = new Client({ name: 'native-names', version: '1.0.0' });
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
    root = mkdtempSync(join(tmpdir(), 'quiver-native-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folders
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    store = await processStore(backend);
    Object.assign(env, store.env);
    for (const label of ['alpha', 'beta']) {
      await createTwinPluginFolder(root, label);
      const added = await runBinary(['plugin', 'add', join(root, label), '--name', label], env, 120_000);
      assert.equal(added.code, 0, added.stderr);
    }
  });

  after(async () => {
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('off by default: every name keeps its prefix', () =>
    withSession(['--exposure', 'all'], async (client) => {
      assert.deepEqual(sorted((await client.listTools()).tools.map((t) => t.name)), ['alpha__echo', 'alpha__only_alpha', 'beta__echo', 'beta__only_beta']);
      assert.deepEqual(sorted((await client.listPrompts()).prompts.map((p) => p.name)), ['alpha__hello', 'alpha__p_alpha', 'beta__hello', 'beta__p_beta']);
      await assert.rejects(client.callTool({ name: 'only_alpha', arguments: {} }), /Unknown tool: only_alpha/);
    }));

  it('the CLI turns native names on and reports which names kept the prefix and why', async () => {
    const set = await runBinary(['workspace', 'set', 'default', '--exposure', 'all', '--native-names', 'on'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /native names on/);
    assert.match(set.stdout, /kept prefixed: alpha__echo \('echo' is served by 2 plugins: alpha, beta\)/);
    assert.match(set.stdout, /kept prefixed: beta__echo/);
    const report = await runBinary(['workspace', 'names', 'default', '--json'], env);
    assert.equal(report.code, 0, report.stderr);
    const parsed = JSON.parse(report.stdout) as { nativeNames: boolean; native: Array<{ name: string; prefixed: string }>; keptPrefixed: Array<{ prefixed: string }> };
    assert.equal(parsed.nativeNames, true);
    assert.deepEqual(parsed.native, [{ name: 'only_alpha', prefixed: 'alpha__only_alpha' }, { name: 'only_beta', prefixed: 'beta__only_beta' }]);
    assert.deepEqual(parsed.keptPrefixed.map((k) => k.prefixed), ['alpha__echo', 'beta__echo']);
  });

  it('on: unique names are native, collisions prefixed; calls, prompts and reads reach the right plugin', () =>
    withSession([], async (client) => {
      assert.deepEqual(sorted((await client.listTools()).tools.map((t) => t.name)), ['alpha__echo', 'beta__echo', 'only_alpha', 'only_beta']);
      assert.equal(text(await client.callTool({ name: 'only_beta', arguments: {} })), 'only_beta from beta');
      assert.equal(text(await client.callTool({ name: 'beta__echo', arguments: { text: 'hi' } })), 'echo from beta: hi');
      assert.equal(text(await client.callTool({ name: 'alpha__only_alpha', arguments: {} })), 'only_alpha from alpha', 'prefixed names still work');
      await assert.rejects(client.callTool({ name: 'echo', arguments: {} }), /Unknown tool: echo/, 'an ambiguous native name is not guessed');

      assert.deepEqual(sorted((await client.listPrompts()).prompts.map((p) => p.name)), ['alpha__hello', 'beta__hello', 'p_alpha', 'p_beta']);
      const prompt = await client.getPrompt({ name: 'p_alpha' });
      assert.deepEqual(prompt.messages[0]!.content, { type: 'text', text: 'p_alpha from alpha' });

      const uris = sorted((await client.listResources()).resources.map((r) => r.uri));
      assert.deepEqual(uris, sorted(['alpha://doc', 'beta://doc', `quiver://alpha/${encodeURIComponent('shared://doc')}`, `quiver://beta/${encodeURIComponent('shared://doc')}`]));
      const read = await client.readResource({ uri: 'beta://doc' });
      assert.deepEqual(read.contents, [{ uri: 'beta://doc', mimeType: 'text/plain', text: 'beta://doc from beta' }]);
      const shared = await client.readResource({ uri: `quiver://alpha/${encodeURIComponent('shared://doc')}` });
      assert.equal((shared.contents[0] as { text: string }).text, 'shared://doc from alpha');
    }));

  it('on, search mode: a found tool is bound and listed under its native name', () =>
    withSession(['--exposure', 'search'], async (client) => {
      await client.callTool({ name: 'search_tools', arguments: { query: 'a tool only twin beta has', limit: 5 } });
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('only_beta'), names.join(', '));
      assert.ok(!names.includes('beta__only_beta'));
      assert.equal(text(await client.callTool({ name: 'call_tool', arguments: { name: 'only_beta' } })), 'only_beta from beta');
    }));
});
