/**
 * Issue #24: `Mcp-Param-*` headers a client addressed to a plugin reach a remote (HTTP) plugin.
 * The gateway runs a 2026-07-28 request inside `runWithForwardedHeaders` (tested in
 * test/gateway/mcp-headers.test.ts); here the supervisor calls Quiver's 2026-07-28 test plugin
 * (the v2 SDK's HTTP handler) inside such a context and the plugin's HTTP server records the
 * headers of the `tools/call` it received: the forwarded one is there, and not on a call made
 * outside the context.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { runWithForwardedHeaders } from '../../src/core/forwarded-headers.ts';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import type { UpstreamSpecInput } from '../../src/runtime/types.ts';
import { firstText, repositoryRoot } from './helpers.ts';

describe('Mcp-Param-* headers forwarded to an HTTP plugin (issue #24)', () => {
  it('a call inside a request context carries them; one outside does not', { timeout: 120_000 }, async () => {
    const { createServer } = (await import(pathToFileURL(join(repositoryRoot, 'test/fixtures/modern-plugin/server.mjs')).href)) as { createServer: () => never };
    const handler = createMcpHandler(createServer, { legacy: 'reject' });
    const calls: IncomingHttpHeaders[] = [];
    const server = createHttpServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        if (incoming.headers['mcp-method'] === 'tools/call') calls.push(incoming.headers);
        const headers = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        void handler.fetch(new Request(`http://127.0.0.1${incoming.url}`, { method: incoming.method, headers, ...(body && incoming.method !== 'GET' ? { body } : {}) })).then(async (response) => {
          response.headers.forEach((value, name) => outgoing.setHeader(name, value));
          outgoing.writeHead(response.status);
          const reader = response.body?.getReader();
          for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) outgoing.write(read.value);
          outgoing.end();
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const spec = { pluginId: 'modern-http', pluginName: 'modern-http', version: '1.0.0', trustLevel: 'OFFICIAL', transport: 'http', url } as UpstreamSpecInput;
    const supervisor = createSupervisor({ stopGraceMs: 100, startTimeoutMs: 20_000, defaultTimeoutMs: 20_000 });
    try {
      const inside = await runWithForwardedHeaders({ 'mcp-param-region': 'eu-west' }, () => supervisor.callTool(spec, 'reverse_words', { sentence: 'with headers' }));
      assert.equal(firstText(inside), 'headers with');
      const outside = await supervisor.callTool(spec, 'reverse_words', { sentence: 'without headers' });
      assert.equal(firstText(outside), 'headers without');
      assert.equal(calls.length, 2);
      assert.equal(calls[0]!['mcp-param-region'], 'eu-west');
      assert.equal(calls[1]!['mcp-param-region'], undefined);
    } finally {
      await supervisor.close();
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
