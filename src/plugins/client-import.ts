/**
 * @module plugins/client-import
 * "Bring what you have" (issue #15): reads the MCP client configuration people already have and
 * installs each server as a plugin. Documented shapes:
 * - Claude Desktop / Claude Code / Cursor / Windsurf: `{ "mcpServers": { NAME: ENTRY } }`;
 * - VS Code: `.vscode/mcp.json` `{ "servers": { NAME: ENTRY } }` (JSON with comments), or the
 *   `"mcp": { "servers": … }` block of `settings.json`;
 * - ENTRY: `command` + `args` + `env` (stdio), or `url` (+ `headers`); an optional
 *   `type: "stdio" | "http" | "sse"` (Windsurf's `serverUrl` is read as `url`).
 *
 * How an entry becomes a source: `npx [-y] PKG[@VER] ARGS…` (also `pnpm dlx`, `bunx`) → `npm:PKG`
 * with ARGS as launch arguments; `url` → a remote plugin (Streamable HTTP, SSE fallback);
 * `node /abs/path/x.js ARGS…` → the folder of the nearest package.json whose `bin` or `main` is
 * that file; `uvx NAME ARGS…` and `python -m MODULE ARGS…` → `pypi:NAME` (issue #26). Anything
 * else (a relative path…) is reported as not installed, with the reason. A `docker run` / `podman run` entry becomes a
 * `container:IMAGE` plugin when a container engine runs here, else it is refused with the exact command (import-container.ts). Issue #26: folders an npx entry's arguments name
 * become host-path grants (import-grants.ts), and a networked server gets its egress step or a
 * proposed allow-list (import-egress.ts).
 *
 * Every `env` value is stored encrypted as a secret, not only the ones named like credentials:
 * a client file is where people paste keys under any name (`DATABASE_URL` with a password), and
 * only secrets reach the server during install-time discovery. A value that is not secret can be
 * moved to a plain setting afterwards (`plugin env set`). Values that are client placeholders
 * (`${input:…}`, `${env:…}`) cannot be resolved here: they are left out, with a warning naming
 * the `plugin secret set` command that supplies them.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, posix, relative } from 'node:path';
import { z } from 'zod';
import { invalidInput } from '../core/errors.ts';
import { isValidPluginName, slugifyPluginName } from '../core/names.ts';
import { ENV_NAME_PATTERN } from '../core/plugin-metadata.ts';
import { planContainerEntry } from './import-container.ts';
import { egressStep, proposedEgress, type EgressProposal } from './import-egress.ts';
import { importedGrants } from './import-grants.ts';
import type { AddPluginOptions, PluginService } from './service.ts';

/** One server entry as client configurations write it (unknown fields are tolerated). */
export const clientServerEntrySchema = z.looseObject({
  type: z.string().optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  url: z.string().optional(),
  serverUrl: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  envFile: z.string().optional(),
  disabled: z.boolean().optional(),
});

/** What `quiver import` will do with one entry. */
export type ImportPlan =
  | { entry: string; plugin: string; action: 'install'; source: string; options: Pick<AddPluginOptions, 'args' | 'secrets' | 'headers' | 'bin' | 'mounts'>; egress?: EgressProposal | { open: true } | undefined; pull?: true; warnings: string[] }
  | { entry: string; plugin: string | null; action: 'skip'; reason: string; warnings: string[] };

/** What happened to one entry. */
export interface ImportOutcome {
  entry: string;
  plugin: string | null;
  status: 'installed' | 'would-install' | 'skipped' | 'failed';
  source: string | null;
  /** Why it was skipped or failed. */
  reason?: string;
  /** Tools discovered (installed only). */
  tools?: number;
  /** A dry run: the host paths it would grant and the egress it proposes (issue #26). */
  detail?: string;
  /** Egress proposed from the config (issue #26), and whether `--allow-egress` allowed it. */
  egress?: { proposed: string[]; allowed: boolean };
  warnings: string[];
}

/** Finds the servers of a client configuration document: `mcpServers`, `servers` or `mcp.servers`. */
export function clientServers(document: unknown): Record<string, unknown> {
  const record = (value: unknown): Record<string, unknown> | undefined =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const top = record(document);
  const servers = record(top?.['mcpServers']) ?? record(top?.['servers']) ?? record(record(top?.['mcp'])?.['servers']);
  if (servers === undefined) {
    throw invalidInput('not an MCP client configuration: expected "mcpServers" (Claude Desktop, Cursor), "servers" (VS Code .vscode/mcp.json) or "mcp.servers" (VS Code settings.json)');
  }
  return servers;
}

const placeholder = /\$\{(input|env|workspaceFolder|userHome|config|command)[:}]/;
const npmSpec = /^(@[a-z0-9][\w.~-]*\/)?[a-z0-9~][\w.~-]*(@[^\s/]+)?$/i;
const npxFlagsWithoutValue = new Set(['-y', '--yes', '-q', '--quiet', '--silent', '--prefer-offline', '--no']);
const runnerHints: Record<string, string> = {
  uv: 'a Python server run by uv: only `uvx NAME` / `uv tool run NAME` entries are installed (as pypi:NAME); install its repository otherwise',
  pipx: 'a Python server run by pipx: install it as pypi:NAME (`pipx run NAME` is the same package)',
  deno: 'a Deno server: Quiver runs Node servers only',
  cmd: 'a Windows `cmd /c` wrapper: give the command itself',
};

function commandName(command: string): string {
  return (command.split(/[\\/]/).pop() ?? command).replace(/\.(cmd|exe|bat)$/i, '').toLowerCase();
}

/** `npx -y pkg@1 a b` → `{ spec: 'pkg@1', args: ['a', 'b'] }`, or a reason. */
function parseRunnerArgs(args: readonly string[]): { spec: string; args: string[] } | { reason: string } {
  let index = 0;
  while (index < args.length) {
    const arg = args[index]!;
    if (arg === '--') {
      index += 1;
      break;
    }
    if (!arg.startsWith('-')) break;
    if (arg === '-p' || arg.startsWith('--package') || arg === '-c' || arg === '--call') return { reason: `npx ${arg} is not supported: give the package as the first argument` };
    if (!npxFlagsWithoutValue.has(arg)) return { reason: `unknown npx option '${arg}'` };
    index += 1;
  }
  const spec = args[index];
  if (spec === undefined) return { reason: 'no package named after npx' };
  if (!npmSpec.test(spec)) return { reason: `'${spec}' is not an npm package name` };
  return { spec, args: args.slice(index + 1) };
}

const packageFieldsSchema = z.looseObject({
  main: z.string().optional(),
  bin: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
});

/** `folder/package.json`'s bin and main; undefined when there is none; `null` when it is unreadable. */
async function packageFields(folder: string): Promise<z.output<typeof packageFieldsSchema> | null | undefined> {
  const path = join(folder, 'package.json');
  try {
    if ((await stat(path)).size > 1024 * 1024) return null;
  } catch {
    return undefined;
  }
  try {
    const parsed = packageFieldsSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The folder source for `node /abs/x.js`: the nearest package.json whose bin or main is that file. */
async function folderForScript(script: string): Promise<{ folder: string; bin?: string } | { reason: string }> {
  if (!isAbsolute(script)) return { reason: `'${script}' is a relative path: the folder is not clear; give an absolute path, or install the folder with 'quiver plugin add FOLDER'` };
  const target = normalize(script);
  for (let folder = dirname(target), depth = 0; depth < 12; depth += 1) {
    const pkg = await packageFields(folder);
    if (pkg === null) return { reason: `${join(folder, 'package.json')} is not readable JSON` };
    if (pkg !== undefined) {
      const inside = relative(folder, target).split('\\').join('/');
      const same = (file: string) => posix.normalize(file.split('\\').join('/')).replace(/^\.\//, '') === inside;
      if (typeof pkg.bin === 'string' && same(pkg.bin)) return { folder };
      if (pkg.bin !== undefined && typeof pkg.bin === 'object') {
        const entries = Object.entries(pkg.bin).filter(([, file]) => same(file));
        if (entries.length > 0) return { folder, bin: entries.length === Object.keys(pkg.bin).length ? undefined : entries[0]![0] } as { folder: string; bin?: string };
      }
      if (pkg.bin === undefined && pkg.main !== undefined && same(pkg.main)) return { folder };
      return { reason: `${join(folder, 'package.json')} does not name ${inside} as its "bin" or "main": add a quiver.json "launch" there and install the folder with 'quiver plugin add ${folder}'` };
    }
    const parent = dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  return { reason: `no package.json above ${target}: the plugin folder is not clear; install its folder with 'quiver plugin add FOLDER' (with a quiver.json "launch")` };
}

/** Values a client would fill in itself (`${input:…}`) are left out, with a warning. */
function resolvedValues(values: Record<string, string> | undefined, what: 'env' | 'header', plugin: string, warnings: string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    if (placeholder.test(value)) warnings.push(`${what} ${key} is a client placeholder (${value}); set it with 'quiver plugin secret set ${plugin} ${key} VALUE'`);
    else kept[key] = value;
  }
  return kept;
}

const pythonPackage = /^([A-Za-z0-9][A-Za-z0-9._-]*)(?:(?:==|@)([A-Za-z0-9][A-Za-z0-9.+!_-]*))?$/;

/**
 * Python entries (issue #26): `uvx [--from PKG] NAME[@VER] ARGS…` (also `uv tool run`) → `pypi:NAME`
 * (the `--from` package, with NAME as its console script); `python -m MODULE ARGS…` → the index
 * package named like the module (`mcp_server_sqlite` → `mcp-server-sqlite`), the convention of
 * published servers. Undefined when the entry is not one of these.
 */
function pythonEntry(name: string, args: readonly string[]): { source: string; args: string[]; bin?: string; warning?: string } | { reason: string } | undefined {
  if (name === 'python' || name === 'python3') {
    if (args[0] !== '-m' || args[1] === undefined) return { reason: 'a Python script run by path: install its folder or repository, which Quiver gives a venv of its own' };
    const module = args[1];
    if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(module)) return { reason: `'${module}' is not a Python module name` };
    const dist = module.split('.')[0]!.replace(/_/g, '-');
    return { source: `pypi:${dist}`, args: args.slice(2), warning: `python -m ${module}: installed from the package index as '${dist}' (the package named like the module)` };
  }
  const rest = name === 'uvx' ? args : name === 'uv' && args[0] === 'tool' && args[1] === 'run' ? args.slice(2) : undefined;
  if (rest === undefined) return undefined;
  let from: string | undefined;
  let index = 0;
  for (; index < rest.length && rest[index]!.startsWith('-'); index += 1) {
    const option = rest[index]!;
    if (option === '--from' && rest[index + 1] !== undefined) from = rest[++index];
    else if (option.startsWith('--from=')) from = option.slice(7);
    else if (!['-q', '--quiet', '--no-progress'].includes(option)) return { reason: `uvx option '${option}' is not supported: give the package as the first argument` };
  }
  const command = rest[index];
  if (command === undefined) return { reason: 'no package named after uvx' };
  const requirement = from ?? command;
  const match = pythonPackage.exec(requirement);
  if (match === null) return { reason: `'${requirement}' is not a Python package name (git and URL requirements are not supported: install the repository instead)` };
  const source = `pypi:${match[1]}${match[2] !== undefined ? `==${match[2]}` : ''}`;
  return { source, args: rest.slice(index + 1), ...(from !== undefined && command !== match[1] ? { bin: command } : {}) };
}

/** Plans one entry: a source and options to install, or the reason it cannot be. */
export async function planClientServer(entry: string, raw: unknown): Promise<ImportPlan> {
  const warnings: string[] = [];
  const slug = slugifyPluginName(entry);
  const plugin = isValidPluginName(slug) ? slug : null;
  const skip = (reason: string): ImportPlan => ({ entry, plugin, action: 'skip', reason, warnings });
  if (plugin === null) return skip(`'${entry}' does not make a valid plugin name`);
  const parsed = clientServerEntrySchema.safeParse(raw);
  if (!parsed.success) return skip(`not a server entry: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'entry'}: ${issue.message}`).join('; ')}`);
  const server = parsed.data;
  if (server.disabled === true) return skip('disabled in this configuration');
  const type = server.type?.toLowerCase();
  if (type !== undefined && !['stdio', 'http', 'sse', 'streamable-http', 'streamablehttp'].includes(type)) return skip(`transport type '${server.type}' is not supported (stdio, http and sse are)`);
  if (server.envFile !== undefined) warnings.push(`envFile ${server.envFile} is not read: set its variables with 'quiver plugin secret set ${plugin} KEY VALUE'`);
  if (server.cwd !== undefined) warnings.push(`cwd ${server.cwd} is ignored: a plugin runs in its own install folder`);

  const url = server.url ?? server.serverUrl;
  if (url !== undefined && server.command === undefined) {
    if (type === 'stdio') return skip('type "stdio" with a url and no command');
    if (!/^https?:\/\//i.test(url)) return skip(`url '${url}' is not http(s)`);
    if (placeholder.test(url)) return skip(`url '${url}' holds a client placeholder`);
    const headers = resolvedValues(server.headers, 'header', plugin, warnings);
    if (Object.keys(server.env ?? {}).length > 0) warnings.push('env is ignored for a remote server');
    return { entry, plugin, action: 'install', source: url, options: { headers }, warnings };
  }
  if (server.command === undefined) return skip('neither a command nor a url');
  if (type === 'http' || type === 'sse') return skip(`type "${type}" with a command: give the server's url`);

  const env = resolvedValues(server.env, 'env', plugin, warnings);
  for (const key of Object.keys(env)) {
    if (!ENV_NAME_PATTERN.test(key)) return skip(`env name '${key}' is not an environment-variable name`);
    if (/^(LD_|QUIVER_)/i.test(key)) return skip(`env ${key} would act on Quiver's launch of the plugin, outside its sandbox`);
  }
  const args = server.args ?? [];
  const name = commandName(server.command);
  let runnerArgs: readonly string[] | undefined;
  if (name === 'npx' || name === 'bunx') runnerArgs = args;
  else if ((name === 'pnpm' || name === 'yarn') && args[0] === 'dlx') runnerArgs = args.slice(1);
  if (runnerArgs !== undefined) {
    const runner = parseRunnerArgs(runnerArgs);
    if ('reason' in runner) return skip(runner.reason);
    // Issue #26: the folders its arguments name become grants; its network gets a next step.
    const grants = importedGrants(runner.spec, runner.args, plugin);
    const egress = proposedEgress(runner.spec, runner.args, env);
    const options = { args: runner.args, secrets: env, ...(grants.mounts.length > 0 ? { mounts: grants.mounts } : {}) };
    return { entry, plugin, action: 'install', source: `npm:${runner.spec}`, options, egress, warnings: [...warnings, ...grants.warnings] };
  }
  const python = pythonEntry(name, args);
  if (python !== undefined) {
    if ('reason' in python) return skip(python.reason);
    if (python.warning !== undefined) warnings.push(python.warning);
    return { entry, plugin, action: 'install', source: python.source, options: { args: python.args, secrets: env, ...(python.bin ? { bin: python.bin } : {}) }, warnings };
  }
  if (name === 'node' || name === 'nodejs') {
    const scriptIndex = args.findIndex((arg) => !arg.startsWith('-'));
    if (scriptIndex !== 0) return skip(scriptIndex < 0 ? 'node without a script' : `node options (${args.slice(0, scriptIndex).join(' ')}) are not supported`);
    const found = await folderForScript(args[0]!);
    if ('reason' in found) return skip(found.reason);
    return { entry, plugin, action: 'install', source: found.folder, options: { args: args.slice(1), secrets: env, ...(found.bin ? { bin: found.bin } : {}) }, warnings };
  }
  if (name === 'docker' || name === 'podman') {
    const container = planContainerEntry(name, args, { plugin, env });
    if ('reason' in container) return skip(container.reason);
    const { source, secrets, mounts, pull } = container.install;
    const options = { args: container.install.args, secrets, ...(mounts.length > 0 ? { mounts } : {}) };
    return { entry, plugin, action: 'install', source, options, ...(pull ? { pull: true } : {}), warnings: [...warnings, ...container.install.warnings] };
  }
  return skip(runnerHints[name] ?? `the command '${server.command}' is not one Quiver can install (npx, pnpm dlx, bunx, node /path/script.js or a url)`);
}

/** Plans every server of a client configuration document, in file order. */
export async function planClientImport(document: unknown): Promise<ImportPlan[]> {
  const servers = clientServers(document);
  const plans: ImportPlan[] = [];
  for (const [entry, raw] of Object.entries(servers)) plans.push(await planClientServer(entry, raw));
  return plans;
}

/** What a dry run says beyond the source: host paths to grant, egress to propose. */
function planDetail(plan: Extract<ImportPlan, { action: 'install' }>): string | undefined {
  const parts: string[] = [];
  const mounts = plan.options.mounts ?? [];
  if (mounts.length > 0) parts.push(`host paths ${mounts.map((mount) => `${mount.path} (${mount.mode === 'rw' ? 'read-write' : 'read-only'})`).join(', ')}`);
  if (plan.pull === true) parts.push(`the engine does not have the image yet: the import pulls it`);
  if (plan.egress !== undefined) parts.push('open' in plan.egress ? 'egress: any site it is asked for (allow hosts one by one)' : `egress: proposed ${plan.egress.hosts.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The egress step of an installed entry: allowed now (`allowEgress`), or a warning naming the command. */
async function egressOutcome(
  plan: Extract<ImportPlan, { action: 'install' }>,
  plugin: string,
  options: { allowEgress?: ((plugin: string, hosts: readonly string[]) => Promise<string[]>) | undefined },
): Promise<{ egress?: ImportOutcome['egress']; warnings: string[] } | undefined> {
  if (plan.egress === undefined) return undefined;
  if ('open' in plan.egress || options.allowEgress === undefined) {
    return { ...('open' in plan.egress ? {} : { egress: { proposed: plan.egress.hosts, allowed: false } }), warnings: [egressStep(plugin, plan.egress)] };
  }
  const warnings = await options.allowEgress(plugin, plan.egress.hosts);
  return { egress: { proposed: plan.egress.hosts, allowed: true }, warnings };
}

/** Installs the planned servers one by one (or only reports them with `dryRun`); one failure never stops the rest. */
export async function runClientImport(
  plugins: Pick<PluginService, 'add'>,
  plans: readonly ImportPlan[],
  options: {
    dryRun?: boolean;
    workspace?: string | undefined;
    project?: string | undefined;
    /** Who imports (recorded with host-path grants and egress rules) and why. */
    actor?: string | undefined;
    reason?: string | undefined;
    /** Allows the proposed egress (`--allow-egress`); returns warnings (e.g. not enforced at the plugin's level). Absent, each is a next step. */
    allowEgress?: ((plugin: string, hosts: readonly string[]) => Promise<string[]>) | undefined;
  } = {},
): Promise<ImportOutcome[]> {
  const outcomes: ImportOutcome[] = [];
  for (const plan of plans) {
    if (plan.action === 'skip') {
      outcomes.push({ entry: plan.entry, plugin: plan.plugin, status: 'skipped', source: null, reason: plan.reason, warnings: plan.warnings });
      continue;
    }
    if (options.dryRun === true) {
      const detail = planDetail(plan);
      outcomes.push({ entry: plan.entry, plugin: plan.plugin, status: 'would-install', source: plan.source, ...(detail ? { detail } : {}), warnings: plan.warnings });
      continue;
    }
    try {
      const report = await plugins.add(plan.source, { ...plan.options, name: plan.plugin, workspace: options.workspace, project: options.project, mountActor: options.actor, mountReason: options.reason });
      const egress = await egressOutcome(plan, report.plugin.name, options);
      outcomes.push({ entry: plan.entry, plugin: report.plugin.name, status: 'installed', source: plan.source, tools: report.tools.total, ...(egress ? { egress: egress.egress } : {}), warnings: [...plan.warnings, ...report.warnings, ...(egress?.warnings ?? [])] });
    } catch (error) {
      outcomes.push({ entry: plan.entry, plugin: plan.plugin, status: 'failed', source: plan.source, reason: (error as Error).message, warnings: plan.warnings });
    }
  }
  return outcomes;
}
