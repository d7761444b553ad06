/**
 * Verification wired by the composition root, on both backends: a real plugin install (a real
 * MCP server folder, discovered in the real sandbox) queues a background verification that the
 * job worker runs; the report is stored, signed with the hub key and written to the plugin's
 * trust columns. `quiver plugin verify` prints every stage with progress; the API queues a run
 * (202), shows reports to admins only and serves the public key.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApp, type App } from '../../src/app.ts';
import { createApi } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';
import { EXIT_CODES } from '../../src/cli/command.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { STAGE_ORDER } from '../../src/verification/types.ts';
import { checkReportSignature } from '../../src/verification/signing.ts';
import { stageRegistry } from '../../src/verification/stages/index.ts';
import type { VerificationReport } from '../../src/verification/report.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';

describeEachBackend('verification in the app', (backend) => {
  let root: string;
  let app: App;
  let api: ReturnType<typeof createApi>;
  let admin: string;
  let reader: string;

  /** `quiver ARGV` through the real CLI runner against this test's app (run in the test's folder). */
  async function quiver(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, commands, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) }, {}, { app, cwd: root });
    return { code, stdout, stderr };
  }

  const call = async (method: string, path: string, key: string) => {
    const response = await api.request(path, { method, headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as any };
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-verification-app-'));
    chmodSync(root, 0o755);
    const db = await backend.open();
    app = await createApp(
      loadConfig({
        QUIVER_HOME: join(root, 'home'),
        QUIVER_DATABASE_URL: 'memory://',
        QUIVER_LOG_LEVEL: 'silent',
        QUIVER_JOBS_POLL_MS: '50',
        // No registry is needed for a folder plugin; a closed port keeps the run offline.
        QUIVER_VERIFY_REGISTRY_URL: 'http://127.0.0.1:9',
        QUIVER_VERIFY_STAGE_TIMEOUT_MS: '60000',
      }),
      { db },
    );
    api = createApi({ apiKeys: app.apiKeys, modules: app.apiModules() });
    admin = (await app.apiKeys.ensureAdminKey())!;
    reader = (await app.apiKeys.create({ name: 'reader', scopes: ['read'] })).key;
  });
  after(async () => {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('an install queues a verification that the worker runs: report stored, signed, trust written', { timeout: 180_000 }, async () => {
    const folder = await createRawPluginFolder(root, 'echo-plugin');
    await app.plugins.add(folder, { name: 'echo-plugin' });
    assert.equal(await app.verification.latestReport('echo-plugin'), undefined, 'nothing runs before a worker starts');
    app.jobs.start();
    let report: VerificationReport | undefined;
    for (let i = 0; i < 1200 && report === undefined; i++) {
      await sleep(100);
      report = await app.verification.latestReport('echo-plugin');
    }
    assert.ok(report, 'the background job stored a report');
    assert.equal(report.pluginId, 'echo-plugin');
    assert.deepEqual(Object.keys(report.stages).sort(), [...STAGE_ORDER].sort());
    for (const stage of STAGE_ORDER) {
      const expected = stage in stageRegistry ? ['passed', 'error', 'timeout'] : ['not_run'];
      assert.ok(expected.includes(report.stages[stage].status), `${stage}: ${report.stages[stage].status}`);
    }
    assert.equal(report.stages.source.issues[0]?.code, 'unpinned_folder');
    assert.match(String(report.stages.source.metrics?.['folderHash']), /^[0-9a-f]{64}$/);
    assert.equal(report.stages.schemaValidation.status, 'passed');
    if (STAGE_ORDER.some((stage) => report!.stages[stage].status !== 'passed')) {
      assert.equal(report.recommendation.trustLevel, 'UNVERIFIED', 'an incomplete verification relaxes no isolation');
    }
    assert.deepEqual(Object.keys(report.subject.toolHashes).sort(), ['echo', 'fail']);
    const key = await app.verification.publicKey();
    assert.equal(checkReportSignature(report, key.publicKeyPem).valid, true);
    const { plugin } = await app.plugins.show('echo-plugin');
    assert.equal(plugin.trustScore, report.overallScore);
    assert.equal(plugin.trustLevel, report.recommendation.trustLevel);
    const jobs = await app.db.query<{ status: string; attempts: number }>("SELECT status, attempts FROM jobs WHERE kind = 'verification.run'");
    assert.deepEqual(jobs.rows, [{ status: 'done', attempts: 1 }]);
  });

  it('quiver plugin verify prints each stage on stderr and the report; plugin verification shows the latest', { timeout: 180_000 }, async () => {
    const run = await quiver('plugin', 'verify', 'echo-plugin');
    assert.equal(run.code, 0, run.stderr);
    for (const stage of STAGE_ORDER) {
      assert.match(run.stderr, new RegExp(`verify: ${stage} …`));
      assert.match(run.stdout, new RegExp(`^${stage}\\s+(passed|not_run|error|timeout)\\s+\\d+`, 'm'));
    }
    assert.match(run.stdout, /echo-plugin \S+: score \d+ \(grade [A-F]\), trust [A-Z_]+/);
    const shown = await quiver('plugin', 'verification', 'echo-plugin', '--json');
    const latest = JSON.parse(shown.stdout) as VerificationReport;
    assert.equal(latest.jobId, (await app.verification.latestReport('echo-plugin'))!.jobId);
    assert.equal((await app.verification.reports('echo-plugin')).length, 2);
    const pem = await quiver('verify-report', 'public-key');
    assert.match(pem.stdout, /^-----BEGIN PUBLIC KEY-----/);
    const missing = await quiver('plugin', 'verification', 'nope');
    assert.equal(missing.code, EXIT_CODES.notFound);
    assert.match(missing.stderr, /not found/i);
    writeFileSync(join(root, 'broken.json'), '{"jobId": "ver-');
    writeFileSync(join(root, 'hub.pem'), pem.stdout);
    const broken = await quiver('verify-report', 'check', 'broken.json', '--public-key', 'hub.pem');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /INVALID: broken.json is not valid JSON/);
    writeFileSync(join(root, 'latest.json'), shown.stdout);
    assert.equal((await quiver('verify-report', 'check', 'latest.json', '--public-key', 'hub.pem')).code, 0, 'relative paths resolve against the caller');
  });

  it('the API queues a run (202), shows reports to admins only and serves the public key', { timeout: 180_000 }, async () => {
    const queued = await call('POST', '/api/v1/plugins/echo-plugin/verify', admin);
    assert.equal(queued.status, 202);
    assert.equal(queued.body.plugin, 'echo-plugin');
    let job: any;
    for (let i = 0; i < 1200; i++) {
      job = (await call('GET', `/api/v1/verification/jobs/${queued.body.jobId}`, admin)).body.job;
      if (job.status === 'done' || job.status === 'failed') break;
      await sleep(100);
    }
    assert.equal(job.status, 'done', JSON.stringify(job));
    const latest = await call('GET', '/api/v1/plugins/echo-plugin/verification', admin);
    assert.equal(latest.status, 200);
    assert.equal(latest.body.jobId, job.result.reportJobId);
    const history = await call('GET', '/api/v1/plugins/echo-plugin/verification/history?limit=2', admin);
    assert.equal(history.body.reports.length, 2);
    assert.equal((await call('GET', '/api/v1/plugins/echo-plugin/verification', reader)).status, 403);
    assert.equal((await call('POST', '/api/v1/plugins/echo-plugin/verify', reader)).status, 403);
    const key = await call('GET', '/api/v1/verification/public-key', reader);
    assert.equal(key.status, 200);
    assert.equal(checkReportSignature(latest.body, key.body.publicKeyPem).valid, true);
    assert.equal((await call('GET', '/api/v1/plugins/nope/verification', admin)).status, 404);
  });
});
