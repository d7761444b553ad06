/**
 * Git-hosted TypeScript MCP servers as people publish them (issue #15): a repository with
 * `@modelcontextprotocol/sdk` and zod as dependencies, a lockfile and a `tsc` build whose output
 * is not committed. Installed from a real git repository at a tag, its dependencies come from the
 * lockfile and its build runs in the sandbox; then an MCP client calls its tool through
 * `quiver serve --stdio`. The same with a pnpm lockfile in a monorepo sub-folder (`--path`). Python
 * servers from git are installed since issue #26 (test/plugins/python-install.test.ts).
 *
 * The fixtures' lockfiles are resolved against the npm registry when the test runs (the same
 * versions Quiver itself depends on, so npm's cache usually has them).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QUIVER_BIN, runBinary } from '../helpers/cli.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const versionOf = (name: string) => (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const SERVER_SOURCE = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'ts-weather', version: '1.0.0' });
server.registerTool(
  'forecast',
  { description: 'Weather forecast for a city', inputSchema: { city: z.string() } },
  async ({ city }: { city: string }) => ({ content: [{ type: 'text', text: \`Sunny in \${city}\` }] }),
);
await server.connect(new StdioServerTransport());
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'dist', rootDir: 'src', strict: true, skipLibCheck: true },
  include: ['src'],
});

function gitEnv(cwd: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };
}
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv(cwd) }).trim();
}

/** Writes the TypeScript server package into `folder` (no lockfile, no build output). */
function writeServerPackage(folder: string, name: string): void {
  mkdirSync(join(folder, 'src'), { recursive: true });
  writeFileSync(join(folder, 'src', 'index.ts'), SERVER_SOURCE);
  writeFileSync(join(folder, 'tsconfig.json'), TSCONFIG);
  writeFileSync(
    join(folder, 'package.json'),
    JSON.stringify(
      {
        name,
        version: '1.0.0',
        type: 'module',
        bin: { [name]: 'dist/index.js' },
        scripts: { build: 'tsc' },
        dependencies: { '@modelcontextprotocol/sdk': versionOf('@modelcontextprotocol/sdk'), zod: versionOf('zod') },
        devDependencies: { typescript: versionOf('typescript'), '@types/node': versionOf('@types/node') },
      },
      null,
      2,
    ),
  );
}

/** Commits `work`, tags it and returns a bare clone's path (the "remote"). */
function publish(root: string, work: string, name: string): string {
  writeFileSync(join(work, '.gitignore'), 'node_modules\ndist\n');
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'v1');
  git(work, 'tag', 'v1.0.0');
  const remote = join(root, `${name}.git`);
  git(root, 'clone', '-q', '--bare', work, remote);
  return remote;
}

async function callThroughStdio(env: Record<string, string>, qualifiedName: string, args: Record<string, unknown>): Promise<string> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [QUIVER_BIN, 'serve', '--stdio', '--exposure', 'all'],
    env: { ...(process.env as Record<string, string>), QUIVER_LOG_LEVEL: 'silent', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'git-build-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === qualifiedName), `listed: ${tools.map((t) => t.name).join(', ')}`);
    const result = (await client.callTool({ name: qualifiedName, arguments: args })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return result.content.map((block) => block.text ?? '').join('');
  } finally {
    await client.close();
  }
}

describe('git sources with dependencies and a build step', { timeout: 600_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  const quiver = (...args: string[]) => runBinary([...args, '--json'], env, 300_000);

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-git-build-'));
    chmodSync(root, 0o755); // the sandbox user must traverse to the plugin cache
    env = { QUIVER_HOME: join(root, 'home'), QUIVER_DATA_DIR: join(root, 'home', 'data') };
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('installs an npm-locked TypeScript server at a tag, builds it in the sandbox, and serves its tool', async () => {
    const work = join(root, 'ts-weather');
    writeServerPackage(work, 'ts-weather');
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: work, stdio: 'pipe' });
    const remote = publish(root, work, 'ts-weather');

    const added = await quiver('plugin', 'add', `file://${remote}`, '--ref', 'v1.0.0', '--name', 'ts-weather');
    assert.equal(added.code, 0, added.stderr);
    const report = JSON.parse(added.stdout) as { plugin: { name: string; source: Record<string, unknown> }; tools: { total: number } };
    assert.equal(report.tools.total, 1);

    assert.equal(await callThroughStdio(env, 'ts-weather__forecast', { city: 'Lisbon' }), 'Sunny in Lisbon');
  });

  it('installs a pnpm-locked server from a monorepo sub-folder with --path', async () => {
    const work = join(root, 'mono');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'mono', private: true, version: '0.0.0' }));
    writeFileSync(join(work, 'pnpm-workspace.yaml'), "packages:\n  - 'packages/*'\n");
    writeServerPackage(join(work, 'packages', 'weather-server'), 'weather-server');
    execFileSync('npm', ['exec', '--yes', '--package=pnpm@9', '--', 'pnpm', 'install', '--lockfile-only', '--ignore-scripts'], { cwd: work, stdio: 'pipe' });
    const remote = publish(root, work, 'mono');

    const added = await quiver('plugin', 'add', `file://${remote}`, '--ref', 'v1.0.0', '--path', 'packages/weather-server', '--name', 'mono-weather');
    assert.equal(added.code, 0, added.stderr);
    assert.equal(await callThroughStdio(env, 'mono-weather__forecast', { city: 'Porto' }), 'Sunny in Porto');

    const escape = await quiver('plugin', 'add', `file://${remote}`, '--path', '../outside', '--name', 'escape');
    assert.equal(escape.code, 2, escape.stderr);
    assert.match(escape.stderr, /--path must be a folder inside the repository/);
  });

  it('limits the install to the registry: a lockfile pointing elsewhere fails, and that host is never reached', async () => {
    let contacted = 0;
    const elsewhere = createServer((_request, response) => {
      contacted++;
      response.end('not a tarball');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', () => resolve()));
    const port = (elsewhere.address() as AddressInfo).port;
    try {
      const work = join(root, 'redirected');
      writeServerPackage(work, 'redirected');
      execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: work, stdio: 'pipe' });
      const lockPath = join(work, 'package-lock.json');
      const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { packages: Record<string, { resolved?: string }> };
      lock.packages['node_modules/zod']!.resolved = `http://127.0.0.1:${port}/zod.tgz`;
      writeFileSync(lockPath, JSON.stringify(lock, null, 2));
      const remote = publish(root, work, 'redirected');
      const added = await quiver('plugin', 'add', `file://${remote}`, '--ref', 'v1.0.0', '--name', 'redirected');
      assert.notEqual(added.code, 0, 'the install must fail');
      assert.match(added.stderr, /dependencies failed/);
      assert.equal(contacted, 0, 'the host outside the allow-list was never contacted');
    } finally {
      elsewhere.close();
    }
  });
});
