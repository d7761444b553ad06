/**
 * The runtime against a real published MCP server, @modelcontextprotocol/server-everything:
 * over stdio (trusted and sandboxed), over Streamable HTTP, and over the older SSE transport
 * through the automatic fallback, with credentials sent as headers and never echoed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { isQuiverError } from '../../src/core/errors.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { createSupervisor } from '../../src/runtime/supervisor.ts';
import type { UpstreamSpecInput } from '../../src/runtime/types.ts';
import { firstText, leftovers, repositoryRoot } from './helpers.ts';
import { skipUnless } from '../helpers/requirements.ts';

const everything = join(repositoryRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const host = detectHost();

function stdioSpec(pluginId: string, trustLevel: 'OFFICIAL' | 'UNVERIFIED'): UpstreamSpecInput {
  return {
    pluginId, pluginName: pluginId, version: '2026.8.31', trustLevel, transport: 'stdio',
    command: process.execPath, args: [everything, 'stdio'], cwd: join(repositoryRoot, 'node_modules/@modelcontextprotocol/server-everything'),
    readOnlyPaths: [join(repositoryRoot, 'node_modules')],
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startHttp(mode: 'streamableHttp' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, mode], { env: { PATH: '/usr/bin:/bin', PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (/listening|running/i.test(text)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${text}`)));
  });
  return { child, port };
}

describe('@modelcontextprotocol/server-everything', () => {
  it('over stdio: discover, call tools, read resources, get prompts', async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    const spec = stdioSpec('everything', 'OFFICIAL');
    const discovery = await supervisor.discover(spec, { timeoutMs: 20_000 });
    const names = discovery.tools.map((tool) => tool.name);
    assert.ok(names.includes('echo') && names.includes('get-sum'), names.join(','));
    assert.ok(discovery.resources.length > 0);
    assert.ok(discovery.prompts.length > 0);
    assert.match(firstText(await supervisor.callTool(spec, 'echo', { message: 'hello everything' })), /hello everything/);
    assert.match(firstText(await supervisor.callTool(spec, 'get-sum', { a: 2, b: 40 })), /42/);
    const resource = discovery.resources[0]!;
    const read = await supervisor.readResource(spec, resource.uri);
    assert.ok(read.contents.length > 0);
    await supervisor.close();
    assert.deepEqual(leftovers(supervisor.id), []);
  });

  it('over stdio inside the UNVERIFIED sandbox', { skip: skipUnless(!host.bubblewrap && 'bubblewrap is unavailable') }, async () => {
    const supervisor = createSupervisor({ stopGraceMs: 200 });
    const spec = stdioSpec('everything-sandboxed', 'UNVERIFIED');
    assert.match(firstText(await supervisor.callTool(spec, 'echo', { message: 'boxed' })), /boxed/);
    assert.equal(supervisor.health()[0]!.launch?.sandboxed, true);
    await supervisor.close();
  });

  describe('remote', () => {
    const servers: ChildProcess[] = [];
    let streamablePort = 0;
    let ssePort = 0;
    before(async () => {
      const streamable = await startHttp('streamableHttp');
      const sse = await startHttp('sse');
      servers.push(streamable.child, sse.child);
      streamablePort = streamable.port;
      ssePort = sse.port;
    });
    after(() => {
      for (const server of servers) server.kill('SIGKILL');
    });

    const httpSpec = (pluginId: string, url: string): UpstreamSpecInput => ({
      pluginId, pluginName: pluginId, version: '1', trustLevel: 'OFFICIAL', transport: 'http', url,
      headers: { Authorization: 'Bearer remote-token-abcdef' },
    });

    it('over Streamable HTTP with a kept-alive session', async () => {
      const supervisor = createSupervisor();
      const spec = httpSpec('remote-streamable', `http://127.0.0.1:${streamablePort}/mcp`);
      for (let index = 0; index < 5; index += 1) assert.match(firstText(await supervisor.callTool(spec, 'echo', { message: `r${index}` })), new RegExp(`r${index}`));
      assert.equal(supervisor.health()[0]!.calls, 5);
      assert.equal(supervisor.processes().length, 1, 'one connection reused');
      assert.ok((await supervisor.listTools(spec)).some((tool) => tool.name === 'get-sum'));
      await supervisor.close();
    });

    it('falls back to SSE for servers without Streamable HTTP', async () => {
      const supervisor = createSupervisor();
      const spec = httpSpec('remote-sse', `http://127.0.0.1:${ssePort}/sse`);
      assert.match(firstText(await supervisor.callTool(spec, 'echo', { message: 'over sse' })), /over sse/);
      await supervisor.close();
    });

    it('sends declared headers to the remote and keeps them out of errors', async () => {
      const seen: string[] = [];
      const server = createHttpServer((request, response) => {
        seen.push(String(request.headers.authorization));
        response.writeHead(401, { 'content-type': 'text/plain' }).end('denied remote-token-abcdef');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const supervisor = createSupervisor({ startTimeoutMs: 2_000 });
      // Closed whatever the assertions say: a listening server left behind keeps the test file running.
      try {
        await assert.rejects(supervisor.callTool(httpSpec('remote-auth', `http://127.0.0.1:${port}/mcp`), 'echo', { message: 'x' }), (error) => {
          // Issue #27: a refused credential is the user's to fix, and the error says so.
          assert.ok(isQuiverError(error, 'missing_credential'), String(error));
          assert.match(error.message, /refused the Authorization header it was installed with \(it answered 401\)/);
          assert.ok(!error.message.includes('remote-token-abcdef'), error.message);
          return true;
        });
        assert.ok(seen.length > 0 && seen.every((value) => value === 'Bearer remote-token-abcdef'), seen.join(','));
      } finally {
        await supervisor.close();
        server.close();
      }
    });

    it('reports an unreachable remote as unavailable, without the credential', async () => {
      const supervisor = createSupervisor({ startTimeoutMs: 2_000 });
      const port = await freePort();
      await assert.rejects(supervisor.callTool(httpSpec('remote-down', `http://127.0.0.1:${port}/mcp`), 'echo', { message: 'x' }), (error) => {
        assert.ok(isQuiverError(error, 'unavailable'), String(error));
        assert.ok(!error.message.includes('remote-token-abcdef'));
        return true;
      });
      await supervisor.close();
    });
  });
});
