/**
 * @module cli/commands/learned-examples
 * `quiver tools examples list|delete|disable|enable TOOL [--org ORG]`: the learned example
 * queries of a tool (issue #13, DESIGN §3.10). Without `--org` a command covers every
 * organisation; `--org ORG` one of them. A tool is named by its id or qualified name.
 */
import { invalidInput } from '../../core/errors.ts';
import type { ToolRecord } from '../../core/tool.ts';
import type { App } from '../../app.ts';
import { formatTable, printJson, stringOption, type CommandOptions, type CommandSpec, type CliContext } from '../command.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const orgOption: CommandOptions = { org: { type: 'string', valueName: 'ORG', description: 'only this organisation (default: every organisation)' } };

async function toolOf(app: App, reference: string | undefined): Promise<ToolRecord> {
  if (!reference) throw invalidInput('name a tool by its id or qualified name (plugin__tool)');
  return UUID.test(reference) ? app.catalog.getTool(reference) : app.catalog.getToolByQualifiedName(reference);
}

function orgOf(context: CliContext): string | undefined {
  return stringOption(context, 'org');
}

const list: CommandSpec = {
  path: ['tools', 'examples', 'list'],
  summary: 'List the learned example queries of a tool (requests that led to a successful call).',
  usage: 'TOOL [--org ORG]',
  options: orgOption,
  async run(context) {
    const app = await context.openApp();
    const tool = await toolOf(app, context.args.positionals[0]);
    const org = orgOf(context);
    const examples = await app.learning.list(tool.id, org);
    const blocks = await app.learning.blocks(tool.id);
    if (context.json) {
      printJson(context.io, { tool: tool.qualifiedName, examples, disabledIn: blocks.map((scope) => scope ?? '*') });
      return 0;
    }
    if (blocks.length > 0) context.io.stdout(`learning disabled in: ${blocks.map((scope) => (scope === null ? 'every organisation' : scope === '' ? '(no organisation)' : scope)).join(', ')}\n`);
    if (examples.length === 0) {
      context.io.stdout(`${tool.qualifiedName} has no learned example queries${org === undefined ? '' : ` in ${org}`}.\n`);
      return 0;
    }
    context.io.stdout(
      formatTable(
        ['ID', 'ORG', 'HITS', 'LAST SEEN', 'TEXT'],
        examples.map((row) => [row.id, row.orgScope === '' ? '-' : row.orgScope, row.hits, row.lastSeenAt.toISOString(), row.text.slice(0, 80)]),
      ),
    );
    return 0;
  },
};

const remove: CommandSpec = {
  path: ['tools', 'examples', 'delete'],
  summary: 'Delete learned example queries of a tool (all, or one with --id).',
  usage: 'TOOL [--org ORG] [--id ID]',
  options: { ...orgOption, id: { type: 'string', valueName: 'ID', description: 'only this example (see tools examples list)' } },
  async run(context) {
    const app = await context.openApp();
    const tool = await toolOf(app, context.args.positionals[0]);
    const id = context.args.values.id;
    const deleted = await app.learning.remove(tool.id, { orgId: orgOf(context), ...(typeof id === 'string' ? { ids: [id] } : {}) });
    if (context.json) printJson(context.io, { tool: tool.qualifiedName, deleted });
    else context.io.stdout(`Deleted ${deleted} learned example quer${deleted === 1 ? 'y' : 'ies'} of ${tool.qualifiedName}.\n`);
    return 0;
  },
};

const switchCommand = (enabled: boolean): CommandSpec => ({
  path: ['tools', 'examples', enabled ? 'enable' : 'disable'],
  summary: enabled ? "Let a tool learn example queries again (undoes 'disable')." : 'Stop a tool from learning example queries; its learned ones stop ranking.',
  usage: 'TOOL [--org ORG]',
  options: orgOption,
  async run(context) {
    const app = await context.openApp();
    const tool = await toolOf(app, context.args.positionals[0]);
    const org = orgOf(context);
    await app.learning.setEnabled(tool.id, enabled, org);
    const where = org === undefined ? 'every organisation' : org;
    if (context.json) printJson(context.io, { tool: tool.qualifiedName, enabled, org: org ?? '*' });
    else context.io.stdout(`Learning ${enabled ? 'enabled' : 'disabled'} for ${tool.qualifiedName} in ${where}.\n`);
    return 0;
  },
});

/** The learned-example commands. */
export const learnedExampleCommands: CommandSpec[] = [list, remove, switchCommand(false), switchCommand(true)];
