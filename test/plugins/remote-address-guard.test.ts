/**
 * The SSRF guard on a remote plugin's own MCP URL (issue #27): a real MCP server (the SDK's
 * McpServer over stateless Streamable HTTP) on loopback. Through the real App on PGlite and
 * PostgreSQL: without QUIVER_REMOTE_ALLOW_ADDRESSES its install is refused at the launch step with
 * an error naming the setting (by IP and by a host name resolving to loopback), nothing reaches
 * the server and nothing is installed; admitted (`loopback`, or the older
 * QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES) it installs and its tool is called; then an app on the same
 * database without the setting refuses to connect to the installed plugin (a call and a sync),
 * again before any request reaches it. Verification's probe of a remote plugin is held to the same
 * guard when its settings carry it (as the app's do). The rebinding case (the connection's own
 * lookup) is in src/plugins/oauth/network-guard.test.ts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startStatelessMcpServer, type StatelessMcpServer } from '../helpers/stateless-mcp-server.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { keptOpen } from '../helpers/kept-database.ts';
import { openTempDir } from './helpers.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { createProbeRunner } from '../../src/verification/stages/probe/index.ts';
import type { StageContext, VerificationSettings } from '../../src/verification/types.ts';

/** A stateless Streamable HTTP MCP server with one tool; counts the requests it gets. */
function startRemote(): Promise<StatelessMcpServer> {
  return startStatelessMcpServer({
    name: 'inside',
    version: '1.0.0',
    register: (server) =>
      server.registerTool('read_secret', { description: 'Reads a value only reachable inside the network.', inputSchema: { key: z.string() } }, async ({ key }) => ({ content: [{ type: 'text', text: `inside:${key}` }] })),
  });
}

const REFUSED = /refused to connect to the remote plugin at http:\/\/(127\.0\.0\.1|localhost):\d+\/mcp: 127\.0\.0\.1 is a loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/;

describeEachBackend("the SSRF guard on a remote plugin's MCP URL (issue #27)", (backend) => {
  let home: string;
  let db: Database;
  let remote: Awaited<ReturnType<typeof startRemote>>;
  let app: App | undefined;
  const open = async (env: Record<string, string>) => {
    await app?.close();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', ...env }), { db: keptOpen(db) });
    return app;
  };

  before(async () => {
    home = await openTempDir('remote-address-guard');
    db = await backend.open();
    remote = await startRemote();
  });
  after(async () => {
    await app?.close();
    await db.close();
    await remote.close();
  });

  it('refuses the install of a loopback URL without the setting, by IP and by name; nothing reaches the server', async () => {
    const hub = await open({});
    for (const url of [`http://127.0.0.1:${remote.port}/mcp`, `http://localhost:${remote.port}/mcp`]) {
      await assert.rejects(hub.plugins.add(url, { name: 'inside' }), (error: Error) => {
        assert.ok(isQuiverError(error, 'install_failed'), error.message);
        assert.equal((error as { details?: { step?: string } }).details?.step, 'launch');
        assert.match(error.message, REFUSED);
        return true;
      });
    }
    assert.equal(remote.requests(), 0, 'no request reached the refused server');
    assert.deepEqual((await hub.plugins.list()).map((plugin) => plugin.name), []);
  });

  it('admitted with QUIVER_REMOTE_ALLOW_ADDRESSES=loopback (or the older name) it installs and is called', async () => {
    assert.equal(loadConfig({ QUIVER_REMOTE_OAUTH_ALLOW_ADDRESSES: 'loopback' }).remoteOAuth?.allowAddresses, 'loopback', 'the older name is still read');
    const hub = await open({ QUIVER_REMOTE_ALLOW_ADDRESSES: 'loopback' });
    const report = await hub.plugins.add(`http://127.0.0.1:${remote.port}/mcp`, { name: 'inside' });
    assert.deepEqual(report.tools.inserted, ['read_secret']);
    const result = await hub.supervisor.callTool(await hub.plugins.upstreamSpec('inside'), 'read_secret', { key: 'k1' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'inside:k1' }]);
  });

  it('an installed plugin is refused at connect once its address is no longer admitted', async () => {
    const hub = await open({});
    const seen = remote.requests();
    await assert.rejects(hub.supervisor.callTool(await hub.plugins.upstreamSpec('inside'), 'read_secret', { key: 'k2' }), (error: Error) => {
      assert.match(error.message, REFUSED);
      return true;
    });
    await assert.rejects(hub.plugins.sync('inside'), REFUSED);
    assert.equal(remote.requests(), seen, 'no request reached the server');
  });
});

describe("verification's probe of a remote plugin under the SSRF guard (issue #27)", () => {
  let remote: Awaited<ReturnType<typeof startRemote>>;
  before(async () => {
    remote = await startRemote();
  });
  after(() => remote.close());

  const probe = (remoteNetwork: VerificationSettings['remoteNetwork']) => {
    const url = `http://127.0.0.1:${remote.port}/mcp`;
    const context: StageContext = {
      subject: {
        pluginId: 'inside', pluginName: 'inside', version: '1.0.0', sourceType: 'url', source: { url }, codeDir: null, manifest: null, intelligence: null, tools: [], otherToolNames: [],
        launch: { transport: 'http', pluginId: 'inside', pluginName: 'inside', version: '1.0.0', trustLevel: 'UNVERIFIED', url, headers: {} },
      },
      settings: { registryUrl: '', licenseAllowList: [], stageTimeoutMs: 30_000, remoteNetwork },
      logger: silentLogger,
      signal: new AbortController().signal,
      progress: () => undefined,
    };
    return createProbeRunner({ host: detectHost({ bubblewrapPath: null, useCgroups: false, codeOverlay: false }) }).probe(context);
  };

  it('refuses a loopback plugin unless the settings admit loopback', async () => {
    const seen = remote.requests();
    const refused = await probe({});
    assert.equal(refused.started, false);
    assert.match(refused.startError ?? '', REFUSED);
    assert.equal(remote.requests(), seen, 'nothing reached the server');
    const admitted = await probe({ allowAddresses: 'loopback' });
    assert.equal(admitted.started, true, admitted.startError);
    assert.ok(remote.requests() > seen);
  });
});
