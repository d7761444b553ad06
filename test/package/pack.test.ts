/**
 * @module test/package/pack
 * The package others install (issue #17): `npm pack` of this tree, installed into an empty
 * project and globally (into a temporary `--prefix`, nothing on the machine is touched), must
 * run `quiver --version` and `quiver serve` to ready with no sources and no tsx, run the
 * library examples of docs/library.md and the README as written from plain JavaScript, and
 * give a TypeScript consumer real types.
 *
 * The pack runs in a copy of the tree: `prepack` rebuilds dist/ from scratch, which must not
 * pull the build out from under other tests running `quiver` from this checkout. Installs use
 * npm's cache first (`--prefer-offline`): the registry is only asked for what the cache lacks.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinModules } from 'node:module';
import pg from 'pg';
import { backends } from '../helpers/backends.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string; files: string[] };
const postgresUrl = process.env.QUIVER_TEST_DATABASE_URL;
const postgresSkip = backends().find((backend) => backend.name === 'postgres')?.skip;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: npm's own `npm_*` variables (set when this runs under `npm test`) would steer the nested npm. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.toLowerCase().startsWith('npm_')) env[key] = value;
  env.PATH = `${dirname(process.execPath)}:${env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/** Runs a command to completion, never throwing: callers assert on the code with stderr in the message. */
function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function assertOk(result: Run, what: string): void {
  assert.equal(result.code, 0, `${what} exited with ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
}

/** Starts `quiver serve --json` and resolves with its ready line; rejects if it exits first. */
function startServe(bin: string, cwd: string, env: Record<string, string>) {
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--json'], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = new Promise<{ url: string; store: string }>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((text) => text.startsWith('{'));
      if (line) resolve(JSON.parse(line) as { url: string; store: string });
    });
    void exited.then((code) => reject(new Error(`quiver serve exited with ${code} before it was ready\nstderr: ${stderr}`)));
  });
  return {
    ready,
    /** SIGTERM, then the exit code. */
    async stop(): Promise<number | null> {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Every file under `directory`, relative to it. */
function listFiles(directory: string, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(directory, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The `js` blocks a document marks as run by this test, with the lines each says it prints (`// → …`). */
function documentedExamples(document: string): { code: string; expected: string[] }[] {
  const text = readFileSync(join(repo, document), 'utf8');
  return [...text.matchAll(/<!-- Runs as written in test\/package\/pack\.test\.ts[^\n]*-->\n```js\n([\s\S]*?)```/g)].map((match) => ({
    code: match[1]!,
    expected: match[1]!.split('\n').flatMap((line) => {
      const at = line.indexOf('// → ');
      return at === -1 ? [] : [line.slice(at + '// → '.length)];
    }),
  }));
}

describe('the packed package, installed', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'quiver-pack-'));
  const source = join(work, 'source');
  const project = join(work, 'project');
  const globalPrefix = join(work, 'global');
  let tarball = '';
  let packedFiles: string[] = [];
  let packOutput = '';

  before(async () => {
    // The copy holds what `files` ships plus what the build needs, never a dist/ to reuse.
    mkdirSync(source);
    const inputs = new Set([...manifest.files, 'package.json', 'src', 'scripts', 'tsconfig.json', 'tsconfig.build.json']);
    inputs.delete('dist');
    for (const input of inputs) {
      if (existsSync(join(repo, input))) cpSync(join(repo, input), join(source, input), { recursive: true });
    }
    symlinkSync(join(repo, 'node_modules'), join(source, 'node_modules'), 'dir');
    const pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: source });
    assertOk(pack, 'npm pack');
    packOutput = pack.stderr;
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed!.filename);
    packedFiles = packed!.files.map((file) => file.path);

    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'quiver-consumer', private: true, type: 'module' }));
    const flags = ['--prefer-offline', '--no-audit', '--no-fund'];
    const [local, global] = await Promise.all([
      run('npm', ['install', ...flags, tarball], { cwd: project }),
      run('npm', ['install', '--global', '--prefix', globalPrefix, ...flags, tarball], { cwd: work }),
    ]);
    assertOk(local, 'npm install TARBALL');
    assertOk(global, 'npm install --global TARBALL');
  }, { timeout: 480_000 });

  after(() => rmSync(work, { recursive: true, force: true }));

  test('npm pack builds once and ships the compiled build, declarations, SQL, web files, template and bench data, and no sources, benchmarks or test backend', () => {
    assert.equal((packOutput.match(/\[quiver\] built dist\/\n/g) ?? []).length, 1, `prepack builds, prepare sees a fresh build:\n${packOutput}`);
    const files = new Set(packedFiles);
    const migrations = readdirSync(join(repo, 'src/store/migrations')).filter((name) => name.endsWith('.sql'));
    assert.ok(migrations.length > 0);
    for (const required of [
      'package.json', 'README.md', 'docs/library.md', 'bin/quiver.mjs', 'bin/entry.mjs',
      'dist/.build-stamp', 'dist/index.js', 'dist/index.d.ts', 'dist/public/core.js', 'dist/public/core.d.ts', 'dist/cli/main.js', 'dist/bundle/cli.js', 'dist/bundle/modules.json',
      'dist/store/pglite-template.tar.gz', 'dist/store/pglite-template.json', 'dist/web/index.html', 'dist/web/app.js',
      'bench/data/README.md',
      ...migrations.map((name) => `dist/store/migrations/${name}`),
    ]) {
      assert.ok(files.has(required), `${required} is in the package`);
    }
    // Issue #28: the benchmarks and the gateway's test backend run from a checkout, never from the package.
    const unwanted = packedFiles.filter((path) => /^(src|test|scripts|node_modules|dist\/cli\/bench|dist\/gateway\/testing)\//.test(path) || /\.test\.(ts|js)$/.test(path) || path.endsWith('.ts') && !path.endsWith('.d.ts'));
    assert.deepEqual(unwanted, []);
  });

  test('every package the build imports at run time is a dependency, and tsx is not one', () => {
    const installed = join(project, 'node_modules/quiver');
    const packageJson = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.equal(packageJson.dependencies.tsx, undefined);
    const builtins = new Set(builtinModules);
    const imported = new Set<string>();
    for (const file of listFiles(join(installed, 'dist')).filter((path) => path.endsWith('.js'))) {
      const code = readFileSync(join(installed, 'dist', file), 'utf8');
      for (const match of code.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
        const specifier = match[1] ?? match[2]!;
        // `quiver` itself appears in the @example comments; a package may import itself by name.
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier) || specifier === 'quiver' || specifier.startsWith('quiver/')) continue;
        imported.add(packageOf(specifier));
      }
    }
    assert.ok(imported.has('@electric-sql/pglite') && imported.has('zod'), `the scan sees the build's imports: ${[...imported].join(', ')}`);
    assert.deepEqual([...imported].filter((name) => !(name in packageJson.dependencies)).sort(), []);
  });

  test('quiver --version from a global install (temporary prefix) runs from dist with no sources and no tsx', async () => {
    const installed = join(globalPrefix, 'lib/node_modules/quiver');
    assert.ok(existsSync(join(installed, 'dist/cli/main.js')));
    assert.equal(existsSync(join(installed, 'src')), false);
    assert.equal(existsSync(join(installed, 'node_modules/tsx')), false);
    const result = await run(join(globalPrefix, 'bin/quiver'), ['--version'], { cwd: work });
    assertOk(result, 'quiver --version');
    assert.equal(result.stdout, `quiver ${manifest.version}\n`);
  });

  test('quiver --version and quiver serve from a project install, on a PGlite folder', async () => {
    const bin = join(project, 'node_modules/.bin/quiver');
    assert.equal(existsSync(join(project, 'node_modules/tsx')), false, 'tsx is not installed with the package');
    const version = await run(bin, ['--version'], { cwd: project });
    assertOk(version, 'quiver --version');
    assert.equal(version.stdout, `quiver ${manifest.version}\n`);

    const home = join(work, 'home-pglite');
    const server = startServe(bin, project, { QUIVER_HOME: home, QUIVER_LOG_LEVEL: 'silent' });
    try {
      const ready = await server.ready;
      assert.equal(ready.store, `PGlite (${join(home, 'data')})`);
      assert.equal((await fetch(`${ready.url}/healthz`)).status, 200);
      const ui = await fetch(`${ready.url}/ui/`);
      assert.equal(ui.status, 200, 'the admin UI is served from the installed dist/web');
      assert.match(await ui.text(), /<html/i);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('quiver serve from a project install, on PostgreSQL', { skip: postgresSkip ?? false }, async () => {
    if (!postgresUrl) throw new Error('CI=true but QUIVER_TEST_DATABASE_URL is not set');
    const name = `quiver_pack_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    const server = startServe(join(project, 'node_modules/.bin/quiver'), project, {
      QUIVER_HOME: join(work, 'home-postgres'), QUIVER_DATABASE_URL: url.toString(), QUIVER_LOG_LEVEL: 'silent',
    });
    try {
      const ready = await server.ready;
      assert.equal(ready.store, `PostgreSQL (${url.host}/${name})`);
      assert.equal((await fetch(`${ready.url}/healthz`)).status, 200);
      // The installed dist/store/migrations were applied to the new database, all of them.
      const store = new pg.Client({ connectionString: url.toString() });
      await store.connect();
      try {
        const { rows } = await store.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
        const shipped = readdirSync(join(project, 'node_modules/quiver/dist/store/migrations')).filter((file) => file.endsWith('.sql'));
        assert.ok(shipped.length > 0);
        assert.equal(rows.length, shipped.length);
      } finally {
        await store.end();
      }
    } finally {
      assert.equal(await server.stop(), 0);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  test('the library examples of docs/library.md and the README run as written from plain JavaScript and print what they say', async () => {
    const examples = [
      ...documentedExamples('docs/library.md').map((example, index) => ({ ...example, name: `docs/library.md example ${index + 1}` })),
      ...documentedExamples('README.md').map((example, index) => ({ ...example, name: `README.md example ${index + 1}` })),
    ];
    assert.equal(examples.length, 3, 'docs/library.md marks two examples, the README one');
    for (const [index, example] of examples.entries()) {
      assert.ok(example.expected.length > 0, `${example.name} says what it prints`);
      const file = join(project, `example-${index + 1}.mjs`);
      writeFileSync(file, example.code);
      const result = await run(process.execPath, [file], { cwd: project });
      assertOk(result, example.name);
      assert.deepEqual(result.stdout.trimEnd().split('\n'), example.expected, `${example.name} prints what it says`);
    }
  });

  test('the type declarations give a TypeScript consumer real types', async () => {
    writeFileSync(join(project, 'consumer.ts'), [
      "import { createApp, loadConfig, selectTools, type SelectionResult } from 'quiver';",
      "import { formatTools, QuiverError } from 'quiver/core';",
      "const app = await createApp(loadConfig({ QUIVER_DATABASE_URL: 'memory://' }));",
      "const result: SelectionResult = await selectTools(app.selection, { query: 'x', provider: 'gemini' });",
      'const count: number = result.tools.length;',
      "const code: string = new QuiverError('not_found', 'gone').code;",
      "const { names } = formatTools([], 'openai');",
      '// @ts-expect-error: a number is not a provider; were the declarations `any`, this line would be an unused expectation',
      'formatTools([], 42);',
      '// @ts-expect-error: tools is an array',
      'const wrong: string = result.tools;',
      'await app.close();',
      'export { count, code, names, wrong };',
    ].join('\n'));
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
        skipLibCheck: false, types: ['node'], typeRoots: [join(repo, 'node_modules/@types')],
      },
      files: ['consumer.ts'],
    }));
    const result = await run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project });
    assertOk(result, 'tsc on the consumer');
  });
});
