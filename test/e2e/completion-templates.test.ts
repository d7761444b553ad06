/**
 * Issue #12: resource templates, `completion/complete` and resource URIs inside results,
 * through the production gateway over Streamable HTTP to two real plugin processes, on both
 * databases. Prefixed sessions see Quiver's addresses (`quiver://<plugin>/…`, templates with
 * their `{…}` kept); native-name sessions see the plugins' own. Either way a URI a template
 * makes, and a URI a tool or prompt pointed to, is read from the plugin that owns it; and
 * `search_tools` names tools as the session calls them.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend } from '../helpers/backends.ts';
import { startSurfaceGateway, type SurfaceGateway } from './fixtures/surface-gateway.ts';

const text = (result: { contents: Array<{ uri: string; text?: unknown }> }) => result.contents.map((content) => [content.uri, content.text]);

describeEachBackend('templates, completion and URIs in results through the gateway', (backend) => {
  let surface: SurfaceGateway;
  before(async () => {
    surface = await startSurfaceGateway(await backend.open());
  });
  after(async () => {
    await surface?.close();
  });

  it('initialize declares completions and resource subscriptions', async () => {
    const client = await surface.connect('default');
    const capabilities = client.getServerCapabilities();
    assert.deepEqual(capabilities?.completions, {});
    assert.equal(capabilities?.resources?.subscribe, true);
  });

  it('prefixed: templates in Quiver form, and a URI expanded from one reads the plugin resource', async () => {
    const client = await surface.connect('default');
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), ['quiver://north/north%3A%2F%2Fnotes%2F{id}', 'quiver://south/south%3A%2F%2Fnotes%2F{id}']);
    const north = resourceTemplates.find((t) => t.uriTemplate.startsWith('quiver://north/'))!;
    assert.equal(north.name, 'note');
    assert.equal(north.mimeType, 'text/plain');
    const uri = new UriTemplate(north.uriTemplate).expand({ id: '42' });
    assert.deepEqual(text(await client.readResource({ uri })), [[uri, 'note 42 of north']]);
    // The plugin's own URI is not an address in a prefixed session.
    await assert.rejects(client.readResource({ uri: 'north://notes/42' }), (error: McpError) => error.code === ErrorCode.InvalidParams);
  });

  it('native names: the plugin templates as they are, read by the URI they make', async () => {
    const client = await surface.connect('native');
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), ['north://notes/{id}', 'south://notes/{id}']);
    assert.deepEqual(text(await client.readResource({ uri: 'south://notes/9' })), [['south://notes/9', 'note 9 of south']]);
    // Quiver's form still works; the answer names the resource as the session is shown it.
    assert.deepEqual(text(await client.readResource({ uri: 'quiver://north/north%3A%2F%2Fnotes%2F3' })), [['north://notes/3', 'note 3 of north']]);
    await assert.rejects(client.readResource({ uri: 'east://notes/1' }), /Unknown resource: east:\/\/notes\/1/);
  });

  it('completion: a prompt and a template reach their plugin in its own terms, with the context', async () => {
    const prefixed = await surface.connect('default');
    const prompt = await prefixed.complete({ ref: { type: 'ref/prompt', name: 'south__cite' }, argument: { name: 'topic', value: 'ge' }, context: { arguments: { lang: 'en' } } });
    assert.deepEqual(prompt.completion.values, ['prompt:cite', 'topic=ge', 'context={"lang":"en"}']);
    const template = await prefixed.complete({ ref: { type: 'ref/resource', uri: 'quiver://north/north%3A%2F%2Fnotes%2F{id}' }, argument: { name: 'id', value: '4' } });
    assert.deepEqual(template.completion.values, ['resource:north://notes/{id}', 'id=4', 'context={}']);

    const native = await surface.connect('native');
    const nativePrompt = await native.complete({ ref: { type: 'ref/prompt', name: 'north__cite' }, argument: { name: 'topic', value: '' } });
    assert.equal(nativePrompt.completion.values[0], 'prompt:cite');
    const nativeTemplate = await native.complete({ ref: { type: 'ref/resource', uri: 'south://notes/{id}' }, argument: { name: 'id', value: '1' } });
    assert.deepEqual(nativeTemplate.completion.values.slice(0, 2), ['resource:south://notes/{id}', 'id=1']);
  });

  it('completion of something no plugin serves is InvalidParams, not an internal error', async () => {
    const client = await surface.connect('default');
    await assert.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'nobody__cite' }, argument: { name: 'topic', value: '' } }), (error: McpError) => error.code === ErrorCode.InvalidParams);
    await assert.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'no-separator' }, argument: { name: 'topic', value: '' } }), /Unknown prompt: no-separator/);
    await assert.rejects(client.complete({ ref: { type: 'ref/resource', uri: 'file:///x/{y}' }, argument: { name: 'y', value: '' } }), /Unknown resource template/);
  });

  it('URIs inside a tool result become addresses the session reads', async () => {
    for (const [workspace, link, memo] of [
      ['default', 'quiver://north/north%3A%2F%2Fnotes%2F7', 'quiver://north/north%3A%2F%2Fmemo'],
      ['native', 'north://notes/7', 'north://memo'],
    ] as const) {
      const client = await surface.connect(workspace);
      const result = (await client.callTool({ name: workspace === 'default' ? 'north__pointers_north' : 'pointers_north' })) as CallToolResult;
      const [linkItem, embedded, note] = result.content;
      assert.deepEqual(linkItem, { type: 'resource_link', uri: link, name: 'note 7', mimeType: 'text/plain' });
      assert.deepEqual(embedded, { type: 'resource', resource: { uri: memo, mimeType: 'text/plain', text: 'memo of north' } });
      assert.deepEqual(note, { type: 'text', text: 'two pointers' });
      assert.deepEqual(text(await client.readResource({ uri: link })), [[link, 'note 7 of north']]);
      assert.deepEqual(text(await client.readResource({ uri: memo })), [[memo, 'memo of north']]);
    }
  });

  it("URIs embedded in a prompt's messages are rewritten too", async () => {
    const client = await surface.connect('default');
    const prompt = await client.getPrompt({ name: 'south__cite', arguments: { topic: 'x' } });
    assert.deepEqual(prompt.messages[0]?.content, { type: 'resource', resource: { uri: 'quiver://south/south%3A%2F%2Fmemo', mimeType: 'text/plain', text: 'memo of south' } });
  });

  it('search_tools names each tool as the session calls it: native where unambiguous, prefixed on a collision', async () => {
    const client = await surface.connect('finder');
    const search = async (query: string) =>
      ((await client.callTool({ name: 'search_tools', arguments: { query, limit: 10 } })) as CallToolResult).structuredContent as { tools: Array<{ name: string; plugin: string }> };
    const pointers = (await search('link to note 7 and the embedded memo')).tools.filter((tool) => tool.name.includes('pointers'));
    assert.deepEqual(pointers.map((tool) => [tool.name, tool.plugin]).sort(), [['pointers_north', 'north'], ['pointers_south', 'south']]);
    const about = (await search('tells which surface plugin answered')).tools.filter((tool) => tool.name.endsWith('about'));
    assert.deepEqual(about.map((tool) => tool.name).sort(), ['north__about', 'south__about']);
    // The names search showed are the names tools/list shows and calls take.
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['pointers_north', 'north__about']) assert.ok(listed.includes(name), `${name} in ${listed.join(', ')}`);
    const called = (await client.callTool({ name: 'pointers_south' })) as CallToolResult;
    assert.deepEqual(called.content.at(-1), { type: 'text', text: 'two pointers' });
  });
});
