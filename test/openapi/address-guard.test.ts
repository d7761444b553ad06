/**
 * OpenAPI plugins cannot reach inside (issue #23): loopback, private, link-local and the hub's
 * own addresses are refused as base URLs and as resolved targets, before any connection; a name
 * is resolved once and the connection goes to the checked address (no DNS rebinding); a redirect
 * is checked again; an admin-allowed exact destination works. All traffic stays on loopback:
 * the "public" API is a loopback server on 127.0.0.2 that an injected resolver names and the
 * test marks as public (there is no internet here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeOperation } from '../../src/openapi/execute.ts';
import { InternalAddressError, checkDestination, type AddressGuardOptions, type ResolvedAddress } from '../../src/openapi/address-guard.ts';
import { internalAddressKind } from '../../src/core/internal-address.ts';
import { openApiToolDefinitions } from '../../src/openapi/operations.ts';

const document = {
  openapi: '3.0.3',
  info: { title: 'Inside', version: '1' },
  servers: [{ url: 'http://127.0.0.1:1' }],
  paths: { '/secret': { get: { operationId: 'secret', responses: { '200': { description: 'ok' } } } } },
};
const toolSet = openApiToolDefinitions(document);
const tool = toolSet.tools[0]!;

async function listen(server: Server, address: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return (server.address() as AddressInfo).port;
}

describe('OpenAPI address guard', () => {
  const hits: string[] = [];
  // The internal service: answers its secret to whoever reaches it.
  const inside = createServer((request, response) => {
    hits.push(`inside ${request.url}`);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"db-password"}');
  });
  // The "public" API (127.0.0.2, marked public for the test): redirects to the inside.
  let insidePort = 0;
  const outside = createServer((request, response) => {
    hits.push(`outside ${request.url}`);
    if (request.url === '/api/secret' && request.headers.host?.startsWith('public.test')) {
      return void response.writeHead(302, { location: `http://127.0.0.1:${insidePort}/secret` }).end();
    }
    if (request.url === '/hop/secret') return void response.writeHead(302, { location: '/again/secret' }).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"public":true}');
  });
  let outsidePort = 0;

  before(async () => {
    insidePort = await listen(inside, '127.0.0.1');
    outsidePort = await listen(outside, '127.0.0.2');
  });
  after(async () => {
    inside.closeAllConnections();
    outside.closeAllConnections();
    await Promise.all([new Promise((r) => inside.close(r)), new Promise((r) => outside.close(r))]);
  });

  const call = (baseUrl: string, guard: AddressGuardOptions) =>
    executeOperation(tool, {}, { baseUrl, securitySchemes: toolSet.securitySchemes, credentials: {}, guard: { pluginName: 'inside-api', ...guard }, timeoutMs: 5_000 });

  const refusedNaming = (address: string, kind: RegExp) => (error: unknown) => {
    assert.ok(error instanceof InternalAddressError, `expected a refusal, got ${String(error)}`);
    assert.equal(error.address, address);
    assert.match(error.addressKind, kind);
    assert.match(error.message, new RegExp(`is ${address.replace(/\./g, '\\.')}, a `));
    assert.match(error.message, /quiver plugin allow inside-api /);
    return true;
  };

  it('classifies loopback, private, ULA, link-local, metadata, CGNAT, unspecified and mapped addresses; public ones pass', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', 'fd00::1', '169.254.169.254', 'fe80::1', '100.64.0.1', '0.0.0.0', '::', '::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      assert.notEqual(internalAddressKind(address), undefined, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1', '100.128.0.1']) assert.equal(internalAddressKind(address), undefined, address);
  });

  it("refuses a spec whose server URL is loopback, naming the address and how to allow it; the service sees nothing", async () => {
    hits.length = 0;
    await assert.rejects(call(`http://127.0.0.1:${insidePort}`, {}), refusedNaming('127.0.0.1', /loopback/));
    assert.deepEqual(hits, []);
  });

  it('refuses a private base URL before connecting (no resolver, no socket)', async () => {
    let resolved = 0;
    const resolve = async (): Promise<ResolvedAddress[]> => (resolved++, []);
    await assert.rejects(call('http://10.20.30.40:8080/v1', { resolve }), refusedNaming('10.20.30.40', /private/));
    await assert.rejects(call('http://169.254.169.254/latest', { resolve }), refusedNaming('169.254.169.254', /link-local/));
    await assert.rejects(call('http://[fd12::5]:8080', { resolve }), refusedNaming('fd12::5', /unique local/));
    assert.equal(resolved, 0);
  });

  it('refuses a name that resolves to loopback (the system resolver and an injected one)', async () => {
    hits.length = 0;
    await assert.rejects(call(`http://localhost:${insidePort}`, {}), (error: unknown) => error instanceof InternalAddressError && /localhost resolves to/.test(error.message));
    const resolve = async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.1', family: 4 }];
    await assert.rejects(call(`http://api.partner.test:${insidePort}`, { resolve }), refusedNaming('127.0.0.1', /loopback/));
    // A name with one public and one internal answer is refused too.
    const mixed = async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }];
    await assert.rejects(call(`http://api.partner.test:${insidePort}`, { resolve: mixed, treatAsPublic: ['127.0.0.2'] }), refusedNaming('127.0.0.1', /loopback/));
    assert.deepEqual(hits, []);
  });

  it('re-checks a redirect from a public origin to loopback: refused, the inside never reached', async () => {
    hits.length = 0;
    const resolve = async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.2', family: 4 }];
    await assert.rejects(call(`http://public.test:${outsidePort}/api`, { resolve, treatAsPublic: ['127.0.0.2'] }), (error: unknown) => {
      assert.match(String(error), /127\.0\.0\.1/);
      return true;
    });
    assert.deepEqual(hits, ['outside /api/secret'], 'the public API answered, the inside was never contacted');
  });

  it('connects to the address it checked: a name rebinding to loopback between hops is refused', async () => {
    hits.length = 0;
    const answers = ['127.0.0.2', '127.0.0.1'];
    const resolve = async (): Promise<ResolvedAddress[]> => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }];
    await assert.rejects(call(`http://rebind.test:${outsidePort}/hop`, { resolve, treatAsPublic: ['127.0.0.2'] }), refusedNaming('127.0.0.1', /loopback/));
    assert.deepEqual(hits, ['outside /hop/secret']);
  });

  it('reaches an allow-listed loopback destination (exact host and port only)', async () => {
    hits.length = 0;
    const result = await call(`http://127.0.0.1:${insidePort}`, { allow: [{ host: '127.0.0.1', port: insidePort }] });
    assert.deepEqual(result.structuredContent, { secret: 'db-password' });
    await assert.rejects(call(`http://127.0.0.1:${insidePort}`, { allow: [{ host: '127.0.0.1', port: insidePort + 1 }] }), refusedNaming('127.0.0.1', /loopback/));
    assert.deepEqual(hits, ['inside /secret']);
  });

  it("refuses this machine's own addresses (where the hub listens)", async () => {
    const own = () => new Set(['203.0.113.7']);
    await assert.rejects(checkDestination(new URL('http://203.0.113.7:8080/'), { ownAddresses: own }), (error: unknown) => error instanceof InternalAddressError && /the hub's/.test(error.message));
  });
});
