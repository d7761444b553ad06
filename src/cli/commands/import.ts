/**
 * @module cli/commands/import
 * `quiver import FILE [--dry-run]`: installs every server of an existing MCP client
 * configuration (Claude Desktop, Cursor, VS Code) as a plugin and says, per server, what it
 * installed and what it could not and why (src/plugins/client-import.ts has the rules). Exit
 * code 0 unless an install failed; entries Quiver cannot install are reported, not fatal.
 *
 * Issue #26: the dry run and the real run agree. Both read the installed plugins' names first,
 * so an entry whose name is taken is refused in both, with a free name to pass as
 * `--name ENTRY=NAME`; and both print one table: installed, needs a step (a command to run),
 * refused (why), failed.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { invalidInput } from '../../core/errors.ts';
import type { ImportOutcome, ImportPlan } from '../../plugins/client-import.ts';
import type { App } from '../../app.ts';
import { EXIT_CODES, cliActor, formatTable, printJson, type CommandSpec } from '../command.ts';
import { pluginService } from './plugin.ts';

const FILE_LIMIT = 1024 * 1024;

/** A warning that names a command to run: the entry works once the user has run it. */
const STEP = /'(quiver [^']+)'/;

const toolCount = (count: number) => `${count} tool${count === 1 ? '' : 's'}`;

/** One row of the import table: what happened, to which entry and plugin, and the detail that matters. */
export function importRow(outcome: ImportOutcome): [string, string, string, string] {
  const name = outcome.plugin ?? '-';
  switch (outcome.status) {
    case 'installed': {
      const step = outcome.warnings.map((warning) => STEP.exec(warning)?.[1]).find((command) => command !== undefined);
      return step === undefined
        ? ['installed', outcome.entry, name, `${toolCount(outcome.tools ?? 0)} from ${outcome.source}`]
        : ['needs a step', outcome.entry, name, `${toolCount(outcome.tools ?? 0)}; then run: ${step}`];
    }
    case 'would-install':
      return ['would install', outcome.entry, name, `from ${outcome.source}${outcome.detail ? `; ${outcome.detail}` : ''}`];
    case 'failed':
      return ['failed', outcome.entry, name, outcome.reason ?? ''];
    default:
      return ['refused', outcome.entry, name, outcome.reason ?? ''];
  }
}

/** `--name ENTRY=NAME` pairs. */
function renamesOf(values: unknown): Map<string, string> {
  const renames = new Map<string, string>();
  for (const pair of Array.isArray(values) ? values : []) {
    const match = /^([^=]+)=(.+)$/.exec(String(pair));
    if (!match) throw invalidInput(`--name takes ENTRY=NAME (got '${String(pair)}')`);
    renames.set(match[1]!, match[2]!);
  }
  return renames;
}

/** `base-2`, `base-3`, …: the first name neither installed nor planned. */
function freeName(base: string, taken: ReadonlySet<string>): string {
  for (let suffix = 2; ; suffix++) if (!taken.has(`${base}-${suffix}`)) return `${base}-${suffix}`;
}

/** Refuses entries whose plugin name is installed already or planned earlier in this file, naming a free one. */
function refuseTakenNames(plans: ImportPlan[], installed: Iterable<string>): ImportPlan[] {
  const taken = new Set(installed);
  const planned = new Set(plans.flatMap((plan) => (plan.action === 'install' ? [plan.plugin] : [])));
  return plans.map((plan) => {
    if (plan.action !== 'install') return plan;
    if (!taken.has(plan.plugin)) {
      taken.add(plan.plugin);
      return plan;
    }
    const free = freeName(plan.plugin, new Set([...taken, ...planned]));
    taken.add(free);
    return { entry: plan.entry, plugin: plan.plugin, action: 'skip', reason: `a plugin named '${plan.plugin}' is already installed; to install this entry as well, import with --name ${plan.entry}=${free}`, warnings: plan.warnings };
  });
}

/**
 * `--allow-egress` (issue #26): each proposed host becomes an egress rule recorded as the admin's;
 * a plugin whose level enforces no allow-list yet (UNVERIFIED has no network) is said so.
 */
function egressAllower(app: App, actor: string, file: string): (plugin: string, hosts: readonly string[]) => Promise<string[]> {
  return async (plugin, hosts) => {
    for (const host of hosts) await app.trust.allow(plugin, host, { actor, reason: `proposed by quiver import ${file}` });
    const { enforced } = await app.trust.egress(plugin, { limit: 1 });
    return enforced
      ? []
      : [`egress allowed (${hosts.join(', ')}), but its trust level runs it with no network yet; it applies from COMMUNITY: see 'quiver plugin trust ${plugin}'`];
  };
}

/** `quiver import`. */
export const importCommand: CommandSpec = {
  path: ['import'],
  summary: 'Install the servers of an MCP client configuration (Claude Desktop, Cursor, VS Code mcp.json) as plugins.',
  usage: 'FILE [--dry-run] [--allow-egress] [--name ENTRY=NAME]... [--workspace W] [--project P]',
  options: {
    'dry-run': { type: 'boolean', default: false, description: 'only say what would be installed, install nothing' },
    'allow-egress': { type: 'boolean', default: false, description: "allow each server the hosts its configuration names (e.g. api.github.com for server-github), recorded as yours" },
    name: { type: 'string', multiple: true, valueName: 'ENTRY=NAME', description: 'install the server ENTRY of the file as plugin NAME (for a name already taken)' },
    workspace: { type: 'string', valueName: 'W', description: 'enable the plugins in this workspace', defaultHelp: 'default' },
    project: { type: 'string', valueName: 'P', description: 'enable them for this project of the workspace only' },
  },
  async run(context) {
    const [file] = context.args.positionals;
    if (!file) throw invalidInput('usage: quiver import FILE (e.g. ~/.cursor/mcp.json, .vscode/mcp.json, claude_desktop_config.json)');
    const path = resolve(context.cwd, file);
    let text: string;
    try {
      if ((await stat(path)).size > FILE_LIMIT) throw invalidInput(`${file} is larger than ${FILE_LIMIT} bytes: not a client configuration`);
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') throw invalidInput(`${file}: no such file`);
      throw error;
    }
    // Loaded when it runs (issue #28: the command list stays light).
    const [{ parseJsonc }, { planClientImport, runClientImport }] = await Promise.all([import('../../core/jsonc.ts'), import('../../plugins/client-import.ts')]);
    let document: unknown;
    try {
      document = parseJsonc(text);
    } catch (error) {
      throw invalidInput(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    const dryRun = context.args.values['dry-run'] === true;
    const renames = renamesOf(context.args.values.name);
    let plans = await planClientImport(document);
    for (const entry of renames.keys()) {
      if (!plans.some((plan) => plan.entry === entry)) throw invalidInput(`--name ${entry}=…: ${file} has no server '${entry}'`);
    }
    plans = plans.map((plan) => (plan.action === 'install' && renames.has(plan.entry) ? { ...plan, plugin: renames.get(plan.entry)! } : plan));
    const workspace = typeof context.args.values.workspace === 'string' ? context.args.values.workspace : undefined;
    const project = typeof context.args.values.project === 'string' ? context.args.values.project : undefined;
    // The dry run reads the installed names too (and installs nothing), so both runs refuse the same entries.
    const app = plans.some((plan) => plan.action === 'install') ? await context.openApp() : undefined;
    if (app) plans = refuseTakenNames(plans, (await app.plugins.list()).map((plugin) => plugin.name));
    const actor = cliActor();
    const allowEgress = context.args.values['allow-egress'] === true && app !== undefined ? egressAllower(app, actor, file) : undefined;
    const servers = await runClientImport(app && !dryRun ? pluginService(app) : { add: () => Promise.reject(new Error('not opened')) }, plans, {
      dryRun, workspace, project, actor, reason: `imported from ${file}`, allowEgress,
    });
    const count = (status: ImportOutcome['status']) => servers.filter((outcome) => outcome.status === status).length;
    const summary = { installed: count('installed'), wouldInstall: count('would-install'), skipped: count('skipped'), failed: count('failed') };
    if (context.json) printJson(context.io, { file: path, dryRun, servers, ...summary });
    else {
      const lines: string[] = [];
      if (servers.length === 0) lines.push(`${file} lists no servers.`);
      else lines.push(formatTable(['STATUS', 'SERVER', 'PLUGIN', 'DETAIL'], servers.map(importRow)).trimEnd());
      const warnings = servers.flatMap((outcome) => outcome.warnings.map((warning) => `warning: ${outcome.entry}: ${warning}`));
      if (warnings.length > 0) lines.push('', ...warnings);
      lines.push(
        dryRun
          ? `${summary.wouldInstall} to install, ${summary.skipped} refused (dry run: nothing installed)`
          : `${summary.installed} installed, ${summary.skipped} refused, ${summary.failed} failed`,
      );
      context.io.stdout(`${lines.join('\n')}\n`);
    }
    return summary.failed > 0 ? EXIT_CODES.failure : EXIT_CODES.ok;
  },
};
