/**
 * `quiver plugin trust|allow|deny|egress|report` as users type them (issue #10), through the
 * real CLI runner against an app on every backend.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { createApp, type App } from '../../src/app.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { writeRawPluginFolder } from '../helpers/raw-mcp-server.ts';

describeEachBackend('quiver plugin trust commands', (backend) => {
  let app: App;
  let home: string;

  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, { QUIVER_LOG_LEVEL: 'silent' }, { app, cwd: home });
    return { code, stdout, stderr };
  }

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'quiver-trust-cli-'));
    chmodSync(home, 0o755); // the sandbox user reads the plugin folder below
    app = await createApp(loadConfig({ QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0', QUIVER_VERIFY_ON_INSTALL: 'off' }), { db: await backend.open() });
    // A synced catalog entry (no process) and a real plugin run in the sandbox.
    await app.catalog.syncPlugin({ pluginId: 'notes', version: '1.0.0', tools: [{ name: 'add_note', description: 'Add a note' }] });
    const folder = await writeRawPluginFolder(home, 'runner-src', {
      description: 'Runs jobs',
      server: { name: 'runner', tools: [{ name: 'run_job', description: 'Run a job.', inputSchema: { type: 'object', properties: {} } }], callTool: `return reply({ content: [{ type: 'text', text: 'ran' }] });` },
    });
    await app.plugins.add(folder, { name: 'runner' });
  });
  after(async () => {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('shows, grants and caps trust; a change needs a reason and one of --level, --cap, --clear', async () => {
    const shown = await quiver('plugin', 'trust', 'notes');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^notes: UNVERIFIED \(sandbox, network none\)\n {2}not verified: default UNVERIFIED/);
    assert.equal((await quiver('plugin', 'trust', 'notes', '--level', 'COMMUNITY')).code, 2);
    assert.equal((await quiver('plugin', 'trust', 'notes', '--level', 'COMMUNITY', '--cap', 'OFFICIAL', '--reason', 'x')).code, 2);
    assert.match((await quiver('plugin', 'trust', 'notes', '--level', 'trusted', '--reason', 'x')).stderr, /not a trust level/);
    // Issue #23: a synced entry has no pinned source, so nothing above COMMUNITY is granted to it.
    const refused = await quiver('plugin', 'trust', 'notes', '--level', 'enterprise', '--reason', 'internal tool');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /cannot grant ENTERPRISE to 'notes': its source is a synced catalog entry .*pinned source/);
    const granted = await quiver('plugin', 'trust', 'notes', '--level', 'community', '--reason', 'internal tool');
    assert.equal(granted.code, 0, granted.stderr);
    assert.match(granted.stdout, /^notes: COMMUNITY \(sandbox, network allow-list\)/m);
    assert.match(granted.stdout, /grant\s+COMMUNITY\s+cli(:\S+)?\s+internal tool/);
    assert.match(granted.stdout, /restarts with this isolation on its next call/);
  });

  it('an allow-list on COMMUNITY is enforced; UNVERIFIED is told its rules do not apply; a remote plugin that it has no process', async () => {
    assert.equal((await quiver('plugin', 'trust', 'runner', '--level', 'community', '--reason', 'internal tool')).code, 0);
    const allowed = await quiver('plugin', 'allow', 'runner', 'notes.example:8443', '--reason', 'sync');
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /^allowed runner → notes\.example:8443; the plugin restarts with it on its next call/);
    assert.doesNotMatch(allowed.stdout, /note:/);
    assert.match((await quiver('plugin', 'trust', 'runner')).stdout, /^runner: COMMUNITY \(sandbox, network allow-list\)/);
    const egress = await quiver('plugin', 'egress', 'runner');
    assert.match(egress.stdout, /allow-list enforced\nHOST\s+PORT\s+WHO\s+WHY\s+ADDED\nnotes\.example\s+8443\s+cli\S*\s+sync/);
    assert.equal((await quiver('plugin', 'trust', 'runner', '--cap', 'UNVERIFIED', '--reason', 'suspicious')).code, 0);
    assert.match((await quiver('plugin', 'allow', 'runner', '10.0.0.9:5432')).stdout, /note: runner runs at UNVERIFIED, which has no network at all; the rule takes effect once it runs at COMMUNITY or above/);
    assert.match((await quiver('plugin', 'deny', 'runner', '10.0.0.9:5432')).stdout, /^removed 10\.0\.0\.9:5432/);
    assert.match((await quiver('plugin', 'deny', 'runner', '10.0.0.9:5432')).stdout, /was not on runner's allow-list/);
    assert.equal((await quiver('plugin', 'egress', 'runner', '--limit', '0')).code, 2);
    // A synced entry has no process in Quiver's sandbox: the rule is kept but said to hold nothing.
    const remote = await quiver('plugin', 'allow', 'notes', 'notes.example:443');
    assert.match(remote.stdout, /^allowed notes → notes\.example:443\nnote: notes has no process in Quiver's sandbox \(a remote or synced plugin\), so the rule has nothing to hold/);
    assert.match((await quiver('plugin', 'egress', 'notes')).stdout, /^notes: allow-list not enforced/);
  });

  it('report lowers runtime trust and --evaluate recomputes it', async () => {
    assert.equal((await quiver('plugin', 'report', 'notes')).code, 2);
    const reported = await quiver('plugin', 'report', 'notes', '--reason', 'sent my notes elsewhere', '--json');
    assert.equal(reported.code, 0, reported.stderr);
    assert.equal(JSON.parse(reported.stdout).runtime.score, 85, 'one user report costs 15 (issue #23)');
    // The report queued a re-verification on the job queue (issue #10, verification service).
    const jobs = await app.db.query<{ kind: string; payload: unknown }>('SELECT kind, payload FROM jobs');
    const payloads = jobs.rows.map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { plugin?: string; reason?: string });
    assert.ok(payloads.some((payload) => payload.plugin === 'notes' && payload.reason === 'user report: sent my notes elsewhere'), JSON.stringify(jobs.rows));
    const evaluated = JSON.parse((await quiver('plugin', 'trust', 'notes', '--evaluate', '--json')).stdout);
    assert.equal(evaluated.runtime.score, 85);
    assert.equal(evaluated.runtime.factors.userReports, 1);
  });
});
