/**
 * @module cli/commands/import
 * `quiver import FILE [--dry-run]`: installs every server of an existing MCP client
 * configuration (Claude Desktop, Cursor, VS Code) as a plugin and says, per server, what it
 * installed and what it could not and why (src/plugins/client-import.ts has the rules). Exit
 * code 0 unless an install failed; entries Quiver cannot install are reported, not fatal.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { invalidInput } from '../../core/errors.ts';
import { parseJsonc } from '../../core/jsonc.ts';
import { planClientImport, runClientImport, type ImportOutcome } from '../../plugins/client-import.ts';
import { EXIT_CODES, printJson, type CommandSpec } from '../command.ts';
import { pluginService } from './plugin.ts';

const FILE_LIMIT = 1024 * 1024;

function line(outcome: ImportOutcome): string {
  const name = outcome.plugin ?? outcome.entry;
  switch (outcome.status) {
    case 'installed':
      return `installed ${name} from ${outcome.source} — ${outcome.tools ?? 0} tools`;
    case 'would-install':
      return `would install ${name} from ${outcome.source}`;
    case 'failed':
      return `failed ${name} (${outcome.source}): ${outcome.reason}`;
    default:
      return `not installed ${outcome.entry}: ${outcome.reason}`;
  }
}

/** `quiver import`. */
export const importCommand: CommandSpec = {
  path: ['import'],
  summary: 'Install the servers of an MCP client configuration (Claude Desktop, Cursor, VS Code mcp.json) as plugins.',
  usage: 'FILE [--dry-run] [--workspace W] [--project P]',
  options: {
    'dry-run': { type: 'boolean', default: false, description: 'only say what would be installed, install nothing' },
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
    let document: unknown;
    try {
      document = parseJsonc(text);
    } catch (error) {
      throw invalidInput(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    const dryRun = context.args.values['dry-run'] === true;
    const plans = await planClientImport(document);
    const workspace = typeof context.args.values.workspace === 'string' ? context.args.values.workspace : undefined;
    const project = typeof context.args.values.project === 'string' ? context.args.values.project : undefined;
    // A dry run never opens the store: it only reads the file.
    const needsApp = !dryRun && plans.some((plan) => plan.action === 'install');
    const servers = await runClientImport(needsApp ? pluginService(await context.openApp()) : { add: () => Promise.reject(new Error('not opened')) }, plans, { dryRun, workspace, project });
    const count = (status: ImportOutcome['status']) => servers.filter((outcome) => outcome.status === status).length;
    const summary = { installed: count('installed'), wouldInstall: count('would-install'), skipped: count('skipped'), failed: count('failed') };
    if (context.json) printJson(context.io, { file: path, dryRun, servers, ...summary });
    else {
      const lines = servers.flatMap((outcome) => [line(outcome), ...outcome.warnings.map((warning) => `  warning: ${warning}`)]);
      if (servers.length === 0) lines.push(`${file} lists no servers.`);
      lines.push(
        dryRun
          ? `${summary.wouldInstall} to install, ${summary.skipped} not installable (dry run: nothing installed)`
          : `${summary.installed} installed, ${summary.skipped} not installable, ${summary.failed} failed`,
      );
      context.io.stdout(`${lines.join('\n')}\n`);
    }
    return summary.failed > 0 ? EXIT_CODES.failure : EXIT_CODES.ok;
  },
};
