/**
 * Python MCP servers installed the way they are published (issue #26), with the real pip as this
 * machine configures it and the real sandbox: a server on the official Python SDK (`mcp` 2.x,
 * `MCPServer`) in a git repository with pyproject.toml and a dependency, installed by URL at a
 * tag, listed and called through `quiver serve --stdio`; the same package installed by name from
 * the package index (`pypi:NAME==VERSION`); an imported `uvx NAME` entry; a local folder with
 * pyproject.toml and no venv, given one in the cache keyed by its content (a fresh one on update
 * after an edit); and a Python repository
 * on a machine without a usable Python, which reports what is missing.
 *
 * The package index pip is configured with here has `mcp` but no published Python MCP server with
 * a console script (mcp-server-time, mcp-server-fetch are not on it), so the package is built into
 * a wheel folder of this run and added to pip's own find-links through PIP_FIND_LINKS, in the
 * test's environment only. PIP_RETRIES=0 (also pip's own option) makes an index host this machine
 * cannot resolve fail at once instead of after five back-offs per package.
 */
import { before, after, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';
import { describeEachBackend, processStore } from '../helpers/backends.ts';

const SERVER = `from mcp.server import MCPServer

app = MCPServer("py-echo")


@app.tool()
def shout(text: str) -> str:
    """Upper-cases the text it is given."""
    return text.upper()


def main() -> None:
    app.run()


if __name__ == "__main__":
    main()
`;

const PYPROJECT = `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "py-echo"
version = "1.0.0"
description = "Echoes text, upper-cased"
requires-python = ">=3.10"
dependencies = ["mcp>=2"]

[project.scripts]
py-echo = "py_echo.server:main"

[tool.setuptools]
packages = ["py_echo"]
`;

function git(cwd: string, ...args: string[]): string {
  const env = { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };
  return execFileSync('git', args, { cwd, encoding: 'utf8', env }).trim();
}

async function callThroughStdio(env: Record<string, string>, qualifiedName: string, args: Record<string, unknown>): Promise<string> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'],
    env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'python-install-test', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  try {
    const { tools } = await client.listTools(undefined, { timeout: 120_000 });
    assert.ok(tools.some((tool) => tool.name === qualifiedName), `listed: ${tools.map((t) => t.name).join(', ')}`);
    const result = (await client.callTool({ name: qualifiedName, arguments: args }, undefined, { timeout: 120_000 })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return result.content.map((block) => block.text ?? '').join('');
  } finally {
    await client.close();
  }
}

let root: string;
let remote: string;
let wheels: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'quiver-python-'));
  chmodSync(root, 0o755); // the sandbox user must traverse to the plugin cache
  const work = join(root, 'py-echo');
  mkdirSync(join(work, 'py_echo'), { recursive: true });
  writeFileSync(join(work, 'py_echo', '__init__.py'), '');
  writeFileSync(join(work, 'py_echo', 'server.py'), SERVER);
  writeFileSync(join(work, 'pyproject.toml'), PYPROJECT);
  writeFileSync(join(work, '.gitignore'), '*.egg-info\nbuild\n');
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'v1');
  git(work, 'tag', 'v1.0.0');
  remote = join(root, 'py-echo.git');
  git(root, 'clone', '-q', '--bare', work, remote);
  // The "published" package: a wheel of the same project, in a folder pip is pointed at.
  wheels = join(root, 'wheels');
  execFileSync('python3', ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '--wheel-dir', wheels, work], { env: { ...process.env, PIP_RETRIES: '0' }, stdio: 'pipe', timeout: 300_000 });
  assert.ok(readdirSync(wheels).some((file) => /^py_echo-1\.0\.0-.*\.whl$/.test(file)), 'the wheel was built');
  rmSync(join(work, 'build'), { recursive: true, force: true });
});
after(() => rmSync(root, { recursive: true, force: true }));

describeEachBackend('Python plugins', (backend) => {
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  const quiver = (...args: string[]) => runBinary([...args, '--json'], env, 600_000);

  before(async () => {
    const store = await processStore(backend);
    drop = store.drop;
    const home = mkdtempSync(join(root, `home-${backend.name}-`));
    chmodSync(home, 0o755);
    env = {
      QUIVER_HOME: home,
      QUIVER_DATA_DIR: join(home, 'data'),
      PIP_RETRIES: '0',
      PIP_FIND_LINKS: [wheels, process.env.PIP_FIND_LINKS ?? ''].join(' ').trim(),
      ...store.env,
    };
  });
  after(async () => drop());

  it('installs a Python server on the official SDK from git at a tag, lists and calls it', { timeout: 900_000 }, async () => {
    const added = await quiver('plugin', 'add', `file://${remote}`, '--ref', 'v1.0.0', '--name', 'py-echo');
    assert.equal(added.code, 0, added.stderr);
    const report = JSON.parse(added.stdout) as { plugin: { name: string; version: string; source: Record<string, unknown> }; tools: { total: number } };
    assert.equal(report.tools.total, 1);
    assert.match(report.plugin.version, /^1\.0\.0\+[0-9a-f]{12}$/);
    assert.equal(report.plugin.source['packageName'], 'py-echo');
    assert.deepEqual(report.plugin.source['pythonLaunch'], { command: './.quiver-venv/bin/python', args: ['.quiver-venv/bin/py-echo'] });

    const list = JSON.parse((await quiver('plugin', 'list')).stdout) as { plugins: Array<{ name: string; status: string; sourceType: string }> };
    assert.ok(list.plugins.some((plugin) => plugin.name === 'py-echo' && plugin.status === 'active' && plugin.sourceType === 'git'));
    assert.equal(await callThroughStdio(env, 'py-echo__shout', { text: 'hello' }), 'HELLO');
  });

  it('installs the same package by name from the package index (pypi:NAME==VERSION) and from an imported uvx entry', { timeout: 900_000 }, async () => {
    const added = await quiver('plugin', 'add', 'pypi:py-echo==1.0.0', '--name', 'py-echo-index');
    assert.equal(added.code, 0, added.stderr);
    const report = JSON.parse(added.stdout) as { plugin: { version: string; sourceType: string; source: Record<string, unknown> }; tools: { total: number } };
    assert.equal(report.tools.total, 1);
    assert.equal(report.plugin.version, '1.0.0');
    assert.equal(report.plugin.sourceType, 'pypi');
    assert.match(String(report.plugin.source['cachePath']), /\/pypi\/py-echo@1\.0\.0$/);
    assert.equal(await callThroughStdio(env, 'py-echo-index__shout', { text: 'index' }), 'INDEX');

    // One client configuration with a uvx entry, a python -m entry, a docker entry and a Deno one:
    // the dry run and the real run say the same thing of each, and the table is what happened.
    const config = join(env['QUIVER_HOME']!, 'claude_desktop_config.json');
    writeFileSync(config, JSON.stringify({
      mcpServers: {
        echo: { command: 'uvx', args: ['py-echo'] },
        'echo-module': { command: 'python3', args: ['-m', 'py_echo.server'] },
        github: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'not-a-real-token' } },
        deno: { command: 'deno', args: ['run', '-A', 'server.ts'] },
      },
    }));
    type Outcome = { entry: string; plugin: string; status: string; reason?: string };
    const plan = (stdout: string) => (JSON.parse(stdout) as { servers: Outcome[] }).servers.map(({ entry, plugin, status, reason }) => [entry, plugin, status.replace(/^would-install$/, 'installed'), reason ?? '']);
    const dry = await quiver('import', config, '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    const imported = await quiver('import', config);
    assert.equal(imported.code, 1, `exit 1: the docker entry's image cannot be pulled here; ${imported.stderr}`);
    // The docker entry is the one that may differ: podman runs here (scripts/provision/system.sh), so
    // the dry run plans a container plugin whose image it would pull, and the real run fails to pull
    // it (no registry is reachable); test/plugins/container-plugin.test.ts runs a local image.
    const others = (stdout: string) => plan(stdout).filter(([entry]) => entry !== 'github');
    assert.deepEqual(others(imported.stdout), others(dry.stdout), 'the dry run and the real run agree');
    const byEntry = Object.fromEntries((JSON.parse(imported.stdout) as { servers: Outcome[] }).servers.map((outcome) => [outcome.entry, outcome]));
    assert.deepEqual(Object.fromEntries(Object.entries(byEntry).map(([entry, outcome]) => [entry, outcome.status])), { echo: 'installed', 'echo-module': 'installed', github: 'failed', deno: 'skipped' });
    const dryGithub = (JSON.parse(dry.stdout) as { servers: Array<Outcome & { detail?: string }> }).servers.find((outcome) => outcome.entry === 'github')!;
    assert.equal(dryGithub.status, 'would-install');
    assert.match(dryGithub.detail ?? '', /the engine does not have the image yet: the import pulls it/);
    assert.match(byEntry['github']!.reason!, /(docker|podman) cannot find or pull the image 'ghcr\.io\/github\/github-mcp-server'/);
    assert.ok(!imported.stdout.includes('not-a-real-token'), 'the imported secret is not echoed');
    assert.match(byEntry['deno']!.reason!, /Deno/);
    assert.equal(await callThroughStdio(env, 'echo__shout', { text: 'uvx' }), 'UVX');
    assert.equal(await callThroughStdio(env, 'echo-module__shout', { text: 'module' }), 'MODULE');
    // The table as people read it: one line each, what happened.
    const table = await runBinary(['import', config, '--dry-run'], env, 600_000);
    assert.match(table.stdout, /^refused\s+echo\s+echo\s+a plugin named 'echo' is already installed/m);
    assert.match(table.stdout, /^would install\s+github\s+github\s+from container:ghcr\.io\/github\/github-mcp-server/m);
  });

  it('gives a local folder with pyproject.toml a venv in the cache keyed by its content; a changed folder gets a fresh one on update', { timeout: 900_000 }, async () => {
    // The user's folder: the project alone, no venv of its own.
    const folder = join(root, `folder-${backend.name}`);
    mkdirSync(join(folder, 'py_echo'), { recursive: true });
    writeFileSync(join(folder, 'py_echo', '__init__.py'), '');
    writeFileSync(join(folder, 'py_echo', 'server.py'), SERVER);
    writeFileSync(join(folder, 'pyproject.toml'), PYPROJECT);
    const added = await quiver('plugin', 'add', folder, '--name', 'py-folder');
    assert.equal(added.code, 0, added.stderr);
    const report = JSON.parse(added.stdout) as { plugin: { version: string; sourceType: string; source: Record<string, unknown> }; tools: { total: number } };
    assert.equal(report.plugin.sourceType, 'path');
    assert.equal(report.tools.total, 1);
    const first = String(report.plugin.source['cachePath']);
    assert.match(first, /\/pyfolder\/[0-9a-f]{24}$/);
    assert.equal(report.plugin.source['inPlace'], undefined, 'the cache copy is not the user\'s folder');
    assert.match(report.plugin.version, new RegExp(`^1\\.0\\.0\\+${String(report.plugin.source['folderHash']).slice(0, 12)}$`));
    assert.ok(!readdirSync(folder).some((name) => name === '.quiver-venv' || name.endsWith('.egg-info') || name === 'build'), `the user's folder was written to: ${readdirSync(folder).join(', ')}`);
    assert.equal(await callThroughStdio(env, 'py-folder__shout', { text: 'folder' }), 'FOLDER');

    writeFileSync(join(folder, 'py_echo', 'server.py'), SERVER.replace('text.upper()', 'text.upper() + "!"'));
    const updated = await quiver('plugin', 'update', 'py-folder');
    assert.equal(updated.code, 0, updated.stderr);
    const shown = JSON.parse((await quiver('plugin', 'show', 'py-folder')).stdout) as { plugin?: { source: Record<string, unknown> }; source?: Record<string, unknown> };
    const second = String((shown.plugin?.source ?? shown.source)?.['cachePath']);
    assert.match(second, /\/pyfolder\/[0-9a-f]{24}$/);
    assert.notEqual(second, first, 'a changed folder gets a fresh copy and venv');
    assert.equal(await callThroughStdio(env, 'py-folder__shout', { text: 'again' }), 'AGAIN!');
  });

  it('reports what is missing when no usable Python is on the PATH, leaving nothing installed', { timeout: 300_000 }, async () => {
    // A commit of its own (the cache already holds v1.0.0's folder, which would be reused).
    const work = join(root, 'py-echo');
    writeFileSync(join(work, `NOTE-${backend.name}.md`), 'no Python here\n');
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', `note ${backend.name}`);
    git(work, 'tag', `no-python-${backend.name}`);
    git(work, 'push', '-q', remote, `no-python-${backend.name}`);
    // A PATH with git and nothing else: no python3 at all.
    const bin = join(root, `bin-${backend.name}`);
    mkdirSync(bin, { recursive: true });
    symlinkSync(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    const added = await runBinary(['plugin', 'add', `file://${remote}`, '--ref', `no-python-${backend.name}`, '--name', 'no-python', '--json'], { ...env, PATH: bin }, 300_000);
    assert.notEqual(added.code, 0);
    const error = (JSON.parse(added.stderr.trim().split('\n').at(-1)!) as { error: { message: string; details?: { step?: string } } }).error;
    assert.match(error.message, /Python MCP server, and no python3 was found on the PATH/);
    assert.match(error.message, /3\.10 or newer with the venv module/);
    assert.equal(error.details?.step, 'dependencies');
    const list = JSON.parse((await quiver('plugin', 'list')).stdout) as { plugins: Array<{ name: string }> };
    assert.ok(!list.plugins.some((plugin) => plugin.name === 'no-python'));
  });
});
