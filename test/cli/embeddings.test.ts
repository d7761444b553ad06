/**
 * `quiver embeddings status` over the wired app: a plugin sync is embedded by itself (issue #15).
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { createApi } from '../../src/api/app.ts';

describeEachBackend('embeddings through the app and the CLI', (backend) => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'quiver-embeddings-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('a plugin sync is embedded by itself; `quiver embeddings status` shows it', async () => {
    const db = await backend.open();
    const app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }), { db });
    try {
      await app.catalog.syncPlugin({ pluginId: 'notes', version: '1.0.0', tools: [{ name: 'add_note', description: 'Add a note' }, { name: 'list_notes', description: 'List notes' }] });
      await app.embeddings.idle();
      let stdout = '';
      const code = await runCli(['embeddings', 'status', '--json'], commands, { stdout: (t) => void (stdout += t), stderr: () => {} }, {}, { app });
      assert.equal(code, 0);
      const status = JSON.parse(stdout) as { model: string; tools: Record<string, number>; lastRun: { embedded: number } | null };
      assert.equal(status.model, app.embedder.modelId);
      assert.equal(status.tools.current, 2);
      assert.equal(status.tools.pending ?? 0, 0);

      // The same through the REST API: status for read keys, recompute for admins only.
      const api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
      const admin = (await app.apiKeys.ensureAdminKey())!;
      const reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
      const call = (method: string, path: string, key: string) => api.request(path, { method, headers: { authorization: `Bearer ${key}` } });
      const viaApi = await call('GET', '/internal/tool-registry/embeddings/status', reader);
      assert.equal(viaApi.status, 200);
      assert.equal(((await viaApi.json()) as { tools: Record<string, number> }).tools.current, 2);
      assert.equal((await call('POST', '/internal/tool-registry/embeddings/recompute?all=true', reader)).status, 403);
      const recomputed = await call('POST', '/internal/tool-registry/embeddings/recompute?all=true', admin);
      assert.equal(recomputed.status, 200);
      assert.equal(((await recomputed.json()) as { embedded: number }).embedded, 2);
    } finally {
      await app.close();
    }
  });
});
