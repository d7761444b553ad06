/**
 * @module cli/commands/plugin
 * `quiver plugin add|list|show|tools|enable|disable|update|sync|remove|secret set|health` and
 * `quiver marketplace import|search` (DESIGN §3.5). Every command takes --json. Secret values
 * are read from the argument or, when it is omitted, from stdin, and are never printed.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { App } from '../../app.ts';
import { QuiverError, invalidInput } from '../../core/errors.ts';
import { parseJsonText } from '../../core/validation.ts';
import type { PluginHealthSource } from '../../plugins/health.ts';
import type { InstallReport, PluginDetails, PluginService } from '../../plugins/service.ts';
import type { RemoteOwner, RemoteOwnerKind } from '../../plugins/oauth/remote-oauth.ts';
import { EXIT_CODES, cliActor, formatTable, printJson, type CliContext, type CommandOptions, type CommandSpec } from '../command.ts';
import { noMarketplaceMatchMessage, noPluginsMessage } from '../empty-results.ts';

/** The plugins service of the app (wired by the composition root as `app.plugins`). */
export function pluginService(app: App): PluginService {
  const service = (app as App & { plugins?: PluginService }).plugins;
  if (service === undefined) throw new QuiverError('internal', 'the plugins service is not wired into the app (App.plugins)');
  return service;
}

/** The plugin health source of the app (wired by the composition root as `app.pluginHealth`). */
export function pluginHealthSource(app: App): PluginHealthSource {
  const source = (app as App & { pluginHealth?: PluginHealthSource }).pluginHealth;
  if (source === undefined) throw new QuiverError('internal', 'plugin health is not wired into the app (App.pluginHealth)');
  return source;
}

const text = (context: CliContext, name: string): string | undefined => {
  const value = context.args.values[name];
  return typeof value === 'string' ? value : undefined;
};
const list = (context: CliContext, name: string): string[] => {
  const value = context.args.values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
};

/** Parses repeated `K=V` options into a map (the value may contain "="). */
export function keyValues(entries: readonly string[], option: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf('=');
    if (at <= 0) throw invalidInput(`--${option} takes KEY=VALUE (got '${entry.slice(0, at < 0 ? 40 : at)}…')`);
    result[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return result;
}

const scopeOptions = {
  workspace: { type: 'string', valueName: 'W', description: 'the workspace', defaultHelp: 'default' },
  project: { type: 'string', valueName: 'P', description: 'only this project of the workspace', defaultHelp: 'the whole workspace' },
} as const satisfies CommandOptions;
const scopeOf = (context: CliContext) => ({ workspace: text(context, 'workspace'), project: text(context, 'project') });

function needName(context: CliContext, usage: string): string {
  const [name] = context.args.positionals;
  if (!name) throw invalidInput(`usage: quiver ${usage}`);
  return name;
}

function printReport(context: CliContext, verb: string, report: InstallReport): void {
  if (context.json) {
    printJson(context.io, report);
    return;
  }
  const { plugin, tools } = report;
  const lines = [
    `${verb} ${plugin.name} ${plugin.version ?? ''} (${plugin.sourceType}) — ${tools.total} tools: ` +
      `${tools.inserted.length} new, ${tools.updated.length} changed, ${tools.deleted.length} removed, ${tools.unchanged} unchanged`,
  ];
  if (report.enabledIn) lines.push(`enabled in ${report.enabledIn.workspace}${report.enabledIn.project ? `/${report.enabledIn.project}` : ''}`);
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  const missing = plugin.credentials.filter((credential) => credential.required && !credential.set).map((credential) => credential.name);
  if (missing.length > 0) lines.push(`needs credentials: ${missing.join(', ')} (quiver plugin secret set ${plugin.name} KEY)`);
  context.io.stdout(`${lines.join('\n')}\n`);
}

async function secretFromStdin(context: CliContext): Promise<string> {
  const piped = await context.readStdin();
  if (piped === undefined) throw invalidInput('give the secret VALUE as an argument or pipe it on stdin');
  return piped.replace(/\r?\n$/, '');
}

/** A folder source relative to the caller's directory made absolute (a server may run this command). */
async function sourceFrom(context: CliContext, text: string): Promise<string> {
  // Loaded when a command runs, like every module only a command's run needs (issue #28: the
  // command list, and so `quiver --help` and forwarded commands, stays light).
  const { parsePluginSource } = await import('../../plugins/sources.ts');
  try {
    const source = parsePluginSource(text, context.cwd);
    if (source.kind === 'path') return source.path;
    if (source.kind === 'openapi') return `openapi:${source.location}`;
    if (source.kind === 'git' && !/^[a-z+]+:\/\//i.test(source.url) && !/^[\w.-]+@[\w.-]+:/.test(source.url)) return source.url;
  } catch {
    // The service parses it again and reports what is wrong with it.
  }
  return text;
}

const add: CommandSpec = {
  path: ['plugin', 'add'],
  summary: 'Install a plugin: git URL (--ref), npm:<package>, a folder, an http(s) MCP endpoint, market:<name>, openapi:<file or URL> (a REST API, --base-url), or container:<image> (run through docker or podman).',
  usage: 'SOURCE [--name N] [--ref R] [--path DIR] [--workspace W] [--project P] [--header K=V]... [--secret K=V]... [--arg A]... [--mount DIR[:ro|:rw]]... [--bin B] [--base-url URL] [--trusted]',
  options: {
    name: { type: 'string', valueName: 'N', description: 'install under this name (kebab-case)', defaultHelp: 'derived from the source' },
    ref: { type: 'string', valueName: 'R', description: 'git branch, tag or commit', defaultHelp: "the repository's default branch" },
    path: { type: 'string', valueName: 'DIR', description: "the plugin's folder inside a git repository (a monorepo package), e.g. packages/server", defaultHelp: 'the repository root' },
    ...scopeOptions,
    header: { type: 'string', multiple: true, valueName: 'K=V', description: 'an HTTP header for a remote plugin, stored encrypted' },
    secret: { type: 'string', multiple: true, valueName: 'K=V', description: 'a credential (environment variable or declared header), stored encrypted' },
    arg: { type: 'string', multiple: true, valueName: 'A', description: "an argument appended to the plugin's launch command (e.g. the folder a filesystem server serves)" },
    mount: { type: 'string', multiple: true, valueName: 'DIR[:ro|:rw]', description: "grant the plugin a host folder, read-only unless ':rw' (never the hub's own home or data)" },
    bin: { type: 'string', valueName: 'B', description: 'which package.json bin entry to run when there are several' },
    'base-url': { type: 'string', valueName: 'URL', description: 'openapi: sources: the API root the operations are called on', defaultHelp: "the document's first absolute server URL" },
    trusted: { type: 'boolean', default: false, description: "run the package's npm lifecycle scripts (install, build) when installing" },
  },
  async run(context) {
    const source = await sourceFrom(context, needName(context, 'plugin add SOURCE'));
    const { parseMountArgument } = await import('../../runtime/host-mounts.ts');
    const plugins = pluginService(await context.openApp());
    const report = await plugins.add(source, {
      name: text(context, 'name'),
      ref: text(context, 'ref'),
      path: text(context, 'path'),
      ...scopeOf(context),
      headers: keyValues(list(context, 'header'), 'header'),
      secrets: keyValues(list(context, 'secret'), 'secret'),
      args: list(context, 'arg'),
      // Issue #26: relative to the caller's folder, as a running server may run the command.
      mounts: list(context, 'mount').map((value) => {
        const parsed = parseMountArgument(value);
        return { path: resolve(context.cwd, parsed.path), mode: parsed.mode };
      }),
      mountActor: cliActor(),
      bin: text(context, 'bin'),
      baseUrl: text(context, 'base-url'),
      trusted: context.args.values.trusted === true,
    });
    printReport(context, 'installed', report);
    return 0;
  },
};

const listCommand: CommandSpec = {
  path: ['plugin', 'list'],
  summary: 'List installed plugins.',
  usage: '[--all]',
  options: { all: { type: 'boolean', default: false, description: 'include removed plugins' } },
  async run(context) {
    const plugins = await pluginService(await context.openApp()).list({ includeRemoved: context.args.values.all === true });
    if (context.json) printJson(context.io, { plugins });
    else if (plugins.length === 0) context.io.stdout(noPluginsMessage(context.args.values.all === true));
    else
      context.io.stdout(
        formatTable(
          ['NAME', 'VERSION', 'SOURCE', 'STATUS', 'TOOLS', 'WARNINGS'],
          plugins.map((p) => [p.name, p.version, p.sourceType, p.status, Number(p.discovery['tools'] ?? 0), p.manifestWarnings.length]),
        ),
      );
    return 0;
  },
};

/** One line of the effective execution profile (issue #11): what the PID set is marked with `*`. */
function formatExecution(execution: PluginDetails['execution']): string {
  if (execution === null) return 'the intelligence document\'s profile cannot be applied (see plugin intelligence)';
  const mark = (field: string) => (execution.fromPid.includes(field) ? '*' : '');
  const breaker = execution.circuitBreaker;
  return [
    `timeout ${execution.timeoutMs} ms${mark('timeoutRecommendation')}`,
    `attempts ${execution.retryPolicy.maxAttempts}${mark('retryPolicy')}`,
    `breaker ${breaker.failureThreshold} failures/${breaker.timeout} ms open${mark('circuitBreakerConfig')}`,
    `rate ${execution.rateLimit === null ? 'unlimited' : `${execution.rateLimit.requestsPerMinute}/min burst ${execution.rateLimit.burst}`}${mark('rateLimits')}`,
    `concurrency ${execution.maxConcurrent ?? 'uncapped'}${mark('concurrency')}`,
  ].join(', ') + (execution.fromPid.length > 0 ? ' (* from the intelligence document)' : '');
}

/**
 * Declared credentials (set or not) and the stored ones nothing declares (an imported client
 * configuration's env, issue #26), names only: values never leave the store.
 */
function credentialsLine(details: PluginDetails): string {
  const declared = details.plugin.credentials.map((c) => `${c.name}${c.required ? '*' : ''}=${c.set ? 'set' : 'unset'}`);
  const names = new Set(details.plugin.credentials.map((c) => c.name));
  const stored = details.secrets.filter((secret) => !secret.declared && !names.has(secret.key)).map((secret) => `${secret.key}=set`);
  return [...declared, ...stored].join(', ') || 'none';
}

const show: CommandSpec = {
  path: ['plugin', 'show'],
  summary: 'Show a plugin: source, launch, enablement, credentials (names only), warnings.',
  usage: 'NAME',
  async run(context) {
    const app = await context.openApp();
    const details = await pluginService(app).show(needName(context, 'plugin show NAME'));
    // Issue #29: what its install folders (the installed version's and each slot's) take on disk.
    const disk = await app.rollouts.diskUse(details.plugin.id);
    if (context.json) {
      printJson(context.io, { ...details, disk });
      return 0;
    }
    const { plugin } = details;
    const lines = [
      `${plugin.name} ${plugin.version ?? ''} — ${plugin.status}`,
      plugin.description ? `  ${plugin.description}` : '',
      `  id: ${plugin.id}`,
      `  state folder: ${details.stateDir ?? 'unknown'}`,
      `  source: ${plugin.sourceType} ${JSON.stringify(plugin.source)}`,
      `  launch: ${JSON.stringify(plugin.launch)}`,
      `  tools: ${details.toolCount}; resources: ${(plugin.discovery['resources'] as unknown[] | undefined)?.length ?? 0}; prompts: ${(plugin.discovery['prompts'] as unknown[] | undefined)?.length ?? 0}`,
      `  enabled: ${details.enablements.map((e) => `${e.workspace}${e.project ? `/${e.project}` : ''}${e.enabled ? '' : ' (opted out)'}`).join(', ') || 'nowhere'}`,
      `  credentials: ${credentialsLine(details)}`,
      `  host paths: ${details.mounts.map((m) => `${m.path} (${m.mode === 'rw' ? 'read-write' : 'read-only'}; ${m.actor}, ${m.createdAt.toISOString()})`).join(', ') || 'none'}`,
      `  settings: ${details.env.map((row) => `${row.key}=${row.value}`).join(', ') || 'none'}`,
      `  intelligence: ${details.intelligence ? `${details.intelligence.status} (${details.intelligence.origin})` : 'none'}`,
      `  execution: ${formatExecution(details.execution)}`,
      `  disk: ${disk.bytes} bytes in ${disk.folders.filter((folder) => folder.exists).length} folder(s)${disk.folders.map((folder) => `\n    ${folder.path}: ${folder.exists ? `${folder.bytes} bytes` : 'missing'} (${folder.uses.join('; ')})`).join('')}`,
      ...plugin.manifestWarnings.map((warning) => `  warning: ${warning}`),
    ];
    context.io.stdout(`${lines.filter(Boolean).join('\n')}\n`);
    return 0;
  },
};

const tools: CommandSpec = {
  path: ['plugin', 'tools'],
  summary: "List a plugin's tools as the catalog holds them.",
  usage: 'NAME',
  async run(context) {
    const found = await pluginService(await context.openApp()).tools(needName(context, 'plugin tools NAME'));
    if (context.json) printJson(context.io, { tools: found });
    else context.io.stdout(formatTable(['TOOL', 'DESCRIPTION'], found.map((tool) => [tool.qualifiedName, tool.description.split('\n')[0]?.slice(0, 80)])));
    return 0;
  },
};

/** `plugin enable` and `plugin disable`: the same command but for the service method and the words. */
function enablementCommand(verb: 'enable' | 'disable', summary: string): CommandSpec {
  return {
    path: ['plugin', verb],
    summary,
    usage: 'NAME [--workspace W] [--project P]',
    options: scopeOptions,
    async run(context) {
      const name = needName(context, `plugin ${verb} NAME`);
      const plugins = pluginService(await context.openApp());
      await plugins[verb](name, scopeOf(context));
      const { enablements } = await plugins.show(name);
      if (context.json) printJson(context.io, { plugin: name, enablements });
      else context.io.stdout(`${verb}d ${name} in ${context.args.values.workspace ?? 'default'}${context.args.values.project ? `/${context.args.values.project}` : ''}\n`);
      return 0;
    },
  };
}

const enable = enablementCommand('enable', 'Enable a plugin in a workspace (default: default) or only for one project.');
const disable = enablementCommand('disable', 'Disable a plugin in a workspace, or opt one project out of it.');

const update: CommandSpec = {
  path: ['plugin', 'update'],
  summary: 'Move a plugin to a new git ref or npm version (default: the latest of its ref/spec), re-discover and re-sync.',
  usage: 'NAME [--ref R] [--version V]',
  options: {
    ref: { type: 'string', valueName: 'R', description: 'the git branch, tag or commit to move to', defaultHelp: 'the latest of the current ref' },
    version: { type: 'string', valueName: 'V', description: 'the npm version or range to move to', defaultHelp: 'the latest of the current spec' },
  },
  async run(context) {
    const name = needName(context, 'plugin update NAME');
    const report = await pluginService(await context.openApp()).update(name, { ref: text(context, 'ref'), version: text(context, 'version') });
    printReport(context, 'updated', report);
    return 0;
  },
};

const sync: CommandSpec = {
  path: ['plugin', 'sync'],
  summary: 'Re-discover a plugin from its installed folder and re-sync its tools.',
  usage: 'NAME',
  async run(context) {
    const report = await pluginService(await context.openApp()).sync(needName(context, 'plugin sync NAME'));
    printReport(context, 'synced', report);
    return 0;
  },
};

const remove: CommandSpec = {
  path: ['plugin', 'remove'],
  summary: 'Remove a plugin: disable it, soft-delete its tools, clean its cache.',
  usage: 'NAME',
  async run(context) {
    const name = needName(context, 'plugin remove NAME');
    await pluginService(await context.openApp()).remove(name);
    if (context.json) printJson(context.io, { removed: name });
    else context.io.stdout(`removed ${name}\n`);
    return 0;
  },
};

/** The owner `--user` or `--org` names (at most one); the hub without either. */
async function ownerOption(context: CliContext): Promise<RemoteOwner> {
  const user = text(context, 'user');
  const org = text(context, 'org');
  if (user !== undefined && org !== undefined) throw invalidInput('give --user or --org, not both');
  if (user !== undefined) return { kind: 'user', id: user };
  if (org !== undefined) return { kind: 'organisation', id: org };
  return (await import('../../plugins/oauth/remote-oauth.ts')).HUB_OWNER;
}

const authorize: CommandSpec = {
  path: ['plugin', 'authorize'],
  summary: "Authorize Quiver at a remote MCP server that requires OAuth: open the printed URL, sign in, and Quiver keeps the tokens (encrypted, refreshed; revoked when the plugin is removed). Per user or organisation with --per, --user, --org.",
  usage: 'URL [--user ID | --org ID] [--timeout SECONDS] [--no-wait] | URL [--user ID | --org ID] --status | URL --per hub|user|organisation',
  options: {
    user: { type: 'string', valueName: 'ID', description: "authorize on behalf of this Quiver user (the server's calls for that user carry it); hand the printed URL to the user, who signs in with their own account" },
    org: { type: 'string', valueName: 'ID', description: 'authorize on behalf of this organisation (calls of its members carry it)' },
    per: { type: 'string', valueName: 'KIND', description: "whose authorization the server's calls carry: hub (one for everyone, the default), user or organisation" },
    timeout: { type: 'string', valueName: 'SECONDS', description: 'how long to wait for the browser (default 300)' },
    'no-wait': {
      type: 'boolean',
      default: false,
      description: 'print the URL and return; the process keeps listening for the redirect (use it while `quiver serve` runs on the same data folder: the server runs the command and completes it; check with --status)',
    },
    status: { type: 'boolean', default: false, description: 'show whether Quiver holds an authorization for URL (no tokens shown)' },
  },
  async run(context) {
    const [url] = context.args.positionals;
    if (!url) throw invalidInput('usage: quiver plugin authorize URL [--timeout SECONDS]');
    const app = await context.openApp();
    const per = text(context, 'per');
    if (per !== undefined) {
      await app.remoteOAuth.setOwnerKind(url, per as RemoteOwnerKind);
      if (context.json) printJson(context.io, { url, per });
      else context.io.stdout(per === 'hub' ? `calls to ${url} carry the hub's authorization\n` : `calls to ${url} carry each ${per}'s own authorization; connect one with 'quiver plugin authorize ${url} --${per === 'user' ? 'user' : 'org'} ID'\n`);
      return 0;
    }
    const owner = await ownerOption(context);
    const { authorizeRemote, startRemoteAuthorization } = await import('../../plugins/oauth/authorize-flow.ts');
    const ownerFlag = owner.kind === 'hub' ? '' : ` --${owner.kind === 'user' ? 'user' : 'org'} ${owner.id}`;
    if (context.args.values['status'] === true) {
      const status = await app.remoteOAuth.status(url, owner);
      const per = await app.remoteOAuth.ownerKind(url);
      if (context.json) printJson(context.io, { url, per, owner: owner.kind === 'hub' ? 'hub' : { kind: owner.kind, id: owner.id }, ...status });
      else context.io.stdout(status.authorized ? `authorized${status.expiresAt ? `; the access token expires ${status.expiresAt.toISOString()}` : ''}${status.refreshable ? ' (refreshable)' : ''}; calls carry the ${per === 'hub' ? "hub's" : `${per}'s own`} authorization\n` : `not authorized; run 'quiver plugin authorize ${url}${ownerFlag}'\n`);
      return 0;
    }
    const seconds = Number(text(context, 'timeout') ?? '300');
    if (!Number.isFinite(seconds) || seconds <= 0) throw invalidInput('--timeout must be a positive number of seconds');
    if (context.args.values['no-wait'] === true) {
      const started = await startRemoteAuthorization(app.remoteOAuth, url, { timeoutMs: seconds * 1000, owner });
      // The outcome shows in --status; a failure is not lost silently in the serving process either.
      started.completion.catch((error: unknown) => app.logger.warn({ url, err: error instanceof Error ? error.message : String(error) }, 'remote authorization did not complete'));
      if (context.json) printJson(context.io, { url, authorizationUrl: started.authorizationUrl.href, waiting: true });
      else context.io.stdout(`Open this URL in a browser and sign in to authorize Quiver at ${url}:\n\n  ${started.authorizationUrl.href}\n\nthen check with 'quiver plugin authorize ${url}${ownerFlag} --status'\n`);
      return 0;
    }
    const { discovered } = await authorizeRemote(app.remoteOAuth, url, {
      timeoutMs: seconds * 1000,
      owner,
      // stderr: stdout stays machine-readable with --json.
      onAuthorizationUrl: (authorizationUrl) => context.io.stderr(`Open this URL in a browser and sign in to authorize Quiver at ${url}:\n\n  ${authorizationUrl.href}\n\nWaiting for the authorization…\n`),
    });
    if (context.json) printJson(context.io, { url, authorized: true, ...(owner.kind === 'hub' ? {} : { owner: { kind: owner.kind, id: owner.id } }), discovered });
    else {
      context.io.stdout(discovered.length === 0 ? `authorized Quiver at ${url}; add it with 'quiver plugin add ${url}'\n` : `authorized Quiver at ${url}\n`);
      // Plugins installed before this authorization (they answered 401) met their tools now.
      for (const result of discovered) context.io.stdout(result.error === undefined ? `  ${result.plugin}: ${result.tools} tools discovered\n` : `  ${result.plugin}: discovery failed: ${result.error}\n`);
    }
    return 0;
  },
};

const secretSet: CommandSpec = {
  path: ['plugin', 'secret', 'set'],
  summary: 'Store a credential of a plugin, encrypted (VALUE from the argument, or stdin when omitted).',
  usage: 'NAME KEY [VALUE]',
  readsStdin: (args) => args.positionals.length < 3,
  async run(context) {
    const [name, key, given] = context.args.positionals;
    if (!name || !key) throw invalidInput('usage: quiver plugin secret set NAME KEY [VALUE]');
    const value = given ?? (await secretFromStdin(context));
    const result = await pluginService(await context.openApp()).setSecret(name, key, value);
    if (context.json) printJson(context.io, { plugin: name, ...result });
    else context.io.stdout(`stored ${key} for ${name}${result.declared ? '' : ' (not declared by the plugin: passed as an environment variable)'}\n`);
    return 0;
  },
};

const marketplaceImport: CommandSpec = {
  path: ['marketplace', 'import'],
  summary: 'Import installable plugins from an MCP Registry server.json file (one server, an array, or {servers}).',
  usage: 'FILE',
  async run(context) {
    const file = needName(context, 'marketplace import FILE');
    const document = parseJsonText(await readFile(resolve(context.cwd, file), 'utf8'), file);
    const result = await pluginService(await context.openApp()).importMarketplace(document, { source: file });
    if (context.json) printJson(context.io, result);
    else {
      const lines = [`imported ${result.imported} servers (${result.inserted} new, ${result.updated} updated)`, ...result.warnings.map((w) => `warning: ${w}`)];
      context.io.stdout(`${lines.join('\n')}\n`);
    }
    return 0;
  },
};

const marketplaceSearch: CommandSpec = {
  path: ['marketplace', 'search'],
  summary: 'Search the marketplace by name and description.',
  usage: 'QUERY [--limit N]',
  options: { limit: { type: 'string', valueName: 'N', description: 'at most N results, 1 to 100', defaultHelp: '10' } },
  async run(context) {
    const query = context.args.positionals.join(' ').trim();
    if (query === '') throw invalidInput('usage: quiver marketplace search QUERY');
    const limit = text(context, 'limit') === undefined ? 10 : Number(text(context, 'limit'));
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidInput('--limit is a whole number from 1 to 100');
    const results = await pluginService(await context.openApp()).searchMarketplace(query, limit);
    if (context.json) printJson(context.io, { results });
    else if (results.length === 0) context.io.stdout(noMarketplaceMatchMessage(query));
    else
      context.io.stdout(
        formatTable(
          ['NAME', 'VERSION', 'INSTALL', 'DESCRIPTION'],
          results.map((hit) => [hit.name, hit.version, hit.installedAs ? `installed as ${hit.installedAs}` : hit.installable ? hit.install : 'not installable', hit.description.slice(0, 60)]),
        ),
      );
    return 0;
  },
};

const percent = (value: number | null) => (value === null ? '' : `${(value * 100).toFixed(1)}%`);
const millis = (value: number | null) => (value === null ? '' : `${Math.round(value)}`);

const health: CommandSpec = {
  path: ['plugin', 'health'],
  summary:
    'Call statistics per plugin from the store (on PGlite only while no server holds the data folder); ' +
    'with --check, start each active plugin, list its tools and stop it (exit 1 when any fails).',
  usage: '[NAME] [--check] [--window 1h] [--timeout MS]',
  options: {
    check: { type: 'boolean', default: false, description: 'also start each active plugin, list its tools and stop it' },
    window: { type: 'string', valueName: 'SPAN', description: 'the statistics window: a number and m, h or d (at most 31 days)', defaultHelp: '1h' },
    timeout: { type: 'string', valueName: 'MS', description: 'how long --check waits for each plugin, 100 to 600000', defaultHelp: '15000' },
  },
  async run(context) {
    const [name] = context.args.positionals;
    const timeoutText = text(context, 'timeout');
    const timeoutMs = timeoutText === undefined ? 15_000 : Number(timeoutText);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000) throw invalidInput('--timeout is a whole number of milliseconds from 100 to 600000');
    const source = pluginHealthSource(await context.openApp());
    const report = await source.report({ window: text(context, 'window') ?? '1h', plugin: name });
    const checks = context.args.values.check === true ? await source.check({ plugins: name === undefined ? undefined : [name], timeoutMs }) : undefined;
    const code = checks !== undefined && checks.some((check) => !check.ok) ? EXIT_CODES.failure : EXIT_CODES.ok;
    if (context.json) {
      printJson(context.io, { ...report, ...(checks === undefined ? {} : { checks }) });
      return code;
    }
    let out = `calls in the last ${report.window} (since ${report.since.toISOString()}):\n`;
    out += formatTable(
      ['NAME', 'STATUS', 'CALLS', 'SUCCESS', 'ERRORS', 'TIMEOUTS', 'REJECTED', 'P50_MS', 'P95_MS', 'SCORE', 'ERROR_CLASSES'],
      report.plugins.map((plugin) => [
        plugin.name,
        plugin.status,
        plugin.calls.calls,
        percent(plugin.calls.successRate),
        plugin.calls.errors,
        plugin.calls.timeouts,
        plugin.calls.rejected,
        millis(plugin.calls.p50LatencyMs),
        millis(plugin.calls.p95LatencyMs),
        plugin.calls.score,
        Object.entries(plugin.calls.errorClasses).map(([errorClass, count]) => `${errorClass}=${count}`).join(','),
      ]),
    );
    if (checks !== undefined) {
      out += `\ncheck (start, tools/list, stop; timeout ${timeoutMs} ms):\n`;
      out += checks.length === 0 ? 'no active plugin with a launch to check\n' : formatTable(
        ['NAME', 'RESULT', 'LATENCY_MS', 'TOOLS', 'ERROR'],
        checks.map((check) => [
          check.name,
          check.ok ? 'ok' : 'FAILED',
          Math.round(check.latencyMs),
          check.tools,
          check.error === null ? '' : `${check.error.code}: ${check.error.message.replace(/\s+/g, ' ').slice(0, 200)}`,
        ]),
      );
    }
    context.io.stdout(out);
    return code;
  },
};

/** Every plugin and marketplace command. */
export const pluginCommands: CommandSpec[] = [add, listCommand, show, tools, enable, disable, update, sync, remove, authorize, secretSet, health, marketplaceImport, marketplaceSearch];
