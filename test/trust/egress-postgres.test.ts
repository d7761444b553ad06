/**
 * The enforced egress allow-list with a real MCP server (issue #10): the npm package
 * @modelcontextprotocol/server-postgres, installed as users install it and run in Quiver's real
 * sandbox, reaches the local PostgreSQL only after `quiver plugin allow NAME 127.0.0.1:5432`;
 * a database host that is not on its list is refused and the refusal is stored. Trust is set
 * with `quiver plugin trust`; every command runs through the real CLI against the test's app.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { skipUnless } from '../helpers/requirements.ts';

const databaseUrl = 'postgres://postgres@127.0.0.1:5432/quiver_test';
const INSTALL_TIMEOUT = 300_000;
const host = detectHost();
const skip = skipUnless(!host.bubblewrap && `bubblewrap is unusable: ${host.bubblewrapProblem}`);

describeEachBackend('server-postgres behind its egress allow-list', (backend) => {
  let db: Database;
  let home: string;
  let app: App;

  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, { QUIVER_LOG_LEVEL: 'silent' }, { app, cwd: home });
    return { code, stdout, stderr };
  }

  /** Calls `query` through Quiver's supervisor with the plugin's current launch spec. */
  async function query(plugin: string, sql: string): Promise<{ ok: boolean; text: string }> {
    try {
      const result = await app.supervisor.callTool(await app.plugins.upstreamSpec(plugin), 'query', { sql });
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      return { ok: result.isError !== true, text };
    } catch (error) {
      return { ok: false, text: (error as Error).message };
    }
  }

  before(async () => {
    db = await backend.open();
    home = await mkdtemp(join(tmpdir(), 'quiver-egress-pg-'));
    await chmod(home, 0o755);
    app = await createApp(loadConfig({ ...process.env, QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0' }), { db });
  });
  after(async () => {
    // The app owns the database it was given: closing it closes (and, on PostgreSQL, drops) it.
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('fails before `plugin allow`, works after it, and logs the allowed connection', { skip, timeout: INSTALL_TIMEOUT }, async () => {
    const added = await quiver('plugin', 'add', 'npm:@modelcontextprotocol/server-postgres', '--arg', databaseUrl);
    assert.equal(added.code, 0, added.stderr);
    const initial = JSON.parse((await quiver('plugin', 'trust', 'server-postgres', '--json')).stdout);
    assert.equal(initial.effective.level, 'UNVERIFIED');
    assert.deepEqual(initial.isolation, { sandbox: true, network: 'none' });
    const unverified = await query('server-postgres', 'SELECT 41 + 1 AS answer');
    assert.equal(unverified.ok, false, unverified.text);

    const granted = await quiver('plugin', 'trust', 'server-postgres', '--level', 'community', '--reason', 'reads the test database', '--json');
    assert.equal(granted.code, 0, granted.stderr);
    const view = JSON.parse(granted.stdout);
    assert.equal(view.effective.level, 'COMMUNITY');
    assert.deepEqual(view.isolation, { sandbox: true, network: 'allow-list' });
    assert.match(view.grant.actor, /^cli/);
    assert.equal(view.grant.reason, 'reads the test database');
    const before = await query('server-postgres', 'SELECT 41 + 1 AS answer');
    assert.equal(before.ok, false, 'COMMUNITY with an empty allow-list reaches nothing');
    assert.match(before.text, /ECONNREFUSED|connect/i);

    const allowed = await quiver('plugin', 'allow', 'server-postgres', '127.0.0.1:5432', '--reason', 'the local database');
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /allowed server-postgres → 127\.0\.0\.1:5432/);
    const after = await query('server-postgres', 'SELECT 41 + 1 AS answer');
    assert.equal(after.ok, true, after.text);
    assert.match(after.text, /"answer":\s*42/);
    assert.ok(app.supervisor.health().some((h) => h.pluginName === 'server-postgres' && h.launch?.network === 'allow-list'));

    const egress = JSON.parse((await quiver('plugin', 'egress', 'server-postgres', '--json')).stdout);
    assert.equal(egress.enforced, true);
    assert.deepEqual(egress.rules.map((r: { host: string; port: number; reason: string }) => [r.host, r.port, r.reason]), [['127.0.0.1', 5432, 'the local database']]);
    assert.ok(egress.decisions.some((d: { host: string; port: number; allowed: boolean }) => d.host === '127.0.0.1' && d.port === 5432 && d.allowed));

    // Removing the rule takes effect at the next start, which the changed spec causes.
    assert.equal((await quiver('plugin', 'deny', 'server-postgres', '127.0.0.1:5432')).code, 0);
    assert.equal((await query('server-postgres', 'SELECT 1')).ok, false);
  });

  it('refuses a database host that is not on the list and stores the refusal', { skip, timeout: INSTALL_TIMEOUT }, async () => {
    const elsewhere = 'postgres://postgres@db.not-allowed.example:5432/quiver_test';
    const added = await quiver('plugin', 'add', 'npm:@modelcontextprotocol/server-postgres', '--name', 'pg-elsewhere', '--arg', elsewhere);
    assert.equal(added.code, 0, added.stderr);
    assert.equal((await quiver('plugin', 'trust', 'pg-elsewhere', '--level', 'COMMUNITY', '--reason', 'test')).code, 0);
    assert.equal((await quiver('plugin', 'allow', 'pg-elsewhere', '127.0.0.1:5432')).code, 0);
    const refused = await query('pg-elsewhere', 'SELECT 1');
    assert.equal(refused.ok, false);
    assert.match(refused.text, /ENOTFOUND|getaddrinfo/);
    const text = await quiver('plugin', 'egress', 'pg-elsewhere');
    assert.match(text.stdout, /db\.not-allowed\.example \(name lookup\)\s+denied/);
    const egress = JSON.parse((await quiver('plugin', 'egress', 'pg-elsewhere', '--json')).stdout);
    assert.ok(egress.decisions.some((d: { host: string; allowed: boolean }) => d.host === 'db.not-allowed.example' && !d.allowed));
  });
});
