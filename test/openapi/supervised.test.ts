/**
 * An OpenAPI plugin under the real supervisor (issue #14: "timeouts, breakers and rate limits
 * as for any plugin"): the generated server is connected in process, calls produce call
 * events, an API that cannot be reached opens the breaker (later calls never leave Quiver),
 * a plugin rate limit refuses the call over budget, and the call timeout aborts a hanging
 * request at the API. Real HTTP servers on 127.0.0.1; the committed Petstore document.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isQuiverError } from '../../src/core/errors.ts';
import { readOpenApiDocument } from '../../src/openapi/index.ts';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import type { CallEvent, UpstreamSpecInput } from '../../src/runtime/types.ts';
import { startPetstore, type PetstoreServer } from './petstore-server.ts';

const fixture = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));
const API_KEY = `key-${randomBytes(6).toString('hex')}`;

describe('OpenAPI plugin under the supervisor', () => {
  let folder: string;
  let document: string;
  let petstore: PetstoreServer;
  let hanging: Server;
  let hangingUrl: string;
  const closedRequests: string[] = [];
  const events: CallEvent[] = [];
  const supervisor = createSupervisor({ startTimeoutMs: 5_000, defaultTimeoutMs: 5_000, onCall: (event) => events.push(event) });

  const spec = (id: string, baseUrl: string, execution: UpstreamSpecInput['execution'] = {}): UpstreamSpecInput => ({
    pluginId: id,
    pluginName: id,
    version: '1.0.0',
    trustLevel: 'UNVERIFIED',
    transport: 'openapi',
    document,
    baseUrl,
    env: { OPENAPI_API_KEY: API_KEY },
    // The test APIs listen on loopback, allowed as an admin would (issue #23 address guard).
    allowInternal: [{ host: '127.0.0.1', port: Number(new URL(baseUrl).port) }],
    execution,
  });

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'quiver-openapi-supervised-'));
    document = join(folder, 'openapi.json');
    writeFileSync(document, JSON.stringify((await readOpenApiDocument(fixture)).document));
    petstore = await startPetstore({ apiKey: API_KEY, accessToken: 'unused-token' });
    hanging = createServer((request) => request.on('close', () => closedRequests.push(request.url ?? '')));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v2`;
  });
  after(async () => {
    await supervisor.close();
    await petstore.close();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
    rmSync(folder, { recursive: true, force: true });
  });

  it('lists and calls the generated tools in process, with call events', async () => {
    const tools = await supervisor.listTools(spec('store', petstore.baseUrl));
    assert.equal(tools.length, 20);
    const result = (await supervisor.callTool(spec('store', petstore.baseUrl), 'getInventory', {})) as CallToolResult;
    assert.deepEqual(result.structuredContent, {});
    const event = events.find((candidate) => candidate.pluginId === 'store' && candidate.tool === 'getInventory');
    assert.equal(event?.outcome, 'success');
  });

  it('opens the breaker when the API cannot be reached; later calls are refused without a request', async () => {
    const down = spec('down', 'http://127.0.0.1:1/v2', { circuitBreakerConfig: { failureThreshold: 2, successThreshold: 1, timeout: 60_000, halfOpenRequests: 1 } });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await assert.rejects(supervisor.callTool(down, 'getInventory', {}), (error) => isQuiverError(error) && /cannot reach the API/.test(error.message) && !error.message.includes(API_KEY));
    }
    await assert.rejects(supervisor.callTool(down, 'getInventory', {}), (error) => isQuiverError(error, 'circuit_open'));
    assert.deepEqual(events.filter((event) => event.pluginId === 'down').map((event) => event.outcome), ['error', 'error', 'rejected']);
  });

  it('applies the plugin rate limit', async () => {
    const limited = spec('limited', petstore.baseUrl, { rateLimits: { plugin: { requestsPerMinute: 1, burst: 1 }, tools: {} } });
    const before = petstore.requests.length;
    await supervisor.callTool(limited, 'getInventory', {});
    await assert.rejects(supervisor.callTool(limited, 'getInventory', {}), (error) => isQuiverError(error, 'rate_limited'));
    assert.equal(petstore.requests.length, before + 1, 'the refused call never reached the API');
  });

  it('times out a hanging API and aborts the HTTP request', async () => {
    const slow = spec('slow', hangingUrl, { timeoutRecommendation: 300 });
    const started = Date.now();
    await assert.rejects(supervisor.callTool(slow, 'getInventory', {}), (error) => isQuiverError(error, 'timeout'));
    assert.ok(Date.now() - started < 3_000);
    for (let wait = 0; wait < 50 && closedRequests.length === 0; wait += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(closedRequests, ['/v2/store/inventory'], 'the request was aborted, not left hanging');
  });
});
