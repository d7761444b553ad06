/**
 * One Quiver, many commands (issue #15): while `quiver serve` owns the embedded data folder,
 * other `quiver` commands run through it — real processes, a real folder plugin, relative
 * paths resolved against the caller's directory, a secret piped on stdin — with the same
 * output and exit codes as when the command opens the folder itself.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUIVER_BIN, startServe, stopChild } from '../helpers/cli.ts';
import { createRawPluginFolder } from '../plugins/raw-server.ts';
import { controlSocketPath } from '../../src/store/control-socket.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `quiver ARGS` in `cwd`, with `stdin` piped when given. */
function quiverIn(cwd: string, env: Record<string, string>, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], {
      cwd,
      env: { ...process.env, QUIVER_LOG_LEVEL: 'silent', ...env },
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`quiver ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

describe('CLI commands while quiver serve owns the embedded folder', { timeout: 300_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let server: { child: ChildProcess } | undefined;
  const forwarded: Record<string, Run> = {};

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-forward-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin folder
    await createRawPluginFolder(root, 'echo-plugin');
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
    server = await startServe(['--http', '127.0.0.1:0'], env);
  });

  after(async () => {
    if (server) await stopChild(server.child);
    rmSync(root, { recursive: true, force: true });
  });

  it('runs data commands through the server: workspace, plugin add with a relative folder, enable, tools, select', async () => {
    const socket = controlSocketPath(env.QUIVER_DATA_DIR!);
    assert.ok(existsSync(socket), 'the server opened its control socket');
    assert.equal(statSync(socket).mode & 0o777, 0o600, 'only the owner may connect');

    const workspace = await quiverIn(root, env, ['workspace', 'create', 'research']);
    assert.equal(workspace.code, 0, workspace.stderr);

    // A relative folder: resolved against this command's directory, not the server's.
    const added = await quiverIn(root, env, ['plugin', 'add', './echo-plugin', '--name', 'echo-plugin', '--json']);
    assert.equal(added.code, 0, added.stderr);
    assert.equal((JSON.parse(added.stdout) as { plugin: { name: string } }).plugin.name, 'echo-plugin');

    const enabled = await quiverIn(root, env, ['plugin', 'enable', 'echo-plugin', '--workspace', 'research']);
    assert.equal(enabled.code, 0, enabled.stderr);

    const tools = await quiverIn(root, env, ['tools', 'list', '--plugin', 'echo-plugin', '--json']);
    assert.equal(tools.code, 0, tools.stderr);
    const names = (JSON.parse(tools.stdout) as { items: Array<{ qualifiedName: string }> }).items.map((t) => t.qualifiedName).sort();
    assert.deepEqual(names, ['echo-plugin__echo', 'echo-plugin__fail']);

    const selected = await quiverIn(root, env, ['select', 'echo this text back', '--workspace', 'research', '--k', '1', '--json']);
    assert.equal(selected.code, 0, selected.stderr);
    assert.equal((JSON.parse(selected.stdout) as { tools: Array<{ qualifiedName: string }> }).tools[0]?.qualifiedName, 'echo-plugin__echo');

    forwarded.list = await quiverIn(root, env, ['plugin', 'list', '--json']);
    forwarded.missing = await quiverIn(root, env, ['plugin', 'show', 'no-such-plugin', '--json']);
  });

  it('passes a secret piped on stdin through to the server, never printing it', async () => {
    const stored = await quiverIn(root, env, ['plugin', 'secret', 'set', 'echo-plugin', 'ECHO_TOKEN'], 'top-secret-value\n');
    assert.equal(stored.code, 0, stored.stderr);
    assert.match(stored.stdout, /stored ECHO_TOKEN for echo-plugin/);
    assert.ok(!stored.stdout.includes('top-secret-value') && !stored.stderr.includes('top-secret-value'));
  });

  it('keeps exit codes: not found is 3, a second server on the same folder is 4', async () => {
    assert.equal(forwarded.missing?.code, 3, forwarded.missing?.stderr);
    assert.match(forwarded.missing!.stderr, /"code":"not_found"/);
    const second = await quiverIn(root, env, ['serve', '--http', '127.0.0.1:0']);
    assert.equal(second.code, 4, second.stderr);
  });

  it('prints the same as a local run once the server has stopped', async () => {
    assert.equal(await stopChild(server!.child), 0);
    server = undefined;
    assert.ok(!existsSync(controlSocketPath(env.QUIVER_DATA_DIR!)), 'the socket is removed on stop');
    const local = await quiverIn(root, env, ['plugin', 'list', '--json']);
    assert.equal(local.code, 0, local.stderr);
    // Timestamps of last use may move; the installed plugins must be the same.
    const strip = (text: string) => (JSON.parse(text) as { plugins: Array<Record<string, unknown>> }).plugins.map(({ name, id, version, status, sourceType }) => ({ name, id, version, status, sourceType }));
    assert.deepEqual(strip(local.stdout), strip(forwarded.list!.stdout));
    const missing = await quiverIn(root, env, ['plugin', 'show', 'no-such-plugin', '--json']);
    assert.equal(missing.code, forwarded.missing!.code);
    assert.equal(missing.stderr, forwarded.missing!.stderr);
  });
});
