/**
 * Executing OpenAPI operations against a real local HTTP server (node:http): path, query,
 * header, cookie and body serialization; bearer, basic and API-key credentials; JSON, text and
 * form bodies; 4xx/5xx as tool errors; timeouts; redirects to another host refused; oversized
 * responses; and the generated MCP server over the SDK's in-memory transport.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { applyCredentials, openApiToolDefinitions } from '../../src/openapi/index.ts';
import { executeOperation, OpenApiCallError } from '../../src/openapi/execute.ts';
import { createOpenApiServer } from '../../src/openapi/server.ts';
import type { OpenApiToolSet } from '../../src/openapi/types.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const json = { 'application/json': { schema: { type: 'object', additionalProperties: true } } };
const document = {
  openapi: '3.0.3',
  info: { title: 'Echo', version: '1' },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      basic: { type: 'http', scheme: 'basic' },
      headerKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      queryKey: { type: 'apiKey', in: 'query', name: 'key' },
      cookieKey: { type: 'apiKey', in: 'cookie', name: 'session' },
    },
  },
  paths: {
    '/items/{id}': {
      post: {
        operationId: 'echo',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
          { name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'pref', in: 'cookie', schema: { type: 'string' } },
        ],
        requestBody: { content: json },
        responses: { '200': { description: 'ok', content: json } },
      },
    },
    '/bearer': { get: { operationId: 'bearer', security: [{ bearer: [] }], responses: { '200': { description: 'ok', content: json } } } },
    '/basic': { get: { operationId: 'basic', security: [{ basic: [] }], responses: { '200': { description: 'ok', content: json } } } },
    '/keys': { get: { operationId: 'keys', security: [{ headerKey: [], queryKey: [] }, { cookieKey: [] }], responses: { '200': { description: 'ok', content: json } } } },
    '/text': { get: { operationId: 'text', responses: { '200': { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } } } },
    '/form': {
      post: {
        operationId: 'form',
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } } } } } },
        responses: { '200': { description: 'ok', content: json } },
      },
    },
    '/upload': {
      post: {
        operationId: 'upload',
        requestBody: { content: { 'multipart/form-data': { schema: { type: 'object', properties: { note: { type: 'string' }, file: { type: 'string', format: 'binary' } } } } } },
        responses: { '200': { description: 'ok', content: json } },
      },
    },
    '/status/{code}': { get: { operationId: 'status', security: [{ bearer: [] }], parameters: [{ name: 'code', in: 'path', required: true, schema: { type: 'integer' } }], responses: { '200': { description: 'ok' } } } },
    '/slow': { get: { operationId: 'slow', responses: { '200': { description: 'ok' } } } },
    '/away': { get: { operationId: 'away', responses: { '200': { description: 'ok' } } } },
    '/hop': { get: { operationId: 'hop', responses: { '200': { description: 'ok', content: json } } } },
    '/big': { get: { operationId: 'big', responses: { '200': { description: 'ok' } } } },
    '/list': { get: { operationId: 'list', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { type: 'integer' } } } } } } } },
    '/liar': { get: { operationId: 'liar', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } } } } } },
  },
};

describe('OpenAPI execution against a real HTTP server', () => {
  let server: HttpServer;
  let base: string;
  let seen: Seen[] = [];
  let toolSet: OpenApiToolSet;
  const tool = (name: string) => toolSet.tools.find((candidate) => candidate.name === name)!;

  before(async () => {
    toolSet = openApiToolDefinitions(document);
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entry = { method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        seen.push(entry);
        const path = new URL(request.url!, 'http://x').pathname;
        if (path === '/api/text') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('plain words');
        if (path.startsWith('/api/status/')) {
          const code = Number(path.split('/').pop());
          return void response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `failed with token ${request.headers['authorization'] ?? 'none'}`, pad: 'x'.repeat(3000) }));
        }
        if (path === '/api/slow') return void setTimeout(() => response.writeHead(200).end('late'), 2_000).unref();
        if (path === '/api/away') return void response.writeHead(302, { location: 'http://localhost:1/steal' }).end();
        if (path === '/api/hop') return void response.writeHead(303, { location: '/api/bearer' }).end();
        if (path === '/api/big') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(5000));
        if (path === '/api/list') return void response.writeHead(200, { 'content-type': 'application/json' }).end('[1,2,3]');
        if (path === '/api/liar') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"not a number"}');
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(entry));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // The test API listens on loopback, which OpenAPI plugins may reach only where an admin allowed it (issue #23).
  const guard = () => ({ allow: [{ host: '127.0.0.1', port: Number(new URL(base).port) }, { host: '127.0.0.1', port: 1 }] });
  const settings = (credentials: Record<string, string> = {}, extra: object = {}) => ({ baseUrl: base, securitySchemes: toolSet.securitySchemes, credentials, guard: guard(), ...extra });

  it('sends path, query, header, cookie and JSON body parameters, encoded', async () => {
    seen = [];
    const result = await executeOperation(
      tool('echo'),
      { id: '../a b/c', tags: ['x', 'y z'], filter: { color: 'red' }, 'X-Trace': 't-1', pref: 'dark mode', body: { name: 'Rex', n: 2 } },
      settings(),
    );
    assert.equal(result.isError, undefined);
    const request = seen[0]!;
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/api/items/%2E%2E%2Fa%20b%2Fc?tags=x&tags=y+z&filter%5Bcolor%5D=red');
    assert.equal(request.headers['x-trace'], 't-1');
    assert.equal(request.headers['cookie'], 'pref=dark%20mode');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body), { name: 'Rex', n: 2 });
    assert.equal((result.structuredContent as any).method, 'POST', 'a JSON object response is the structured content');
    assert.equal(result.content[0]!.type, 'text');
  });

  it('authenticates with bearer, basic and API keys (header, query, cookie), the per-scheme secret winning', async () => {
    seen = [];
    await executeOperation(tool('bearer'), {}, settings({ OPENAPI_BEARER_TOKEN: 'generic-token', OPENAPI_BEARER_TOKEN_X: 'unused' }));
    assert.equal(seen[0]!.headers['authorization'], 'Bearer generic-token');
    await executeOperation(tool('basic'), {}, settings({ OPENAPI_BASIC_USERNAME: 'ann', OPENAPI_BASIC_PASSWORD: 'pw:1', OPENAPI_USERNAME: 'other' }));
    assert.equal(seen[1]!.headers['authorization'], `Basic ${Buffer.from('ann:pw:1').toString('base64')}`);
    await executeOperation(tool('keys'), {}, settings({ OPENAPI_HEADERKEY_KEY: 'hk', OPENAPI_QUERYKEY_KEY: 'qk' }));
    assert.equal(seen[2]!.headers['x-api-key'], 'hk');
    assert.equal(seen[2]!.url, '/api/keys?key=qk');
    await executeOperation(tool('keys'), {}, settings({ OPENAPI_COOKIEKEY_KEY: 'ck' }));
    assert.equal(seen[3]!.headers['cookie'], 'session=ck', 'the second alternative when the first cannot be met');
    const missing = await executeOperation(tool('bearer'), {}, settings());
    assert.equal(missing.isError, true);
    assert.match((missing.content[0] as any).text, /OPENAPI_BEARER_TOKEN/);
    assert.equal(seen.length, 4, 'nothing is sent without the credentials');
  });

  it('chooses among security alternatives: anonymous allowed by {}, mutual TLS refused, unknown schemes fail closed', () => {
    const schemes = { ...toolSet.securitySchemes, tls: { name: 'tls', type: 'mutualTLS' as const } };
    assert.deepEqual(applyCredentials([['bearer'], []], schemes, {}), { applied: { headers: {}, query: [], cookies: [] } });
    assert.deepEqual(applyCredentials([['tls']], schemes, {}), { missing: ["(mutual TLS scheme 'tls' is not supported)"] });
    const unknown = openApiToolDefinitions({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: { '/x': { get: { security: [{ nope: [] }], responses: {} } } } });
    assert.match(unknown.warnings[0]!, /unknown security scheme nope/);
    assert.ok('missing' in applyCredentials(unknown.tools[0]!.operation.security, unknown.securitySchemes, { OPENAPI_BEARER_TOKEN: 'x' }));
  });

  it('returns text, sends form and multipart bodies, wraps non-object JSON', async () => {
    seen = [];
    const text = await executeOperation(tool('text'), {}, settings());
    assert.deepEqual(text.content, [{ type: 'text', text: 'plain words' }]);
    assert.equal(text.structuredContent, undefined);
    await executeOperation(tool('form'), { body: { name: 'a&b', n: 3 } }, settings());
    assert.equal(seen[1]!.body, 'name=a%26b&n=3');
    assert.equal(seen[1]!.headers['content-type'], 'application/x-www-form-urlencoded');
    await executeOperation(tool('upload'), { body: { note: 'hi', file: 'file bytes' } }, settings());
    assert.match(String(seen[2]!.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.match(seen[2]!.body, /name="note"\r\n\r\nhi/);
    const list = await executeOperation(tool('list'), {}, settings());
    assert.deepEqual(list.structuredContent, { result: [1, 2, 3] });
  });

  it('turns 4xx and 5xx into tool errors with the status and a bounded, redacted excerpt', async () => {
    for (const code of [404, 503]) {
      const result = await executeOperation(tool('status'), { code }, settings({ OPENAPI_BEARER_TOKEN: 'sekret-token-1' }));
      assert.equal(result.isError, true);
      const message = (result.content[0] as any).text as string;
      assert.match(message, new RegExp(`^HTTP ${code} .*from GET /status/\\{code\\}: \\{"message":"failed with token Bearer \\[redacted\\]"`));
      assert.ok(!message.includes('sekret-token-1'));
      assert.ok(message.length < 1_200, 'the body excerpt is bounded');
    }
  });

  it('times out, refuses other hosts (also by redirect), follows same-host redirects, caps response size', async () => {
    await assert.rejects(executeOperation(tool('slow'), {}, settings({}, { timeoutMs: 200 })), (error: unknown) => error instanceof OpenApiCallError && error.code === 'timeout');
    seen = [];
    await assert.rejects(executeOperation(tool('away'), {}, settings()), /localhost:1 is not the API's host/);
    assert.equal(seen.length, 1, 'the redirect target is never contacted');
    const hop = await executeOperation(tool('hop'), {}, settings({ OPENAPI_BEARER_TOKEN: 'tok-after-hop' }));
    assert.equal((hop.structuredContent as any).url, '/api/bearer');
    await assert.rejects(executeOperation(tool('big'), {}, settings({}, { maxResponseBytes: 1000 })), /larger than 1000 bytes/);
    await assert.rejects(executeOperation(tool('text'), {}, settings({}, { baseUrl: 'http://127.0.0.1:1/api' })), (error: unknown) => error instanceof OpenApiCallError && error.code === 'unavailable');
  });

  it('serves the tools as an MCP server: list, call, bad arguments, contract breaches', async () => {
    const mcp = createOpenApiServer({ toolSet, name: 'echo', version: '1', baseUrl: base, credentials: { OPENAPI_BEARER_TOKEN: 'abc12345' }, guard: guard() });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, toolSet.tools.length);
      assert.equal(tools.find((t) => t.name === 'bearer')?.annotations?.readOnlyHint, true);
      const result = await client.callTool({ name: 'bearer', arguments: {} });
      assert.equal((result.structuredContent as any).headers.authorization, 'Bearer abc12345');
      await assert.rejects(client.callTool({ name: 'echo', arguments: { id: 5 } }), /invalid arguments for 'echo'/);
      await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), /unknown tool 'nope'/);
      const liar = await client.callTool({ name: 'liar', arguments: {} });
      assert.equal(liar.isError, true);
      assert.match(JSON.stringify(liar.content), /does not match its OpenAPI description/);
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});
