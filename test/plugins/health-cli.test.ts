/**
 * `quiver plugin health` as a user runs it, with the real binary on a PGlite data folder:
 * persisted call aggregates written by an app that ran calls and closed (so the recorder
 * flushed before the database closed), `--check` starting a healthy and a crashing plugin
 * (exit 1, both reported), a single-plugin check (exit 0), window validation, and the data
 * folder lock held by a running server.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { runBinary, startServe, stopChild } from '../helpers/cli.ts';
import { breakRawPlugin, createRawPluginFolder } from './raw-server.ts';

describe('quiver plugin health', { timeout: 300_000 }, () => {
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'quiver-health-cli-'));
    await chmod(home, 0o755); // sandboxed plugins run as an unprivileged user
    env = { QUIVER_HOME: home, QUIVER_DATA_DIR: join(home, 'data') };
    const sources = join(home, 'sources');
    const steady = await createRawPluginFolder(sources, 'steady');
    const flaky = await createRawPluginFolder(sources, 'flaky');
    for (const [name, folder] of [['steady', steady], ['flaky', flaky]] as const) {
      const added = await runBinary(['plugin', 'add', folder, '--name', name], env, 120_000);
      assert.equal(added.code, 0, added.stderr);
    }

    // Calls through an app on the same data folder; closing it must flush their events.
    const app = await createApp(loadConfig({ ...env, QUIVER_LOG_LEVEL: 'silent' }));
    try {
      const spec = await app.plugins.upstreamSpec('steady');
      await app.supervisor.callTool(spec, 'echo', { text: 'one' });
      await app.supervisor.callTool(spec, 'echo', { text: 'two' });
      await app.supervisor.callTool(spec, 'fail');
    } finally {
      await app.close();
    }
    await breakRawPlugin(flaky);
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('shows the persisted call aggregates per plugin', async () => {
    const json = await runBinary(['plugin', 'health', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.window, '1h');
    const steady = report.plugins.find((p: { name: string }) => p.name === 'steady');
    assert.deepEqual([steady.calls.calls, steady.calls.successes, steady.calls.errors], [3, 2, 1]);
    assert.deepEqual(steady.calls.errorClasses, { tool_error: 1 });
    assert.equal(steady.process, null, 'nothing runs in the CLI process without --check');
    const flaky = report.plugins.find((p: { name: string }) => p.name === 'flaky');
    assert.equal(flaky.calls.calls, 0);

    const text = await runBinary(['plugin', 'health', '--window', '24h'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^calls in the last 24h/);
    assert.match(text.stdout, /NAME\s+STATUS\s+CALLS\s+SUCCESS\s+ERRORS\s+TIMEOUTS\s+REJECTED\s+P50_MS\s+P95_MS\s+SCORE\s+ERROR_CLASSES/);
    assert.match(text.stdout, /steady\s+active\s+3\s+66\.7%\s+1\s+0\s+0\s+\d+\s+\d+\s+\d+\s+tool_error=1/);
    assert.match(text.stdout, /flaky\s+active\s+0\s+0\s+0\s+0/);
  });

  it('--check starts each active plugin: a crashing one makes the exit code 1, both are reported', async () => {
    const json = await runBinary(['plugin', 'health', '--check', '--timeout', '20000', '--json'], env);
    assert.equal(json.code, 1, json.stderr);
    const checks = Object.fromEntries(JSON.parse(json.stdout).checks.map((c: { name: string }) => [c.name, c]));
    assert.deepEqual(Object.keys(checks).sort(), ['flaky', 'steady']);
    assert.equal(checks['steady'].ok, true);
    assert.equal(checks['steady'].tools, 2);
    assert.equal(checks['steady'].error, null);
    assert.ok(checks['steady'].latencyMs > 0);
    assert.equal(checks['flaky'].ok, false);
    assert.equal(checks['flaky'].tools, null);
    assert.match(`${checks['flaky'].error.code}: ${checks['flaky'].error.message}`, /crashing on start|exit|closed/i);

    const text = await runBinary(['plugin', 'health', '--check'], env);
    assert.equal(text.code, 1, text.stderr);
    assert.match(text.stdout, /check \(start, tools\/list, stop; timeout 15000 ms\)/);
    assert.match(text.stdout, /steady\s+ok\s+\d+\s+2/);
    assert.match(text.stdout, /flaky\s+FAILED\s+\d+\s+\S+: /);
  });

  it('checks one plugin by name (exit 0 when it is healthy), and rejects bad input', async () => {
    const one = await runBinary(['plugin', 'health', 'steady', '--check', '--json'], env);
    assert.equal(one.code, 0, one.stderr);
    const report = JSON.parse(one.stdout);
    assert.deepEqual(report.plugins.map((p: { name: string }) => p.name), ['steady']);
    assert.deepEqual(report.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok]), [['steady', true]]);

    assert.equal((await runBinary(['plugin', 'health', 'flaky', '--check'], env)).code, 1);
    assert.equal((await runBinary(['plugin', 'health', 'nope'], env)).code, 3);
    const badWindow = await runBinary(['plugin', 'health', '--window', '2w'], env);
    assert.equal(badWindow.code, 2);
    assert.match(badWindow.stderr, /15m, 1h, 24h or 7d/);
    assert.equal((await runBinary(['plugin', 'health', '--check', '--timeout', '5'], env)).code, 2);
  });

  it('on PGlite, answers through a running server that holds the data folder, and the same once it stopped', async () => {
    const served = await startServe(['--http', '127.0.0.1:0'], env);
    let throughServer: Awaited<ReturnType<typeof runBinary>>;
    try {
      throughServer = await runBinary(['plugin', 'health', '--json'], env);
      assert.equal(throughServer.code, 0, throughServer.stderr);
      const overHttp = await fetch(`${served.url}/api/v1/plugins/health`);
      assert.equal(overHttp.status, 401, 'the HTTP API still wants a key; the CLI went through the local socket');
    } finally {
      await stopChild(served.child);
    }
    const local = await runBinary(['plugin', 'health', '--json'], env);
    assert.equal(local.code, 0, local.stderr);
    const names = (text: string) => ((JSON.parse(text) as { plugins: Array<{ name: string }> }).plugins ?? []).map((p) => p.name).sort();
    assert.deepEqual(names(throughServer.stdout), names(local.stdout));
  });
});
