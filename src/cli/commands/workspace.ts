/**
 * @module cli/commands/workspace
 * `quiver workspace create|list` and `quiver project create|list`: the scopes plugins are
 * enabled in (seed 003: workspace-wide or per project). `default` exists from the first start.
 */
import { invalidInput } from '../../core/errors.ts';
import { GATEWAY_TOOL_NAMES, nativeNameReport, type NativeNameReport } from '../../core/native-names.ts';
import { formatTable, printJson, type CliContext, type CommandSpec } from '../command.ts';

const workspaceCreate: CommandSpec = {
  path: ['workspace', 'create'],
  summary: 'Create a workspace (kebab-case name).',
  usage: 'NAME [--title TEXT]',
  options: { title: { type: 'string', valueName: 'TEXT', description: 'display name', defaultHelp: 'the NAME' } },
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('workspace create needs a NAME');
    const title = context.args.values.title;
    const app = await context.openApp();
    const workspace = await app.plugins.createWorkspace({ name, ...(typeof title === 'string' ? { displayName: title } : {}) });
    if (context.json) printJson(context.io, workspace);
    else context.io.stdout(`created workspace ${workspace.name}\n`);
    return 0;
  },
};

const workspaceList: CommandSpec = {
  path: ['workspace', 'list'],
  summary: 'List workspaces.',
  usage: '',
  async run(context) {
    const app = await context.openApp();
    const workspaces = await app.plugins.listWorkspaces();
    if (context.json) printJson(context.io, { workspaces });
    else context.io.stdout(formatTable(['NAME', 'TITLE', 'ID'], workspaces.map((w) => [w.name, w.displayName, w.id])));
    return 0;
  },
};

const workspaceSet: CommandSpec = {
  path: ['workspace', 'set'],
  summary: 'Set how MCP sessions of a workspace see tools: --exposure search|still|capabilities|all|default, --native-names on|off.',
  usage: 'NAME [--exposure MODE] [--native-names on|off]',
  options: {
    exposure: { type: 'string', valueName: 'MODE', description: 'search (meta-tools, found tools bound), still (meta-tools, a list that never changes; what 2026-07-28 clients get), capabilities, all (every tool), or default (the server setting)' },
    'native-names': { type: 'string', valueName: 'on|off', description: "on: tools, prompts and resources keep their plugin's own names where no other plugin uses them (issue #12)" },
  },
  async run(context) {
    const [name] = context.args.positionals;
    const exposure = context.args.values.exposure;
    const nativeNames = context.args.values['native-names'];
    if (!name || (typeof exposure !== 'string' && typeof nativeNames !== 'string')) {
      throw invalidInput('workspace set needs a NAME and --exposure search|still|capabilities|all|default or --native-names on|off');
    }
    if (typeof exposure === 'string' && !['search', 'still', 'capabilities', 'all', 'default'].includes(exposure)) {
      throw invalidInput(`--exposure must be search, still, capabilities, all or default, got '${exposure}'`);
    }
    if (typeof nativeNames === 'string' && !['on', 'off'].includes(nativeNames)) throw invalidInput(`--native-names must be on or off, got '${nativeNames}'`);
    const app = await context.openApp();
    if (typeof exposure === 'string') await app.plugins.setWorkspaceExposureMode(name, exposure === 'default' ? null : (exposure as 'search' | 'still' | 'capabilities' | 'all'));
    if (typeof nativeNames === 'string') await app.plugins.setWorkspaceNativeNames(name, nativeNames === 'on');
    const report = typeof nativeNames === 'string' ? await workspaceNameReport(context, name) : undefined;
    if (context.json) printJson(context.io, { workspace: name, ...(typeof exposure === 'string' ? { exposure } : {}), ...(report ? { names: report } : {}) });
    else {
      if (typeof exposure === 'string') context.io.stdout(`workspace ${name}: exposure ${exposure}\n`);
      if (report) context.io.stdout(formatNameReport(report));
    }
    return 0;
  },
};

const workspaceNames: CommandSpec = {
  path: ['workspace', 'names'],
  summary: "Show which tool names a workspace's MCP sessions see natively and which keep the plugin__ prefix, and why.",
  usage: 'NAME',
  async run(context) {
    const [name] = context.args.positionals;
    if (!name) throw invalidInput('workspace names needs a NAME');
    const report = await workspaceNameReport(context, name);
    if (context.json) printJson(context.io, report);
    else context.io.stdout(formatNameReport(report));
    return 0;
  },
};

/** The native-name report of a workspace's tools (prompts and resources follow the same rule, decided live per session). */
async function workspaceNameReport(context: CliContext, workspace: string): Promise<NativeNameReport> {
  const app = await context.openApp();
  const [on, tools] = await Promise.all([app.plugins.workspaceNativeNames(), app.plugins.effectiveTools({ workspace })]);
  return nativeNameReport(workspace, on.has(workspace), tools, GATEWAY_TOOL_NAMES);
}

function formatNameReport(report: NativeNameReport): string {
  const lines = [`workspace ${report.workspace}: native names ${report.nativeNames ? 'on' : 'off'}`];
  if (!report.nativeNames) lines.push('  every tool, prompt and resource is shown as plugin__name');
  else lines.push(`  ${report.native.length} tool(s) shown under their own names`);
  for (const kept of report.keptPrefixed) lines.push(`  kept prefixed: ${kept.prefixed} (${kept.reason})`);
  return `${lines.join('\n')}\n`;
}

const projectCreate: CommandSpec = {
  path: ['project', 'create'],
  summary: 'Create a project inside a workspace.',
  usage: 'WORKSPACE NAME [--title TEXT]',
  options: { title: { type: 'string', valueName: 'TEXT', description: 'display name', defaultHelp: 'the NAME' } },
  async run(context) {
    const [workspace, name] = context.args.positionals;
    if (!workspace || !name) throw invalidInput('project create needs a WORKSPACE and a NAME');
    const title = context.args.values.title;
    const app = await context.openApp();
    const project = await app.plugins.createProject(workspace, { name, ...(typeof title === 'string' ? { displayName: title } : {}) });
    if (context.json) printJson(context.io, project);
    else context.io.stdout(`created project ${workspace}/${project.name}\n`);
    return 0;
  },
};

const projectList: CommandSpec = {
  path: ['project', 'list'],
  summary: 'List the projects of a workspace.',
  usage: 'WORKSPACE',
  async run(context) {
    const [workspace] = context.args.positionals;
    if (!workspace) throw invalidInput('project list needs a WORKSPACE');
    const app = await context.openApp();
    const projects = await app.plugins.listProjects(workspace);
    if (context.json) printJson(context.io, { projects });
    else context.io.stdout(formatTable(['NAME', 'TITLE', 'ID'], projects.map((p) => [p.name, p.displayName, p.id])));
    return 0;
  },
};

export const workspaceCommands: CommandSpec[] = [workspaceCreate, workspaceList, workspaceSet, workspaceNames, projectCreate, projectList];
