/**
 * @module cli/commands/tools
 * `quiver tools list|show|history|rollback` and `quiver sync FILE`: the catalog from the
 * command line. A tool is named by its id or its qualified name (`plugin__tool`).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { invalidInput, QuiverError, ErrorCodes } from '../../core/errors.ts';
import { parseJsonText } from '../../core/validation.ts';
import type { ToolRecord } from '../../core/tool.ts';
import type { App } from '../../app.ts';
import { formatTable, printJson, type CommandSpec } from '../command.ts';
import { emptyCatalogMessage, noToolsMatchMessage, unknownPluginError } from '../empty-results.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function findTool(app: App, reference: string | undefined): Promise<ToolRecord> {
  if (!reference) throw invalidInput('name a tool by its id or qualified name (plugin__tool)');
  return UUID.test(reference) ? app.catalog.getTool(reference) : app.catalog.getToolByQualifiedName(reference);
}

const list: CommandSpec = {
  path: ['tools', 'list'],
  summary: 'List catalog tools, filtered by plugin, category or status.',
  usage: '[--plugin NAME] [--category NAME] [--status S] [--search TEXT] [--limit N] [--offset N] [--include-deleted]',
  options: {
    plugin: { type: 'string', valueName: 'NAME', description: 'only tools of this plugin' },
    category: { type: 'string', valueName: 'NAME', description: 'only tools in this category' },
    status: { type: 'string', valueName: 'S', description: 'only tools with this status: draft, active, deprecated or retired' },
    search: { type: 'string', valueName: 'TEXT', description: 'only tools whose name, description or tags contain TEXT' },
    limit: { type: 'string', valueName: 'N', description: 'at most N tools', defaultHelp: '50' },
    offset: { type: 'string', valueName: 'N', description: 'skip the first N tools', defaultHelp: '0' },
    'include-deleted': { type: 'boolean', default: false, description: 'include soft-deleted tools' },
  },
  async run(context) {
    const v = context.args.values;
    const app = await context.openApp();
    const page = await app.catalog.listTools({
      ...(typeof v.plugin === 'string' ? { pluginName: v.plugin } : {}),
      ...(typeof v.category === 'string' ? { category: v.category } : {}),
      ...(typeof v.status === 'string' ? { status: v.status as ToolRecord['status'] } : {}),
      ...(typeof v.search === 'string' ? { search: v.search } : {}),
      ...(typeof v.limit === 'string' ? { limit: v.limit } : {}),
      ...(typeof v.offset === 'string' ? { offset: v.offset } : {}),
      includeDeleted: v['include-deleted'] === true,
    } as Parameters<App['catalog']['listTools']>[0]);
    if (page.total === 0 && typeof v.plugin === 'string') {
      const known = (await app.plugins.list({ includeRemoved: true })).map((plugin) => plugin.name);
      if (!known.includes(v.plugin)) throw unknownPluginError(v.plugin, known);
    }
    if (context.json) {
      printJson(context.io, page);
    } else if (page.total === 0) {
      // Say why it is empty: nothing installed, or filters that match nothing.
      const filters = (['plugin', 'category', 'status', 'search'] as const).filter((name) => typeof v[name] === 'string').map((name) => `--${name} '${String(v[name])}'`);
      const catalogTools = filters.length === 0 ? 0 : (await app.catalog.listTools({ limit: 1, includeDeleted: v['include-deleted'] === true } as Parameters<App['catalog']['listTools']>[0])).total;
      context.io.stdout(catalogTools === 0 ? emptyCatalogMessage() : noToolsMatchMessage(filters, catalogTools));
    } else {
      context.io.stdout(
        formatTable(
          ['NAME', 'STATUS', 'VERSION', 'CATEGORY', 'EMBEDDING', 'DESCRIPTION'],
          page.items.map((t) => [t.qualifiedName, t.deletedAt ? 'deleted' : t.status, t.version, t.categoryName, t.embeddingStatus, t.description.slice(0, 60)]),
        ),
      );
      context.io.stdout(`${page.items.length} of ${page.total} tools (offset ${page.offset})\n`);
    }
    return 0;
  },
};

const show: CommandSpec = {
  path: ['tools', 'show'],
  summary: 'Show one tool with its full metadata.',
  usage: 'TOOL',
  async run(context) {
    const app = await context.openApp();
    const tool = await findTool(app, context.args.positionals[0]);
    if (context.json) printJson(context.io, tool);
    else context.io.stdout(`${JSON.stringify(tool, null, 2)}\n`);
    return 0;
  },
};

const history: CommandSpec = {
  path: ['tools', 'history'],
  summary: 'Show the immutable version history of a tool.',
  usage: 'TOOL',
  async run(context) {
    const app = await context.openApp();
    const tool = await findTool(app, context.args.positionals[0]);
    const versions = await app.catalog.listToolVersions(tool.id);
    if (context.json) printJson(context.io, { tool: tool.qualifiedName, versions });
    else
      context.io.stdout(
        formatTable(
          ['VERSION', 'CREATED', 'CHANGED FIELDS', 'REASON', 'HASH'],
          versions.map((v) => [v.version, v.createdAt.toISOString(), v.changedFields.join(','), v.changeReason, v.contentHash.slice(0, 12)]),
        ),
      );
    return 0;
  },
};

const rollback: CommandSpec = {
  path: ['tools', 'rollback'],
  summary: 'Restore a tool to an earlier version (recorded as a new version).',
  usage: 'TOOL --version N [--reason TEXT]',
  options: {
    version: { type: 'string', valueName: 'N', description: 'the version to restore (see quiver tools history)' },
    reason: { type: 'string', valueName: 'TEXT', description: 'why, recorded with the new version' },
  },
  async run(context) {
    const version = context.args.values.version;
    if (typeof version !== 'string') throw invalidInput('tools rollback needs --version N');
    const app = await context.openApp();
    const tool = await findTool(app, context.args.positionals[0]);
    const restored = await app.catalog.rollbackTool(tool.id, {
      version,
      ...(typeof context.args.values.reason === 'string' ? { changeReason: context.args.values.reason } : {}),
    } as Parameters<App['catalog']['rollbackTool']>[1]);
    if (context.json) printJson(context.io, restored);
    else context.io.stdout(`${restored.qualifiedName} restored to version ${version} (now version ${restored.version})\n`);
    return 0;
  },
};

const sync: CommandSpec = {
  path: ['sync'],
  summary: 'Apply a plugin self-registration payload (seed 001 §9) differentially, all or nothing.',
  usage: 'FILE',
  async run(context) {
    const [file] = context.args.positionals;
    if (!file) throw invalidInput('sync needs a FILE with the payload (JSON)');
    let text: string;
    try {
      text = await readFile(resolve(context.cwd, file), 'utf8');
    } catch (error) {
      throw new QuiverError(ErrorCodes.notFound, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const payload = parseJsonText(text, file);
    const app = await context.openApp();
    const report = await app.catalog.syncPlugin(payload as Parameters<App['catalog']['syncPlugin']>[0]);
    if (context.json) printJson(context.io, report);
    else
      context.io.stdout(
        `synced ${report.pluginName} ${report.version}: ${report.inserted.length} inserted, ${report.updated.length} updated, ` +
          `${report.unchanged} unchanged, ${report.deleted.length} deleted, ${report.revived.length} revived, ` +
          `${report.markedStale.length} marked stale, ${report.needsReview.length} need review (${Math.round(report.durationMs)} ms)\n`,
      );
    return 0;
  },
};

export const toolsCommands: CommandSpec[] = [list, show, history, rollback, sync];
