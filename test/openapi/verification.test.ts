/**
 * Verification of an OpenAPI plugin (issue #14, seed 000 §4.2): all seven stages run on a
 * plugin that has no process (none fails closed for lack of one); the source stage scores the
 * pinned document, the probe exercises the generated server like a remote plugin (read-only
 * operations reach the real API, sandbox execution cannot vouch for the API), and the verdict
 * is the level docs/openapi.md states: COMMUNITY (the ceiling of automatic verification, issue #23),
 * approved.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { describeEachBackend, processStore } from '../helpers/backends.ts';
import { runInProcess } from '../helpers/cli.ts';
import { startPetstore, type PetstoreServer } from './petstore-server.ts';

const fixture = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));
const API_KEY = `key-${randomBytes(6).toString('hex')}`;
const TOKEN = `token-${randomBytes(8).toString('hex')}`;

describeEachBackend('OpenAPI plugin verification', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let store: Awaited<ReturnType<typeof processStore>> | undefined;
  let petstore: PetstoreServer;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-openapi-verify-'));
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data'), QUIVER_LOG_LEVEL: 'silent' };
    store = await processStore(backend);
    Object.assign(env, store.env);
    petstore = await startPetstore({ apiKey: API_KEY, accessToken: TOKEN });
  });

  after(async () => {
    await petstore?.close();
    await store?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs the six scored stages and the verdict, reaching COMMUNITY (the automatic ceiling), probing only read-only operations', async () => {
    const added = await runInProcess(['plugin', 'add', `openapi:${fixture}`, '--base-url', petstore.baseUrl, '--secret', `OPENAPI_API_KEY=${API_KEY}`, '--secret', `OPENAPI_BEARER_TOKEN=${TOKEN}`], env);
    assert.equal(added.code, 0, added.stderr);
    // The test API listens on loopback: verification's calls obey the address guard too (issue #23).
    const allowed = await runInProcess(['plugin', 'allow', 'petstore', new URL(petstore.baseUrl).host, '--reason', 'the test API on loopback'], env);
    assert.equal(allowed.code, 0, allowed.stderr);
    const verified = await runInProcess(['plugin', 'verify', 'petstore', '--json'], env);
    assert.equal(verified.code, 0, verified.stderr);
    const report = JSON.parse(verified.stdout) as {
      subject: { sourceType: string };
      overallScore: number;
      stages: Record<string, { status: string; score: number; issues: Array<{ code: string }> }>;
      recommendation: { approved: boolean; trustLevel: string };
    };
    assert.equal(report.subject.sourceType, 'openapi');
    assert.deepEqual(Object.values(report.stages).map((stage) => stage.status), Array(6).fill('passed'), JSON.stringify(report.stages));
    assert.equal(report.stages['source']?.score, 60);
    assert.deepEqual(report.stages['source']?.issues.map((issue) => issue.code), ['remote_api_unseen']);
    assert.equal(report.stages['staticAnalysis']?.score, 100, 'no third-party code to analyse');
    assert.equal(report.recommendation.trustLevel, 'COMMUNITY', 'a score in the ENTERPRISE band is capped at COMMUNITY without an admin grant');
    assert.equal(report.recommendation.approved, true);
    // The probe calls read-only operations against the real API, never a write.
    const probed = petstore.requests.map((request) => request.method);
    assert.ok(probed.length > 0, 'the probe reached the API');
    assert.deepEqual([...new Set(probed)], ['GET']);
  });
});
