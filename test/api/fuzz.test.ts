/**
 * Fuzz over every operation the real app publishes in `/openapi.json` (issue #18, "Tests"): bad
 * types, NUL bytes in body strings and keys, in query parameters and in path segments, huge
 * strings, bodies 5,000 levels deep, bad and non-UUID ids, missing and wrong content types —
 * with every key scope (admin, read, select, mcp, a tenant-bound key, no key, a bad key).
 * Nothing may answer 5xx, and afterwards the server still selects, lists tools and has stored
 * every event of the good requests sent in between. Inputs come from a seeded generator, so
 * every run sends the same requests; their count is printed.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createApi } from '../../src/api/app.ts';
import { createGatewayBackend } from '../../src/composition/gateway-backend.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { mcpRoutes } from '../../src/composition/mcp-routes.ts';

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; anyOf?: JsonSchema[] };
interface Operation {
  method: string;
  /** OpenAPI path, `{name}` for parameters. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyProperties: Record<string, JsonSchema>;
}
interface FuzzRequest {
  method: string;
  path: string;
  body?: string;
  contentType?: string;
}

/** mulberry32: a small seeded generator, so every run sends the same requests. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const DEEP_BODY = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
const DEEP_ARRAY = '['.repeat(5_000) + ']'.repeat(5_000);
const HUGE = 'h'.repeat(200_000);

/** Path values: bad ids of every shape, each already encoded for the URL. */
const BAD_PATH_VALUES = [
  'abc',
  '%00',
  'a%00b',
  'not-a-uuid',
  '00000000-0000-4000-8000-000000000000',
  '00000000-0000-0000-0000-00000000000g',
  encodeURIComponent("1'; DROP TABLE tools; --"),
  'x'.repeat(2_000),
  '%E0%A4%A',
  '..%2F..%2Fetc%2Fpasswd',
  '%F0%9F%92%A9',
  '-1',
];

function typesOf(schema: JsonSchema): string[] {
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type : [schema.type];
  return (schema.anyOf ?? []).flatMap(typesOf);
}

/** A value of a type the property does not take. */
function wrongType(schema: JsonSchema, random: () => number): unknown {
  const types = typesOf(schema);
  if (types.includes('string')) return random() < 0.5 ? 12_345 : { not: 'a string' };
  if (types.includes('integer') || types.includes('number')) return random() < 0.5 ? 'NaN' : 1e308 * 10;
  if (types.includes('boolean')) return 'yes';
  if (types.includes('array')) return { 0: 'x' };
  if (types.includes('object')) return 'an object expected';
  return [[[]]];
}

/** A value with a NUL byte where the property takes text (or in an array where it does not). */
function withNul(schema: JsonSchema): unknown {
  const types = typesOf(schema);
  if (types.includes('string')) return 'x\u0000y';
  if (types.includes('array')) return ['x\u0000'];
  if (types.includes('object')) return { ['k\u0000']: 'v' };
  return 'x\u0000';
}

/** Every bad body for an operation: JSON text and its content type. */
function badBodies(operation: Operation, random: () => number): Array<{ body: string | undefined; contentType: string | undefined }> {
  const properties = Object.entries(operation.bodyProperties);
  const every = (value: (schema: JsonSchema) => unknown) => Object.fromEntries(properties.map(([name, schema]) => [name, value(schema)]));
  const bodies: Array<{ body: string | undefined; contentType: string | undefined }> = [
    { body: undefined, contentType: 'application/json' },
    { body: '', contentType: 'application/json' },
    { body: '{"unterminated": ', contentType: 'application/json' },
    { body: JSON.stringify(every(() => 'x')), contentType: 'text/plain' },
    { body: JSON.stringify(every(() => 'x')), contentType: undefined },
    { body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
    { body: '[]', contentType: 'application/json' },
    { body: 'null', contentType: 'application/json' },
    { body: '"just a string"', contentType: 'application/json' },
    { body: JSON.stringify(every((schema) => wrongType(schema, random))), contentType: 'application/json' },
    { body: JSON.stringify({ ...every(withNul), ['key\u0000']: 1 }), contentType: 'application/json' },
    { body: JSON.stringify(every(() => HUGE)), contentType: 'application/json' },
    { body: DEEP_BODY, contentType: 'application/json' },
    { body: DEEP_ARRAY, contentType: 'application/json; charset=utf-8' },
    { body: JSON.stringify({ big: 'b'.repeat(1_100_000) }), contentType: 'application/json' },
  ];
  // One property at a time with a NUL, the others missing: reaches checks a whole-body error would hide.
  for (const [name, schema] of properties) bodies.push({ body: JSON.stringify({ [name]: withNul(schema) }), contentType: 'application/json' });
  return bodies;
}

/** Bad query strings: NUL bytes in names and values, bad types, huge values. */
function badQueries(operation: Operation): string[] {
  const names = operation.queryParams.length > 0 ? operation.queryParams : ['q'];
  const queries = ['?x=%00', '?%00=1', `?${names[0]}=${'q'.repeat(5_000)}`];
  for (const name of names) queries.push(`?${name}=%00`, `?${name}=-1`, `?${name}=abc`, `?${name}=1e999`, `?${name}=${name}&${name}=twice`);
  return queries;
}

describeEachBackend('fuzz: every operation of /openapi.json, every key scope', (backend) => {
  let app: App;
  let api: ReturnType<typeof createApi>;
  let gateway: Gateway;
  let closeGateway: () => Promise<void>;
  let home: string;
  const keys: Record<string, string | undefined> = {};
  let selectKey: string;
  let toolId: string;

  const send = async (request: FuzzRequest, key: string | undefined) => {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    const response = await api.request(request.path, {
      method: request.method,
      headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    const text = await response.text();
    return { status: response.status, text };
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-fuzz-'));
    const db = await backend.open();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    const gatewayBackend = createGatewayBackend({ db: app.db, selection: app.selection, plugins: app.plugins, supervisor: app.supervisor });
    gateway = createGateway({ backend: gatewayBackend, options: { sessions: { sweepIntervalMs: 0 } } });
    const mcp = mcpRoutes({ gateway });
    closeGateway = async () => {
      await mcp.handler.close();
      await gateway.close();
      await gatewayBackend.close();
    };
    api = createApi({ apiKeys: app.apiKeys, modules: [...app.apiModules(), mcp] });
    keys.admin = (await app.apiKeys.ensureAdminKey())!;
    keys.read = (await app.apiKeys.create({ name: 'read', scopes: ['read'] })).key;
    keys.select = (await app.apiKeys.create({ name: 'select', scopes: ['select'] })).key;
    keys.mcp = (await app.apiKeys.create({ name: 'mcp', scopes: ['mcp'] })).key;
    const workspace = (await app.plugins.listWorkspaces()).find((w) => w.name === 'default')!;
    keys.tenant = (await app.apiKeys.create({ name: 'tenant', scopes: ['read', 'select', 'mcp'], orgId: 'org-a', workspaceId: workspace.id })).key;
    keys.none = undefined;
    keys.bad = 'qvr_this_key_does_not_exist_0000000000';
    selectKey = (await app.apiKeys.create({ name: 'good traffic', scopes: ['select'] })).key;
    await app.catalog.syncPlugin({
      pluginId: 'shared',
      version: '1.0.0',
      tools: [
        { name: 'echo', description: 'Echo the given text back' },
        { name: 'lookup_weather', description: 'Current weather for a city' },
        { name: 'send_invoice', description: 'Send an invoice to a customer by email' },
      ],
    });
    toolId = (await app.catalog.getToolByQualifiedName('shared__lookup_weather')).id;
  });
  after(async () => {
    await closeGateway();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('answers no 5xx to any of them, and stays healthy', async () => {
    const random = seeded(0x18_2);
    const documentResponse = await send({ method: 'GET', path: '/openapi.json' }, undefined);
    assert.equal(documentResponse.status, 200);
    const document = JSON.parse(documentResponse.text) as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }>; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
    };
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        operations.push({
          method: method.toUpperCase(),
          path,
          pathParams: operation.parameters.filter((p) => p.in === 'path').map((p) => p.name),
          queryParams: operation.parameters.filter((p) => p.in === 'query').map((p) => p.name),
          bodyProperties: operation.requestBody?.content['application/json']?.schema.properties ?? {},
        });
      }
    }
    // The document lists the whole API, MCP included: a fuzz over fewer would prove less.
    assert.ok(operations.length >= 60, `${operations.length} operations`);
    assert.ok(operations.some((o) => o.path === '/mcp' && o.method === 'POST'));

    // Real values keep some requests going past the lookups; DELETE and disable only ever get
    // bad ids, so the fuzz never removes what the health check needs.
    const realValue: Record<string, string> = { id: 'shared', workspace: 'default', key: 'API_TOKEN', page: 'billing' };
    const fill = (operation: Operation, value: (name: string) => string) =>
      operation.path.replace(/\{([A-Za-z_]+)\}/g, (_match, name: string) => value(name));

    const requests: FuzzRequest[] = [];
    for (const operation of operations) {
      const realPath = fill(operation, (name) => (operation.path.startsWith('/internal/tool-registry/tools') ? toolId : realValue[name] ?? 'x'));
      const destructive = operation.method === 'DELETE' || operation.path.endsWith('/disable');
      const safePath = destructive ? fill(operation, () => 'not-a-uuid') : realPath;
      for (const value of BAD_PATH_VALUES) {
        requests.push({ method: operation.method, path: fill(operation, () => value) });
        // Mixed: one parameter bad, the others real.
        if (operation.pathParams.length > 1) requests.push({ method: operation.method, path: fill(operation, (name) => (name === operation.pathParams[0] ? realValue[name]! : value)) });
      }
      for (const query of badQueries(operation)) requests.push({ method: operation.method, path: `${safePath}${query}` });
      if (operation.method !== 'GET') {
        for (const { body, contentType } of badBodies(operation, random)) {
          requests.push({ method: operation.method, path: safePath, ...(body !== undefined ? { body } : {}), ...(contentType !== undefined ? { contentType } : {}) });
        }
      }
      // A path with a NUL segment after the route (`/x/%00`) and a trailing garbage segment.
      requests.push({ method: operation.method, path: `${safePath}/%00` });
    }
    // MCP: JSON-RPC with NUL bytes and absurd depth in the meta-tools' arguments.
    for (const body of mcpBodies()) requests.push({ method: 'POST', path: '/mcp', body, contentType: 'application/json' });

    const keyNames = Object.keys(keys);
    const failures: string[] = [];
    const goodEvents: string[] = [];
    let sent = 0;
    let statusCounts = new Map<number, number>();
    for (const [index, request] of requests.entries()) {
      // Every key sends the request's first variants; later ones go to a seeded choice of keys,
      // which bounds the run while every (operation, key) pair is still covered.
      const chosen = index % 3 === 0 ? keyNames : keyNames.filter(() => random() < 0.35);
      for (const keyName of chosen) {
        const response = await send(request, keys[keyName]);
        sent += 1;
        statusCounts.set(response.status, (statusCounts.get(response.status) ?? 0) + 1);
        if (response.status >= 500) {
          failures.push(`${keyName} ${request.method} ${request.path.slice(0, 120)} [${request.contentType ?? '-'}] ${(request.body ?? '').slice(0, 80)} → ${response.status} ${response.text.slice(0, 200)}`);
        }
      }
      // Good traffic in between: every one of these events must be stored at the end.
      if (index % 40 === 0) {
        const good = await send({ method: 'POST', path: '/v1/select', body: JSON.stringify({ query: 'weather in paris' }), contentType: 'application/json' }, selectKey);
        sent += 1;
        assert.equal(good.status, 200, good.text);
        goodEvents.push((JSON.parse(good.text) as { metadata: { eventId: string } }).metadata.eventId);
      }
    }
    statusCounts = new Map([...statusCounts].sort((a, b) => a[0] - b[0]));
    console.log(`fuzz [${backend.name}]: ${sent} requests over ${operations.length} operations and ${keyNames.length} keys; statuses ${JSON.stringify(Object.fromEntries(statusCounts))}`);
    assert.deepEqual(failures, [], `${failures.length} responses of 5xx`);

    // Healthy afterwards: a normal select, the tool list, and every good event stored.
    const select = await send({ method: 'POST', path: '/v1/select', body: JSON.stringify({ query: 'send an invoice' }), contentType: 'application/json' }, keys.admin);
    assert.equal(select.status, 200);
    assert.ok((JSON.parse(select.text) as { tools: Array<{ qualifiedName: string }> }).tools.some((t) => t.qualifiedName === 'shared__send_invoice'));
    const list = await send({ method: 'GET', path: '/internal/tool-registry/tools' }, keys.admin);
    assert.equal(list.status, 200);
    assert.ok((JSON.parse(list.text) as { tools: unknown[] }).tools.length >= 3);
    await app.selection.flush();
    const stored = await app.db.query<{ id: string }>('SELECT id FROM tool_selection_events WHERE id = ANY($1::uuid[])', [goodEvents]);
    assert.equal(stored.rows.length, goodEvents.length);
    assert.ok(goodEvents.length > 10);
  });
});

/** JSON-RPC bodies for `/mcp`: an initialize, then tool calls with hostile arguments (no session: each must still fail cleanly). */
function mcpBodies(): string[] {
  const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return [
    rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz\u0000', version: '1' } }),
    rpc('tools/call', { name: 'search_tools', arguments: { query: 'echo\u0000' } }),
    rpc('tools/call', { name: 'call_tool', arguments: { name: 'shared__echo\u0000', arguments: {} } }),
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"shared__echo","arguments":${DEEP_BODY}}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${DEEP_BODY}}`,
    DEEP_ARRAY,
    '{"jsonrpc":"2.0"',
  ];
}
