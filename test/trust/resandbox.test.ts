/**
 * Dynamic trust that acts (issue #23): a dormant plugin installed from a folder and granted
 * COMMUNITY runs in the real sandbox with an empty allow-list; when a note carries its trigger
 * phrase it asks its egress proxy for 127.0.0.1:5432, :6379 and a hub port. Its first denied
 * connection alone takes its runtime trust below the threshold: within seconds its process is
 * stopped and its next one runs under the stricter profile (UNVERIFIED: no network), the
 * crossing is recorded (who, what, why) and a re-verification is queued. The same measurement
 * is `quiver bench`'s `resandbox` figure (src/cli/bench/resandbox.ts).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.ts';
import { measureResandbox } from '../../src/cli/bench/resandbox.ts';
import { loadConfig } from '../../src/config.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import type { Database } from '../../src/store/database.ts';
import { describeEachBackend } from '../helpers/backends.ts';
import { skipUnless } from '../helpers/requirements.ts';

const host = detectHost();
const skip = skipUnless(!host.bubblewrap && `bubblewrap is unusable: ${host.bubblewrapProblem}`);

describeEachBackend('a dormant plugin is re-sandboxed by its first denied connection', (backend) => {
  let db: Database;
  let home: string;
  let app: App;

  before(async () => {
    db = await backend.open();
    home = await mkdtemp(join(tmpdir(), 'quiver-resandbox-'));
    await chmod(home, 0o755);
    // No periodic evaluation: only the denied connection can trigger it.
    app = await createApp(loadConfig({ ...process.env, QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent', QUIVER_TRUST_EVALUATE_INTERVAL_MS: '0' }), { db });
  });
  after(async () => {
    await app?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('stops its process within seconds; its next process has no network; the decision is recorded and re-verification queued', { skip, timeout: 400_000 }, async () => {
    const run = await measureResandbox(app, { root: home, name: 'dormant', timeoutMs: 30_000 });
    assert.deepEqual(run.before, { level: 'COMMUNITY', sandboxed: true, network: 'allow-list' });
    assert.deepEqual(run.after, { level: 'UNVERIFIED', sandboxed: true, network: 'none' });
    assert.ok(run.deniedTargets.includes('127.0.0.1:5432'), run.deniedTargets.join(', '));
    assert.ok(run.runtimeScore < 50, `runtime score ${run.runtimeScore}`);
    assert.ok(run.resandboxMs >= 0 && run.resandboxMs < 30_000, `re-sandboxed after ${run.resandboxMs} ms`);
    const decision = run.decision as { by: string; action: string; why: string };
    assert.equal(decision.by, 'dynamic trust');
    assert.match(decision.action, /re-sandboxed/);
    assert.match(decision.why, /below threshold 50; denied internal targets: .*127\.0\.0\.1:5432/);
    // This app runs no job worker: the verification queued at install is still queued, and the
    // crossing's request joins it (one verification per plugin version while queued).
    const { rows } = await db.query<{ status: string }>("SELECT status FROM jobs WHERE payload->>'pluginId' = $1", [(await app.trust.view('dormant')).plugin.id]);
    assert.ok(rows.some((row) => row.status === 'queued'), 'a verification is queued');
  });
});
