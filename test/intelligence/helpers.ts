/**
 * @module test/intelligence/helpers
 * Real things for the generation tests: the zod-plugin fixture (a TypeScript MCP server on the
 * SDK's `registerTool` with zod shapes and JSDoc'd handlers, with its compiled dist) in a real
 * git repository, installed through the real plugins service (discovery runs it in the
 * sandbox), and the generation service over it. Dependencies: instead of an npm install
 * (registry, ~15 s per install), the repository's package.json drops its dependency lists and
 * the repository gets `resolve-deps.mjs`, a Node resolve hook that finds `zod` and the SDK in
 * this checkout's node_modules (which the sandbox may read).
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPidGenerationService, createChatClient, type PidGenerationService } from '../../src/intelligence/index.ts';
import type { Database } from '../../src/store/database.ts';
import { createHarness, openTempDir, repoRoot, type PluginsHarness } from '../plugins/helpers.ts';

export const FIXTURE = join(repoRoot, 'test/fixtures/zod-plugin');

/** The resolve hook that stands in for an installed node_modules. */
function resolveDepsHook(): string {
  const parent = pathToFileURL(join(repoRoot, 'package.json')).href;
  const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'zod' || specifier.startsWith('zod/') || specifier.startsWith('@modelcontextprotocol/sdk')) return next(specifier, { ...context, parentURL: ${JSON.stringify(parent)} });
  return next(specifier, context);
}`;
  return `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));\n`;
}

const QUIVER_JSON = {
  name: 'notes',
  version: '1.0.0',
  description: 'Keep and search short notes.',
  launch: { command: 'node', args: ['--import', './resolve-deps.mjs', 'dist/index.js'] },
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/** The fixture as a folder (its files plus the resolve hook and a launchable quiver.json). */
export async function fixtureFolder(root: string, name = 'notes'): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder, { recursive: true });
  await cp(FIXTURE, folder, { recursive: true });
  await writeFile(join(folder, 'resolve-deps.mjs'), resolveDepsHook());
  await writeFile(join(folder, 'quiver.json'), `${JSON.stringify(QUIVER_JSON, null, 2)}\n`);
  // Without declared dependencies the install does not run npm (the resolve hook supplies them).
  const { dependencies: _dependencies, devDependencies: _devDependencies, ...manifest } = JSON.parse(await readFile(join(FIXTURE, 'package.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return folder;
}

/** A git repository of the fixture: a bare remote and a working clone to push changes from. */
export interface FixtureRepo {
  remote: string;
  work: string;
  commit(files: Record<string, string>, message: string): Promise<void>;
}

/** Builds the fixture's git repository under `root`. */
export async function fixtureRepo(root: string): Promise<FixtureRepo> {
  const work = await fixtureFolder(join(root, 'work'));
  const remote = join(root, 'notes.git');
  await mkdir(remote, { recursive: true });
  git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
  git(work, 'init', '--quiet', '--initial-branch=main');
  git(work, 'add', '-A');
  git(work, 'commit', '--quiet', '-m', 'notes: first version');
  git(work, 'remote', 'add', 'origin', remote);
  git(work, 'push', '--quiet', 'origin', 'main');
  return {
    remote,
    work,
    async commit(files, message) {
      for (const [file, content] of Object.entries(files)) await writeFile(join(work, file), content);
      git(work, 'add', '-A');
      git(work, 'commit', '--quiet', '-m', message);
      git(work, 'push', '--quiet', 'origin', 'main');
    },
  };
}

/** The plugins harness plus the generation service, optionally with an LLM endpoint. */
export interface GenerationHarness extends PluginsHarness {
  pids: PidGenerationService;
  root: string;
}

/** A generation service over the harness's plugins and catalog with its own LLM endpoint and model (a new model means a cold cache). */
export function serviceWithLlm(db: Database, harness: PluginsHarness, llm: { baseUrl: string; model: string; timeoutMs?: number; prices?: { inputPerMillion?: number; outputPerMillion?: number } }): PidGenerationService {
  return createPidGenerationService({
    db,
    plugins: harness.plugins,
    catalog: harness.catalog,
    llm: { client: createChatClient({ baseUrl: llm.baseUrl, model: llm.model, timeoutMs: llm.timeoutMs ?? 5_000 }), prices: llm.prices },
  });
}

/** Wires the generation service over a real plugins service and catalog. */
export async function createGenerationHarness(db: Database, llm?: { baseUrl: string; timeoutMs?: number; prices?: { inputPerMillion?: number; outputPerMillion?: number } }): Promise<GenerationHarness> {
  const harness = await createHarness(db);
  const root = await openTempDir('pidgen');
  const pids = createPidGenerationService({
    db,
    plugins: harness.plugins,
    catalog: harness.catalog,
    llm: llm === undefined ? undefined : { client: createChatClient({ baseUrl: llm.baseUrl, model: 'fake-model', timeoutMs: llm.timeoutMs ?? 5_000 }), prices: llm.prices },
  });
  return { ...harness, pids, root };
}
