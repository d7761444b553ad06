/**
 * Issue #14 end to end: the committed, real Swagger Petstore document installed as a plugin
 * with the real CLI (`quiver plugin add openapi:FILE --base-url URL --secret …`), served by a
 * REST server written for the test, and every one of its 20 operations called through
 * `quiver serve --stdio` from an MCP SDK client, with the API key and OAuth token from plugin
 * secrets. A copy installed with a wrong key gives a clean tool error; the pinned document keeps
 * working after the original file is gone. Both databases. The install commands run through
 * the CLI's own entry (`runCli`) in this process, and the gateway as a real child process:
 * one process start per backend keeps the file well under a minute on a busy machine.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { QUIVER_BIN, runInProcess } from '../helpers/cli.ts';
import { startPetstore, type PetstoreServer } from './petstore-server.ts';

const fixture = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));
const API_KEY = `key-${randomBytes(6).toString('hex')}`;
const TOKEN = `token-${randomBytes(8).toString('hex')}`;

describeEachBackend('OpenAPI plugin through quiver serve --stdio', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let petstore: PetstoreServer;

  async function withSession(body: (client: Client) => Promise<void>): Promise<void> {
    const client = new Client({ name: 'openapi-e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'], env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }),
    );
    try {
      await body(client);
    } finally {
      await client.close();
    }
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-openapi-e2e-'));
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    store = await processStore(backend);
    Object.assign(env, store.env);
    // Also served at /openapi.json with a relative server URL, as the Swagger Petstore serves itself.
    const served = parseYaml(readFileSync(fixture, 'utf8')) as Record<string, unknown>;
    petstore = await startPetstore({ apiKey: API_KEY, accessToken: TOKEN }, { document: JSON.stringify({ ...served, servers: [{ url: '/v2' }] }) });
  });

  after(async () => {
    await petstore?.close();
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('installs the Petstore document with the real CLI, pinned, secrets never printed', async () => {
    // A copy that is deleted afterwards: the plugin must not need the original again.
    const copy = join(root, 'petstore.yaml');
    copyFileSync(fixture, copy);
    const added = await runInProcess(
      ['plugin', 'add', `openapi:${copy}`, '--base-url', petstore.baseUrl, '--secret', `OPENAPI_API_KEY=${API_KEY}`, '--secret', `OPENAPI_PETSTORE_AUTH_TOKEN=${TOKEN}`],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /installed petstore 1\.0\.0 \(openapi\) — 20 tools/);
    assert.ok(!added.stdout.includes(TOKEN) && !added.stderr.includes(TOKEN));
    const wrongKey = await runInProcess(['plugin', 'add', `openapi:${copy}`, '--name', 'wrong-key', '--base-url', petstore.baseUrl, '--secret', 'OPENAPI_API_KEY=not-the-key'], env);
    assert.equal(wrongKey.code, 0, wrongKey.stderr);
    // The test API listens on loopback: refused to OpenAPI plugins until an admin allows it (issue #23).
    for (const name of ['petstore', 'wrong-key']) {
      const allowed = await runInProcess(['plugin', 'allow', name, new URL(petstore.baseUrl).host, '--reason', 'the test API on loopback'], env);
      assert.equal(allowed.code, 0, allowed.stderr);
    }
    rmSync(copy);
    const shown = await runInProcess(['plugin', 'show', 'petstore', '--json'], env);
    assert.equal(shown.code, 0, shown.stderr);
    const details = JSON.parse(shown.stdout) as { plugin?: { sourceType: string; source: Record<string, unknown> }; sourceType?: string; source?: Record<string, unknown> };
    const plugin = details.plugin ?? details;
    assert.equal(plugin.sourceType, 'openapi');
    assert.equal(plugin.source!['baseUrl'], petstore.baseUrl);
    assert.match(String(plugin.source!['cachePath']), /openapi/);
    assert.deepEqual(plugin.source!['secrets'], { petstore_auth: ['OPENAPI_PETSTORE_AUTH_TOKEN', 'OPENAPI_BEARER_TOKEN'], api_key: ['OPENAPI_API_KEY_KEY', 'OPENAPI_API_KEY'] });
    assert.ok(!shown.stdout.includes(TOKEN) && !shown.stdout.includes(API_KEY));
  });

  it('calls every operation through the gateway with the API key and OAuth token; a wrong key is a clean tool error', () =>
    withSession(async (client) => {
      const listed = (await client.listTools()).tools.filter((tool) => tool.name.startsWith('petstore__'));
      assert.equal(listed.length, 20);
      assert.equal(listed.find((tool) => tool.name === 'petstore__deletePet')?.annotations?.destructiveHint, true);
      const called = new Set<string>();
      const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
        const result = (await client.callTool({ name: `petstore__${name}`, arguments: args })) as CallToolResult;
        assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
        called.add(`petstore__${name}`);
        return result;
      };
      const pet = { name: 'Rex', photoUrls: ['https://example.com/rex.png'], status: 'available', tags: [{ id: 1, name: 'good' }] };
      const added = await call('addPet', { body: pet });
      const petId = (added.structuredContent as { id?: number } | undefined)?.id ?? (JSON.parse((added.content[0] as { text: string }).text) as { id: number }).id;
      await call('updatePet', { body: { ...pet, id: petId, category: { id: 2, name: 'dogs' } } });
      assert.equal(((await call('findPetsByStatus', { status: ['available'] })).structuredContent as { result: unknown[] }).result.length, 1);
      assert.equal(((await call('findPetsByTags', { tags: ['good'] })).structuredContent as { result: unknown[] }).result.length, 1);
      assert.equal(((await call('getPetById', { petId })).structuredContent as { category: { name: string } }).category.name, 'dogs');
      await call('updatePetWithForm', { petId, body: { name: 'Rex II', status: 'sold' } });
      assert.match(((await call('uploadFile', { petId, body: { additionalMetadata: 'front view', file: 'PNG bytes' } })).structuredContent as { message: string }).message, /front view/);
      assert.deepEqual((await call('getInventory', {})).structuredContent, { sold: 1 });
      await call('placeOrder', { body: { id: 7, petId, quantity: 1, status: 'placed', complete: false } });
      assert.equal(((await call('getOrderById', { orderId: 7 })).structuredContent as { status: string }).status, 'placed');
      await call('deleteOrder', { orderId: 7 });
      await call('createUser', { body: { username: 'ann', password: 'pw-ann', email: 'ann@example.com' } });
      await call('createUsersWithArrayInput', { body: [{ username: 'bob', password: 'pw-bob' }] });
      await call('createUsersWithListInput', { body: [{ username: 'cy', password: 'pw-cy' }] });
      assert.deepEqual((await call('loginUser', { username: 'ann', password: 'pw-ann' })).structuredContent, { result: 'logged in user session:ann' });
      await call('logoutUser', {});
      assert.equal(((await call('getUserByName', { username: 'ann' })).structuredContent as { email: string }).email, 'ann@example.com');
      await call('updateUser', { username: 'ann', body: { username: 'ann', password: 'pw-ann', firstName: 'Ann' } });
      await call('deleteUser', { username: 'bob' });
      await call('deletePet', { petId, api_key: 'ignored-by-server' });
      assert.deepEqual([...called].sort(), listed.map((tool) => tool.name).sort(), 'every operation was called');
      const getPet = petstore.requests.find((request) => request.method === 'GET' && request.path === `/v2/pet/${petId}`)!;
      assert.equal(getPet.headers['api_key'], API_KEY);
      assert.equal(petstore.requests.find((request) => request.path === '/v2/pet/findByStatus')!.headers['authorization'], `Bearer ${TOKEN}`);
      assert.equal(petstore.requests.find((request) => request.path === '/v2/user/login')!.headers['authorization'], undefined, 'no credentials where none are required');
      // An HTTP error from the API is a tool error with its status.
      const missing = (await client.callTool({ name: 'petstore__getPetById', arguments: { petId: 999 } })) as CallToolResult;
      assert.equal(missing.isError, true);
      assert.match((missing.content[0] as { text: string }).text, /^HTTP 404 .*Pet not found/);

      // The copy installed with a wrong key: the API's 401 as a clean tool error, the key never shown.
      const refused = (await client.callTool({ name: 'wrong-key__getInventory', arguments: {} })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.match((refused.content[0] as { text: string }).text, /^HTTP 401 .*unauthorized/);
      assert.ok(!JSON.stringify(refused).includes('not-the-key'));
      // Its OAuth token was never set: nothing is sent, and the error names the secret to set.
      const before = petstore.requests.length;
      const unset = (await client.callTool({ name: 'wrong-key__findPetsByStatus', arguments: { status: ['sold'] } })) as CallToolResult;
      assert.equal(unset.isError, true);
      assert.match((unset.content[0] as { text: string }).text, /needs credentials that are not set: OPENAPI_PETSTORE_AUTH_TOKEN/);
      assert.equal(petstore.requests.length, before);
    }));

  it('update re-reads the original document (a new operation arrives); sync keeps the pinned copy; a URL document with a relative server', async () => {
    const document = parseYaml(readFileSync(fixture, 'utf8')) as { paths: Record<string, unknown> };
    document.paths['/health'] = { get: { operationId: 'health', summary: 'Is the API up', responses: { '200': { description: 'up' } } } };
    writeFileSync(join(root, 'petstore.yaml'), stringifyYaml(document));
    const synced = await runInProcess(['plugin', 'sync', 'petstore'], env);
    assert.equal(synced.code, 0, synced.stderr);
    assert.match(synced.stdout, /— 20 tools: 0 new/, 'sync re-discovers the pinned copy, not the changed original');
    const updated = await runInProcess(['plugin', 'update', 'petstore'], env);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /— 21 tools: 1 new, 0 changed, 0 removed, 20 unchanged/);
    // A document fetched by URL: its relative server URL is resolved against the document's URL.
    // The document's host is loopback, which the SSRF guard admits only when told (issue #27).
    const documentUrl = `openapi:${new URL('/openapi.json', petstore.baseUrl).href}`;
    const refused = await runInProcess(['plugin', 'add', documentUrl, '--name', 'by-url'], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/);
    const byUrl = await runInProcess(['plugin', 'add', documentUrl, '--name', 'by-url'], { ...env, QUIVER_REMOTE_ALLOW_ADDRESSES: 'loopback' });
    assert.equal(byUrl.code, 0, byUrl.stderr);
    assert.match(byUrl.stdout, /installed by-url 1\.0\.0 \(openapi\) — 20 tools/);
    const shown = JSON.parse((await runInProcess(['plugin', 'show', 'by-url', '--json'], env)).stdout) as { plugin?: { source: Record<string, unknown> }; source?: Record<string, unknown> };
    assert.equal((shown.plugin ?? shown).source!['baseUrl'], petstore.baseUrl);
    const broken = await runInProcess(['plugin', 'add', `openapi:${join(root, 'missing.yaml')}`, '--name', 'missing', '--base-url', petstore.baseUrl], env);
    assert.notEqual(broken.code, 0);
    assert.match(broken.stderr, /reading the OpenAPI document failed: .*does not exist/);
  });
});
