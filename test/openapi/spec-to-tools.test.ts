/**
 * OpenAPI documents → bundled document → MCP tool definitions (issue #14), on the committed
 * real Petstore documents (3.0 YAML and 3.1 JSON) and on small hand-made documents for
 * references across files, cycles, escapes out of the folder, names and schema conversion.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openApiToolDefinitions, readOpenApiDocument, EXTERNAL_MEMBER, sanitizeToolName } from '../../src/openapi/index.ts';
import { defaultNameHint, parsePluginSource } from '../../src/plugins/sources.ts';

const fixtures = fileURLToPath(new URL('../fixtures/openapi/', import.meta.url));

function minimal(paths: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { openapi: '3.0.3', info: { title: 'T', version: '1' }, paths, ...extra };
}

describe('OpenAPI → tool definitions', () => {
  let folder: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'quiver-openapi-'));
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('turns every Petstore 3.0 (YAML) and 3.1 (JSON) operation into a tool with schemas, annotations and security', async () => {
    for (const file of ['petstore.yaml', 'petstore-3.1.json']) {
      const { document } = await readOpenApiDocument(join(fixtures, file));
      const set = openApiToolDefinitions(document);
      assert.equal(set.tools.length, 20, file);
      assert.deepEqual(set.warnings, []);
      const byName = new Map(set.tools.map((tool) => [tool.name, tool]));
      const getPet = byName.get('getPetById')!;
      assert.equal(getPet.operation.method, 'get');
      assert.deepEqual(getPet.inputSchema.required, ['petId']);
      assert.equal((getPet.inputSchema.properties as any).petId.type, 'integer');
      assert.deepEqual(getPet.operation.security, [['api_key']]);
      assert.equal(getPet.annotations.readOnlyHint, true);
      assert.equal(getPet.outputSchema?.type, 'object');
      assert.ok((getPet.outputSchema?.properties as any).name, 'output schema is the Pet schema, $ref inlined');
      const deletePet = byName.get('deletePet')!;
      assert.equal(deletePet.annotations.destructiveHint, true);
      assert.equal(deletePet.annotations.idempotentHint, true);
      assert.deepEqual(deletePet.operation.parameters.map((p) => `${p.in}:${p.name}`).sort(), ['header:api_key', 'path:petId']);
      const addPet = byName.get('addPet')!;
      assert.equal(addPet.operation.body?.mediaType, 'application/json');
      assert.equal(addPet.annotations.readOnlyHint, false);
      assert.equal(addPet.annotations.destructiveHint, false);
      assert.equal(addPet.annotations.idempotentHint, undefined);
      assert.deepEqual((addPet.inputSchema.properties as any).body.required, ['name', 'photoUrls']);
      assert.deepEqual(byName.get('updatePetWithForm')!.operation.body?.mediaType, 'application/x-www-form-urlencoded');
      assert.deepEqual(byName.get('uploadFile')!.operation.body?.mediaType, file === 'petstore.yaml' ? 'multipart/form-data' : 'application/octet-stream');
      const byStatus = byName.get('findPetsByStatus')!;
      assert.equal(byStatus.operation.wrapsResult, true, 'an array response is wrapped as {result}');
      assert.equal((byStatus.outputSchema?.properties as any).result.type, 'array');
      assert.equal(set.securitySchemes['api_key']?.in, 'header');
      assert.equal(set.securitySchemes['petstore_auth']?.type, 'oauth2');
      // Every schema compiles with the validator MCP clients use.
      const validator = new AjvJsonSchemaValidator();
      for (const tool of set.tools) {
        validator.getValidator(tool.inputSchema as never);
        if (tool.outputSchema) validator.getValidator(tool.outputSchema as never);
      }
    }
  });

  it('converts OpenAPI 3.0 schema dialect: nullable, example, boolean exclusive bounds; names without operationId', () => {
    const set = openApiToolDefinitions(
      minimal({
        '/items/{item-id}': {
          parameters: [{ name: 'item-id', in: 'path', required: true, schema: { type: 'string' }, example: 'a1' }],
          get: {
            parameters: [
              { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0, exclusiveMinimum: true, nullable: true, example: 5 } },
              { name: 'Accept', in: 'header', schema: { type: 'string' } },
              { name: 'item-id', in: 'header', schema: { type: 'string' } },
            ],
            responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'string' } } } } },
          },
          delete: { operationId: 'remove item!!  now', responses: { '204': { description: 'gone' } } },
          post: { operationId: 'remove item!!  now', responses: { '201': { description: 'made' } } },
        },
      }),
    );
    const [get, del, post] = set.tools;
    assert.equal(get!.name, 'get_items_item-id');
    assert.deepEqual(Object.keys(get!.inputSchema.properties as object), ['item-id', 'limit', 'header_item-id'], 'Accept is ignored, a clash gets its location');
    assert.deepEqual((get!.inputSchema.properties as any).limit, { type: ['integer', 'null'], exclusiveMinimum: 0, examples: [5] });
    assert.deepEqual(get!.examples, [{ arguments: { 'item-id': 'a1', limit: 5 } }]);
    assert.equal(del!.name, 'remove_item_now');
    assert.equal(post!.name, 'remove_item_now_2', 'duplicate names are made unique');
    assert.equal(get!.description, '(HTTP GET /items/{item-id})');
    const servers = openApiToolDefinitions(minimal({}, { servers: [{ url: 'https://{region}.api.example.com/{version}', variables: { region: { default: 'eu' }, version: { default: 'v2', enum: ['v1', 'v2'] } } }, { url: '/relative' }] })).servers;
    assert.deepEqual(servers, ['https://eu.api.example.com/v2', '/relative'], 'server variables take their defaults');
    assert.equal(sanitizeToolName('a__b/c d'.repeat(20)).length <= 64, true);
    assert.ok(!sanitizeToolName('x__y').includes('__'));
  });

  it('bundles $refs to files in the folder, keeps cycles finite, and refuses refs out of the folder', async () => {
    const api = join(folder, 'api');
    await mkdir(join(api, 'schemas'), { recursive: true });
    await writeFile(join(api, 'schemas', 'node.yaml'), 'Node:\n  type: object\n  properties:\n    name: {type: string}\n    children:\n      type: array\n      items: {$ref: "#/Node"}\n    owner: {$ref: "./owner.json"}\n');
    await writeFile(join(api, 'schemas', 'owner.json'), JSON.stringify({ type: 'object', properties: { id: { type: 'integer' } } }));
    await writeFile(
      join(api, 'root.yaml'),
      'openapi: 3.1.0\ninfo: {title: Tree, version: "2"}\npaths:\n  /tree:\n    post:\n      operationId: plant\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema: {$ref: "schemas/node.yaml#/Node"}\n      responses:\n        "200":\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: "#/components/schemas/Local"}\ncomponents:\n  schemas:\n    Local: {type: object, properties: {ok: {type: boolean}}}\n',
    );
    const bundled = await readOpenApiDocument(join(api, 'root.yaml'));
    assert.deepEqual(bundled.files.sort(), ['schemas/node.yaml', 'schemas/owner.json']);
    assert.ok(bundled.document[EXTERNAL_MEMBER]);
    assert.ok(!JSON.stringify(bundled.document).includes('.yaml#'), 'every $ref is internal');
    const [plant] = openApiToolDefinitions(bundled.document).tools;
    const body = (plant!.inputSchema.properties as any).body;
    assert.equal(body.properties.owner.properties.id.type, 'integer');
    assert.match(body.properties.children.items.description, /recursive: Node/);
    assert.deepEqual(plant!.outputSchema, { type: 'object', properties: { ok: { type: 'boolean' } } });

    await writeFile(join(folder, 'secret.json'), '{"type":"string"}');
    await writeFile(join(api, 'escape.json'), JSON.stringify(minimal({ '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: '../secret.json' } } } } } } } })));
    await assert.rejects(readOpenApiDocument(join(api, 'escape.json')), /outside the OpenAPI document's folder/);
    await symlink(join(folder, 'secret.json'), join(api, 'link.json'));
    await writeFile(join(api, 'linked.json'), JSON.stringify(minimal({ '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: 'link.json' } } } } } } } })));
    await assert.rejects(readOpenApiDocument(join(api, 'linked.json')), /outside its folder/);
    await writeFile(join(api, 'absolute.json'), JSON.stringify(minimal({ '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: '/etc/passwd' } } } } } } } })));
    await assert.rejects(readOpenApiDocument(join(api, 'absolute.json')), /absolute/);
    await writeFile(join(api, 'dangling.json'), JSON.stringify(minimal({ '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } } } } } })));
    await assert.rejects(readOpenApiDocument(join(api, 'dangling.json')), /unresolvable \$ref.*Nope/);
  });

  it('refuses documents that are not OpenAPI 3 and oversized files', async () => {
    assert.throws(() => openApiToolDefinitions({ swagger: '2.0', paths: {} }), /Swagger 2.0 documents are not supported/);
    assert.throws(() => openApiToolDefinitions({ openapi: '4.0.0', paths: {} }), /not an OpenAPI 3.0 or 3.1 document/);
    await writeFile(join(folder, 'big.json'), JSON.stringify(minimal({}, { padding: 'x'.repeat(2000) })));
    await assert.rejects(readOpenApiDocument(join(folder, 'big.json'), { maxBytes: 1000 }), /larger than 1000 bytes/);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 3000; level += 1) deep = { type: 'object', properties: { next: deep } };
    const [tool] = openApiToolDefinitions(minimal({ '/deep': { post: { requestBody: { content: { 'application/json': { schema: deep } } }, responses: {} } } })).tools;
    assert.ok(JSON.stringify(tool!.inputSchema).length < 5_000, 'a deeply nested schema is cut, not followed to the bottom');
    await writeFile(join(folder, 'deep.json'), `{"openapi":"3.0.0","x-deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    await assert.rejects(readOpenApiDocument(join(folder, 'deep.json')), (error: unknown) => (error as { code?: string }).code === 'invalid_input' && /nested too deeply|neither valid JSON/.test((error as Error).message));
    await writeFile(join(folder, 'broken.yaml'), 'openapi: [3\n');
    await assert.rejects(readOpenApiDocument(join(folder, 'broken.yaml')), /neither valid JSON nor valid YAML/);
  });

  it('reads a document by URL with $refs under the same directory only', async () => {
    const files: Record<string, string> = {
      '/specs/v1/openapi.json': JSON.stringify(minimal({ '/a': { get: { responses: { '200': { description: 'a', content: { 'application/json': { schema: { $ref: 'common.json#/Thing' } } } } } } } })),
      '/specs/v1/common.json': JSON.stringify({ Thing: { type: 'object', properties: { id: { type: 'integer' } } } }),
      '/specs/v1/up.json': JSON.stringify(minimal({ '/a': { get: { responses: { '200': { description: 'a', content: { 'application/json': { schema: { $ref: '../secret.json' } } } } } } } })),
      '/specs/v1/away.json': JSON.stringify(minimal({ '/a': { get: { responses: { '200': { description: 'a', content: { 'application/json': { schema: { $ref: 'http://169.254.169.254/latest.json' } } } } } } } })),
      '/specs/secret.json': '{"type":"string"}',
    };
    const server: Server = createServer((request, response) => {
      const body = files[request.url ?? ''];
      if (body === undefined) response.writeHead(404).end();
      else response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/specs/v1`;
    try {
      const bundled = await readOpenApiDocument(`${base}/openapi.json`);
      assert.deepEqual(bundled.files, ['common.json']);
      assert.equal((openApiToolDefinitions(bundled.document).tools[0]!.outputSchema?.properties as any).id.type, 'integer');
      await assert.rejects(readOpenApiDocument(`${base}/up.json`), /leads outside .*\/specs\/v1\/; refused/);
      await assert.rejects(readOpenApiDocument(`${base}/away.json`), /leads outside/);
      await assert.rejects(readOpenApiDocument(`${base}/nothing.json`), /answered HTTP 404/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("parses 'openapi:' plugin sources and derives readable names", () => {
    const file = parsePluginSource('openapi: specs/petstore.yaml', '/srv');
    assert.deepEqual(file, { kind: 'openapi', location: '/srv/specs/petstore.yaml' });
    assert.equal(defaultNameHint(file), 'petstore');
    const url = parsePluginSource('openapi:https://api.example.com/v1/openapi.json');
    assert.deepEqual(url, { kind: 'openapi', location: 'https://api.example.com/v1/openapi.json' });
    assert.equal(defaultNameHint(url), 'api.example.com-v1');
    assert.throws(() => parsePluginSource('openapi:'), /'openapi:' needs an OpenAPI document/);
  });
});
