/**
 * @module cli/commands/workspace
 * `quiver workspace create|list` and `quiver project create|list`: the scopes plugins are
 * enabled in (seed 003: workspace-wide or per project). `default` exists from the first start.
 */
import { invalidInput } from '../../core/errors.ts';
import { formatTable, printJson, type CommandSpec } from '../command.ts';

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
  summary: 'Set how MCP sessions of a workspace see tools: --exposure search|capabilities|all|default.',
  usage: 'NAME --exposure MODE',
  options: { exposure: { type: 'string', valueName: 'MODE', description: 'search (meta-tools only), capabilities, all (every tool), or default (the server setting)' } },
  async run(context) {
    const [name] = context.args.positionals;
    const exposure = context.args.values.exposure;
    if (!name || typeof exposure !== 'string') throw invalidInput('workspace set needs a NAME and --exposure search|capabilities|all|default');
    if (!['search', 'capabilities', 'all', 'default'].includes(exposure)) {
      throw invalidInput(`--exposure must be search, capabilities, all or default, got '${exposure}'`);
    }
    const app = await context.openApp();
    await app.plugins.setWorkspaceExposureMode(name, exposure === 'default' ? null : (exposure as 'search' | 'capabilities' | 'all'));
    if (context.json) printJson(context.io, { workspace: name, exposure });
    else context.io.stdout(`workspace ${name}: exposure ${exposure}\n`);
    return 0;
  },
};

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

export const workspaceCommands: CommandSpec[] = [workspaceCreate, workspaceList, workspaceSet, projectCreate, projectList];
