import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBinary, runInProcess, startServe, stopChild } from '../helpers/cli.ts';

describe('quiver CLI (in process)', () => {
  it('prints help listing the commands, and exits 2 on an unknown command', async () => {
    const help = await runInProcess(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /\n {2}serve +Start Quiver/);
    assert.match(help.stdout, /Exit codes/);
    const unknown = await runInProcess(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  });

  it('rejects unknown options with usage and exit 2', async () => {
    const result = await runInProcess(['keys', 'list', '--bogus']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Usage: quiver keys list/);
  });

  it('creates and lists API keys on a throwaway store, with --json', async () => {
    const created = await runInProcess(['keys', 'create', 'ci', '--scope', 'read', '--database-url', 'memory://', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const body = JSON.parse(created.stdout) as { key: string; record: { scopes: string[] } };
    assert.match(body.key, /^qvr_/);
    assert.deepEqual(body.record.scopes, ['read']);
    const bad = await runInProcess(['keys', 'create', 'ci', '--scope', 'root', '--database-url', 'memory://', '--json']);
    assert.equal(bad.code, 2);
    assert.deepEqual(Object.keys((JSON.parse(bad.stderr.trim()) as { error: object }).error).sort(), ['code', 'message']);
  });

  it('fails fast on an invalid environment, naming the variable', async () => {
    const result = await runInProcess(['keys', 'list'], { QUIVER_PORT: 'abc', QUIVER_DATABASE_URL: 'memory://' });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /QUIVER_PORT/);
  });
});

describe('quiver binary (out of process)', () => {
  it('answers --help', async () => {
    const result = await runBinary(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: quiver <command>/);
  });

  it('serves the API on a data folder, prints the admin key once, and refuses a second process on the same folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-serve-'));
    try {
      const first = await startServe(['--data', dir, '--http', '127.0.0.1:0']);
      try {
        const key = /qvr_[A-Za-z0-9_-]+/.exec(first.stderr())?.[0];
        assert.ok(key, 'the first start prints an admin key');
        assert.equal((await fetch(`${first.url}/healthz`)).status, 200);
        const whoami = await fetch(`${first.url}/api/v1/whoami`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(whoami.status, 200);

        const second = await runBinary(['serve', '--data', dir, '--http', '127.0.0.1:0', '--json']);
        assert.equal(second.code, 4);
        assert.equal((JSON.parse(second.stderr.trim()) as { error: { code: string } }).error.code, 'data_dir_locked');
        // The first process still answers after the refused attempt.
        assert.equal((await fetch(`${first.url}/api/v1/whoami`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
      } finally {
        assert.equal(await stopChild(first.child), 0);
      }
      // A restart keeps the key (no new admin key printed) and the old key still works.
      const again = await startServe(['--data', dir, '--http', '127.0.0.1:0']);
      try {
        assert.doesNotMatch(again.stderr(), /qvr_/);
      } finally {
        await stopChild(again.child);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to bind every interface without the explicit flag', async () => {
    const result = await runBinary(['serve', '--database-url', 'memory://', '--http', '0.0.0.0:0']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /dangerously-bind-all-interfaces/);
  });
});
