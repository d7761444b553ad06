/**
 * Reads, prompts and completions follow the session's slot during a canary (issue #29), end to
 * end: a real plugin from real git tags, the production gateway over Streamable HTTP, real SDK
 * sessions. With v2 as the canary at 50 %, a session in the canary bucket reads the canary's
 * resource (listed and from a template), gets its prompt and its completions, and calls its tool;
 * a session outside it gets v1 for all of them, round after round for the whole step. With v3,
 * whose notes resource is declared differently, that resource stays on the stable slot for every
 * session (it waits for promotion) while its prompt and template still follow the bucket.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { serveHttp, type HttpServer } from '../../src/composition/server.ts';
import { bucketOf } from '../../src/rollouts/index.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createTaggedRepo } from './helpers.ts';

const PERCENT = 50;

describeEachBackend('resources, prompts and completions routed by slot (issue #29)', (backend) => {
  let home: string;
  let app: App;
  let server: HttpServer;
  let key: string;
  let pluginId: string;
  const clients: Client[] = [];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-surface-routing-'));
    await chmod(home, 0o755);
    const remote = await createTaggedRepo(join(home, 'repo'), [
      { tag: 'v1', version: '1.0.0', tools: ['add', 'echo'] },
      { tag: 'v2', version: '2.0.0', tools: ['add', 'echo'] },
      { tag: 'v3', version: '3.0.0', tools: ['add', 'echo'], noteDescription: 'Notes, rewritten.' },
    ]);
    const env = {
      QUIVER_HOME: home,
      QUIVER_DATABASE_URL: 'memory://',
      QUIVER_LOG_LEVEL: 'silent',
      QUIVER_VERIFY_ON_INSTALL: 'off',
      QUIVER_ROLLOUT_STEPS: `${PERCENT},100`,
      // One step lasts the whole test: the split must hold, not move.
      QUIVER_ROLLOUT_STEP_WINDOW_MS: '3600000',
    };
    app = await createApp(loadConfig(env), { db: await backend.open() });
    await app.plugins.add(remote, { name: 'calc', ref: 'v1' });
    await app.plugins.setWorkspaceExposureMode('default', 'all');
    pluginId = (await app.plugins.show('calc')).plugin.id;
    server = await serveHttp(app, { host: '127.0.0.1', port: 0 });
    key = (await app.apiKeys.create({ name: 'surface agent', scopes: ['mcp'] })).key;
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await server?.close();
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  async function open(): Promise<{ client: Client; sessionId: string }> {
    const client = new Client({ name: 'surface-routing', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    clients.push(client);
    return { client, sessionId: transport.sessionId! };
  }

  /** One canary-bucket session and one stable one (sessions are opened until both exist). */
  async function pair(): Promise<{ canary: Client; stable: Client }> {
    let canary: Client | undefined;
    let stable: Client | undefined;
    for (let opened = 0; (canary === undefined || stable === undefined) && opened < 64; opened++) {
      const session = await open();
      if (bucketOf(pluginId, session.sessionId) < PERCENT) canary ??= session.client;
      else stable ??= session.client;
    }
    assert.ok(canary && stable, 'both buckets found');
    return { canary, stable };
  }

  const version = (text: string) => /\(v([^)]+)\)/.exec(text)?.[1];

  /** What one session gets from the plugin now: its notes resource, a template read, the prompt, a completion and the tool. */
  async function observe(client: Client) {
    const { resources } = await client.listResources();
    const notes = resources.find((resource) => resource.name === 'notes');
    const { resourceTemplates } = await client.listResourceTemplates();
    const topic = resourceTemplates.find((template) => template.name === 'note-topic');
    const { prompts } = await client.listPrompts();
    const explain = prompts.find((prompt) => prompt.name.endsWith('explain'));
    assert.ok(notes && topic && explain, JSON.stringify({ resources, resourceTemplates, prompts }));
    const read = await client.readResource({ uri: notes.uri });
    const fromTemplate = await client.readResource({ uri: new UriTemplate(topic.uriTemplate).expand({ topic: 'sums' }) });
    const prompt = await client.getPrompt({ name: explain.name, arguments: { a: '2' } });
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: explain.name }, argument: { name: 'a', value: '' } });
    const { tools } = await client.listTools();
    const add = tools.find((tool) => tool.name.endsWith('add'))!;
    const call = (await client.callTool({ name: add.name, arguments: { a: 2, b: 3 } })) as CallToolResult;
    const textOf = (contents: ReadonlyArray<object>) => contents.map((content) => ('text' in content ? String(content.text) : '')).join('');
    return {
      resource: version(textOf(read.contents)),
      template: version(textOf(fromTemplate.contents)),
      prompt: version(prompt.messages.map((message) => (message.content.type === 'text' ? message.content.text : '')).join('')),
      completion: completion.completion.values[0]?.replace(/^v/, ''),
      tool: version(call.content.map((part) => (part.type === 'text' ? part.text : '')).join('')),
    };
  }

  const everything = (value: string) => ({ resource: value, template: value, prompt: value, completion: value, tool: value });

  it('a canary session reads, prompts and completes on the canary, a stable one on the stable slot, for the whole step', async () => {
    await app.rollouts.upgrade('calc', { ref: 'v2' });
    const { canary, stable } = await pair();
    for (let round = 0; round < 4; round++) {
      assert.deepEqual(await observe(canary), everything('2.0.0'), `canary session, round ${round}`);
      assert.deepEqual(await observe(stable), everything('1.0.0'), `stable session, round ${round}`);
    }
    await app.rollouts.rollback('calc', 'next case');
  });

  it('a resource the canary declares differently stays on the stable slot for every session until promotion', async () => {
    await app.rollouts.upgrade('calc', { ref: 'v3' });
    const view = await app.rollouts.status('calc');
    const canarySlot = view.slots.find((slot) => slot.status === 'canary')!;
    assert.deepEqual(canarySlot.routableSurface, { resources: [], templates: ['calc://notes/{topic}'], prompts: ['explain'] });
    const { canary, stable } = await pair();
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(await observe(canary), { ...everything('3.0.0'), resource: '1.0.0' }, `canary session, round ${round}`);
      assert.deepEqual(await observe(stable), everything('1.0.0'), `stable session, round ${round}`);
    }
    await app.rollouts.promote('calc');
    assert.deepEqual(await observe(stable), everything('3.0.0'), 'after promotion every session gets the new version');
  });
});
