/**
 * The SSRF guard on an `openapi:` URL source's document (issue #27 leftover): the install fetches
 * the document (and its `$ref`s) under the same guard as a remote plugin's MCP URL. A real HTTP
 * server on loopback serves the Petstore document; through the real App on PGlite and PostgreSQL:
 * without QUIVER_REMOTE_ALLOW_ADDRESSES the install is refused at the fetch-spec step naming the
 * setting, no request reaches the server and nothing is installed; with `loopback` admitted the
 * same install succeeds. Before, the document was fetched with the global fetch, unguarded.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { keptOpen } from '../helpers/kept-database.ts';
import { openTempDir } from '../plugins/helpers.ts';

const document = readFileSync(fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url)), 'utf8');

describeEachBackend("the SSRF guard on an openapi: source's document URL (issue #27)", (backend) => {
  let home: string;
  let db: Database;
  let server: Server;
  let requests = 0;
  let url: string;
  let app: App | undefined;
  const open = async (env: Record<string, string>) => {
    await app?.close();
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_VERIFY_ON_INSTALL: 'off', ...env }), { db: keptOpen(db) });
    return app;
  };

  before(async () => {
    home = await openTempDir('openapi-document-guard');
    db = await backend.open();
    server = createServer((request, response) => {
      requests++;
      if (request.url === '/specs/petstore.yaml') response.writeHead(200, { 'content-type': 'application/yaml' }).end(document);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/specs/petstore.yaml`;
  });
  after(async () => {
    await app?.close();
    await db.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a document on a loopback address without the setting; nothing is fetched or installed', async () => {
    const hub = await open({});
    await assert.rejects(hub.plugins.add(`openapi:${url}`, { name: 'inside-api', baseUrl: 'https://petstore.example.com/v2' }), (error: Error) => {
      assert.ok(isQuiverError(error, 'install_failed'), error.message);
      assert.equal((error as { details?: { step?: string } }).details?.step, 'fetch-spec');
      assert.match(error.message, /127\.0\.0\.1 is a loopback address; admit it with QUIVER_REMOTE_ALLOW_ADDRESSES/);
      return true;
    });
    assert.equal(requests, 0, 'no request reached the server');
    assert.equal((await hub.plugins.list()).some((plugin) => plugin.name === 'inside-api'), false);
  });

  it('installs the same document when loopback is admitted', async () => {
    const hub = await open({ QUIVER_REMOTE_ALLOW_ADDRESSES: 'loopback' });
    const installed = await hub.plugins.add(`openapi:${url}`, { name: 'inside-api', baseUrl: 'https://petstore.example.com/v2' });
    assert.equal(installed.tools.total, 20, JSON.stringify(installed.tools));
    assert.ok(requests >= 1);
  });
});
