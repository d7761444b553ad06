/**
 * @module test/plugins/helpers
 * Real things for the plugin tests: git repositories built with the real `git` from the
 * fixtures in test/fixtures/git-plugins (a bare "remote" plus a working clone to push new
 * commits from), and a plugins service wired to a real catalog and a real supervisor.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createCatalogService, type CatalogService } from '../../src/catalog/index.ts';
import { createSupervisor, type Supervisor } from '../../src/runtime/supervisor.ts';
import type { Database } from '../../src/store/database.ts';
import { processOwner, type ProcessOwner } from '../../src/store/process-owner.ts';
import { createPluginService, type PluginService, type PluginServiceOptions } from '../../src/plugins/service.ts';
import { createSecretBox } from '../../src/plugins/secret-box.ts';
import type { Logger } from '../../src/core/logger.ts';

const run = promisify(execFile);

/** The repository root and its node_modules (fixture servers import the SDK from there). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const nodeModules = join(repoRoot, 'node_modules');
const fixtures = join(repoRoot, 'test/fixtures/git-plugins');

/** A folder under /tmp that the sandbox user can traverse (mkdtemp makes 0700 folders). */
export async function openTempDir(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), `quiver-${prefix}-`));
  await chmod(folder, 0o755);
  return folder;
}

/** `sdk.mjs`: re-exports the SDK pieces the fixture server uses, by absolute file URL. */
function sdkShim(): string {
  const url = (path: string) => pathToFileURL(join(nodeModules, '@modelcontextprotocol/sdk/dist/esm', path)).href;
  return [
    `export { Server } from '${url('server/index.js')}';`,
    `export { StdioServerTransport } from '${url('server/stdio.js')}';`,
    `export { CallToolRequestSchema, ListToolsRequestSchema, ListResourcesRequestSchema, ListPromptsRequestSchema } from '${url('types.js')}';`,
    '',
  ].join('\n');
}

async function git(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_AUTHOR_NAME: 'Quiver Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Quiver Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  });
  return stdout.trim();
}

/** A plugin repository: a bare remote and a working clone. */
export interface PluginRepo {
  /** Path of the bare repository (what `plugin add` is given). */
  remote: string;
  work: string;
  /** The commit HEAD of main points at. */
  head(): Promise<string>;
  /** Writes files, commits, optionally tags, pushes; returns the new commit. */
  commit(files: Record<string, string>, message: string, options?: { tag?: string; branch?: string }): Promise<string>;
  /** Replaces files with symbolic links (`file` → `target`), commits and pushes; returns the new commit. */
  commitLinks(links: Record<string, string>, message: string): Promise<string>;
  /** Reads a file of the working clone. */
  read(file: string): Promise<string>;
}

/** Builds a git repository from a fixture folder (first commit on `main`, optionally tagged). */
export async function createPluginRepo(root: string, fixture: string, options: { tag?: string; name?: string } = {}): Promise<PluginRepo> {
  const name = options.name ?? fixture;
  const remote = join(root, 'remotes', `${name}.git`);
  const work = join(root, 'work', name);
  await mkdir(remote, { recursive: true });
  await git(['init', '--quiet', '--bare', '--initial-branch=main', remote], root);
  await mkdir(work, { recursive: true });
  await git(['init', '--quiet', '--initial-branch=main'], work);
  await cp(join(fixtures, fixture), work, { recursive: true });
  await cp(join(fixtures, 'server.mjs'), join(work, 'server.mjs'));
  await writeFile(join(work, 'sdk.mjs'), sdkShim());
  await git(['add', '-A'], work);
  await git(['commit', '--quiet', '-m', `${fixture}: first version`], work);
  if (options.tag) await git(['tag', options.tag], work);
  await git(['remote', 'add', 'origin', remote], work);
  await git(['push', '--quiet', 'origin', 'main', '--tags'], work);
  const repo: PluginRepo = {
    remote,
    work,
    head: () => git(['rev-parse', 'HEAD'], work),
    async commit(files, message, commitOptions = {}) {
      if (commitOptions.branch) {
        const branch = commitOptions.branch;
        await git(['checkout', '--quiet', branch], work).catch(() => git(['checkout', '--quiet', '-b', branch], work));
      }
      for (const [file, content] of Object.entries(files)) await writeFile(join(work, file), content);
      await git(['add', '-A'], work);
      await git(['commit', '--quiet', '-m', message], work);
      if (commitOptions.tag) await git(['tag', commitOptions.tag], work);
      await git(['push', '--quiet', 'origin', commitOptions.branch ?? 'main', '--tags'], work);
      const sha = await git(['rev-parse', 'HEAD'], work);
      if (commitOptions.branch) await git(['checkout', '--quiet', 'main'], work);
      return sha;
    },
    async commitLinks(links, message) {
      for (const [file, target] of Object.entries(links)) {
        await rm(join(work, file), { force: true });
        await symlink(target, join(work, file));
      }
      await git(['add', '-A'], work);
      await git(['commit', '--quiet', '-m', message], work);
      await git(['push', '--quiet', 'origin', 'main'], work);
      return git(['rev-parse', 'HEAD'], work);
    },
    read: (file) => readFile(join(work, file), 'utf8'),
  };
  return repo;
}

/** Builds a plain plugin folder (no git) from a fixture; `files` overrides or adds files. */
export async function createPluginFolder(root: string, fixture: string, name: string, files: Record<string, string> = {}): Promise<string> {
  const folder = join(root, 'folders', name);
  await mkdir(folder, { recursive: true });
  await cp(join(fixtures, fixture), folder, { recursive: true });
  await cp(join(fixtures, 'server.mjs'), join(folder, 'server.mjs'));
  await writeFile(join(folder, 'sdk.mjs'), sdkShim());
  for (const [file, content] of Object.entries(files)) await writeFile(join(folder, file), content);
  return folder;
}

/** A logger that keeps every line as JSON text, to prove what was (not) logged. */
export function createCapturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const make = (bindings: object): Logger => {
    const write = (level: string) => (context: object, message?: string) => {
      lines.push(JSON.stringify({ level, ...bindings, ...context, msg: message }));
    };
    return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: (more) => make({ ...bindings, ...more }) };
  };
  return Object.assign(make({}), { lines });
}

/** A plugins service over a real catalog and a real supervisor, with its own cache folder. */
export interface PluginsHarness {
  plugins: PluginService;
  catalog: CatalogService;
  supervisor: Supervisor;
  cacheDir: string;
  close(): Promise<void>;
}

/** Wires the service the way the app does (sandboxed discovery, a random secret key). */
export async function createHarness(
  db: Database,
  options: { logger?: Logger; discoveryTimeoutMs?: number; npmCacheDir?: string; stateRoot?: string; extra?: Partial<PluginServiceOptions> } = {},
): Promise<PluginsHarness> {
  const cacheDir = await openTempDir('plugin-cache');
  const catalog = createCatalogService({ db });
  const supervisor = createSupervisor({
    startTimeoutMs: 15_000,
    stopGraceMs: 200,
    ...(options.stateRoot === undefined ? {} : { sandbox: { stateRoot: options.stateRoot } }),
  });
  const plugins = createPluginService({
    // The machine's environment for git and npm, as the app hands over config.commandEnv.
    commandEnv: process.env,
    db,
    catalog,
    supervisor,
    cacheDir,
    secrets: createSecretBox(randomBytes(32)),
    readOnlyPaths: [nodeModules],
    discoveryTimeoutMs: options.discoveryTimeoutMs ?? 20_000,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.npmCacheDir === undefined ? {} : { npmCacheDir: options.npmCacheDir }),
    ...options.extra,
  });
  return {
    plugins,
    catalog,
    supervisor,
    cacheDir,
    async close() {
      await supervisor.close();
      await rm(cacheDir, { recursive: true, force: true });
    },
  };
}

/** The calc fixture's tools with a third one, as a new commit would ship them. */
export function calcFixtureWith(extra: Array<{ name: string; description: string; op: string }>): string {
  return `${JSON.stringify(
    {
      name: 'calc',
      version: '1.1.0',
      tools: [
        { name: 'add', description: 'Add two numbers and return their sum.', op: 'sum' },
        { name: 'echo', description: 'Echo the given text back unchanged.', op: 'echo' },
        ...extra,
      ],
    },
    null,
    2,
  )}\n`;
}

/** The identity of a process that has exited (and been reaped). */
export async function deadOwner(): Promise<ProcessOwner> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const owner = processOwner(child.pid!)!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return owner;
}
