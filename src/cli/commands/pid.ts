/**
 * @module cli/commands/pid
 * `quiver pid generate|show|status|diff` (issue #14): generate a plugin's intelligence document
 * from its sources (MCP discovery, zod, TypeScript, OpenAPI, LLM) with per-field provenance,
 * see the stored one and whether its sources changed since, and review it against the
 * plugin's current document. `generate PATH` works on a folder that is not installed (code and
 * OpenAPI sources; nothing is stored).
 */
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { invalidInput } from '../../core/errors.ts';
import type { AcceptanceStatus, GenerationReport } from '../../intelligence/index.ts';
import { parseSources } from '../../intelligence/source-choice.ts';
import { formatTable, printJson, stringOption, type CliContext, type CommandSpec } from '../command.ts';

function target(context: CliContext): string {
  const value = context.args.positionals[0];
  if (!value) throw invalidInput('name a plugin (or, for generate, a folder path)');
  return value;
}

/** A folder argument: it has a path separator or is `.` / `..`. */
const isPath = (value: string): boolean => /[\\/]/.test(value) || value === '.' || value === '..';

function printReport(context: CliContext, report: GenerationReport): void {
  const { io } = context;
  io.stdout(`${report.stored ? 'Generated and stored' : 'Generated (not stored)'} the intelligence document of ${report.plugin}: ${report.toolCount} tool(s) in ${report.durationMs.toFixed(1)} ms.\n`);
  io.stdout(`content hash ${report.contentHash}\n`);
  if (report.regenerated.length > 0) io.stdout(`regenerated: ${report.regenerated.join(', ')}\n`);
  if (report.reused.length > 0) io.stdout(`reused (inputs unchanged): ${report.reused.join(', ')}\n`);
  if (report.llmUsage !== null) {
    const usage = report.llmUsage;
    io.stdout(`LLM: ${usage.calls} call(s), ${usage.cacheHits} cached, ${usage.promptTokens} prompt + ${usage.completionTokens} completion tokens${usage.costUsd === null ? '' : `, $${usage.costUsd.toFixed(4)}`}\n`);
  }
  if (report.stored) io.stdout(`catalog tools with new example requests: ${report.updatedTools}\n`);
  for (const warning of report.warnings) io.stdout(`warning: ${warning}\n`);
  io.stdout("Review it with 'quiver pid diff' and 'quiver pid show --provenance'.\n");
}

const generate: CommandSpec = {
  path: ['pid', 'generate'],
  summary: 'Generate a plugin intelligence document from MCP discovery, zod schemas, TypeScript JSDoc, OpenAPI and (asked for) an LLM.',
  usage: 'NAME|PATH [--from mcp,zod,ts,openapi,llm] [--openapi FILE] [--dry-run]',
  options: {
    from: { type: 'string', multiple: true, valueName: 'LIST', description: 'sources, comma-separated (llm only when named; needs QUIVER_LLM_BASE_URL and QUIVER_LLM_MODEL)', defaultHelp: 'mcp,zod,ts,openapi' },
    openapi: { type: 'string', valueName: 'FILE', description: 'an OpenAPI 3.0 / 3.1 document (JSON or YAML) to read instead of looking in the plugin folder' },
    'dry-run': { type: 'boolean', default: false, description: 'print the result without storing it or changing the catalog' },
  },
  async run(context) {
    const reference = target(context);
    // Bad --from is a usage error before the store is opened.
    parseSources(context.args.values.from as string[] | undefined);
    const app = await context.openApp();
    const openapi = stringOption(context, 'openapi');
    const options = {
      from: context.args.values.from as string[] | undefined,
      openApiPath: openapi === undefined ? undefined : resolve(context.cwd, openapi),
      dryRun: context.args.values['dry-run'] === true,
    };
    const report = isPath(reference) ? await app.pidGeneration.generateFromPath(resolve(context.cwd, reference), options) : await app.pidGeneration.generate(reference, options);
    if (context.json) printJson(context.io, report);
    else printReport(context, report);
    return 0;
  },
};

const show: CommandSpec = {
  path: ['pid', 'show'],
  summary: 'Show the generated intelligence document of a plugin (with --provenance: which source gave each field).',
  usage: 'NAME [--provenance]',
  options: { provenance: { type: 'boolean', default: false, description: 'list each field with the source it came from' } },
  async run(context) {
    const app = await context.openApp();
    const record = await app.pidGeneration.get(target(context));
    if (context.json) printJson(context.io, record);
    else if (context.args.values.provenance === true) {
      context.io.stdout(formatTable(['FIELD', 'SOURCE'], Object.entries(record.provenance).sort(([a], [b]) => (a < b ? -1 : 1))));
    } else context.io.stdout(`${JSON.stringify(record.document, null, 2)}\n`);
    return 0;
  },
};

const status: CommandSpec = {
  path: ['pid', 'status'],
  summary: 'Say whether the generated document is stale: which sources changed since it was generated.',
  usage: 'NAME',
  async run(context) {
    const app = await context.openApp();
    const report = await app.pidGeneration.status(target(context));
    if (context.json) printJson(context.io, report);
    else if (!report.generated) context.io.stdout(`${report.plugin} has no generated document; run 'quiver pid generate ${report.plugin}'.\n`);
    else {
      context.io.stdout(report.stale ? `${report.plugin}: stale (changed: ${report.staleSources.join(', ')}); run 'quiver pid generate ${report.plugin}'.\n` : `${report.plugin}: up to date (${report.contentHash}).\n`);
      context.io.stdout(`${acceptanceLine(report.generationId, report.review, report.accepted)}\n`);
    }
    return 0;
  },
};

/** One line on how the current document relates to the newest generation. */
function acceptanceLine(generationId: string | null, review: string | null, accepted: AcceptanceStatus): string {
  const newest = generationId === null ? 'no generation' : `newest generation ${generationId}${review === null ? '' : ` (${review})`}`;
  if (!accepted.currentIsAccepted || accepted.acceptance === null) return `current document: not accepted from a generation; ${newest}`;
  const { generationId: acceptedId, acceptedBy, acceptedAt } = accepted.acceptance;
  return `current document: accepted from generation ${acceptedId} by ${acceptedBy} at ${acceptedAt.toISOString()}; ${accepted.newestIsAccepted ? 'that is the newest generation' : newest}`;
}

const diff: CommandSpec = {
  path: ['pid', 'diff'],
  summary: "Diff a plugin's generated document against its current one, field by field, with each change's source.",
  usage: 'NAME',
  async run(context) {
    const app = await context.openApp();
    const result = await app.pidGeneration.diff(target(context));
    if (context.json) {
      printJson(context.io, result);
      return 0;
    }
    context.io.stdout(`${acceptanceLine(result.generationId, null, result.accepted)}\n`);
    if (result.changes.length === 0) context.io.stdout(`${result.plugin}: the generated document equals the current one.\n`);
    const show = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value).slice(0, 100));
    for (const change of result.changes) {
      const mark = change.kind === 'added' ? '+' : change.kind === 'removed' ? '-' : '~';
      context.io.stdout(`${mark} ${change.path}${change.source === undefined ? '' : ` [${change.source}]`}: ${change.kind === 'changed' ? `${show(change.before)} -> ${show(change.after)}` : show(change.after ?? change.before)}\n`);
    }
    return 0;
  },
};

/** Who decides from the command line: the operating-system user (the CLI holds the store itself). */
const cliActor = (): string => `cli:${userInfo().username}`;

const accept: CommandSpec = {
  path: ['pid', 'accept'],
  summary: "Adopt the latest (or named) generated document as the plugin's current one, re-validated, with its provenance recorded.",
  usage: 'NAME [--generation ID] [--force]',
  options: {
    generation: { type: 'string', valueName: 'ID', description: 'the generation to accept (refused when it is not the latest)' },
    force: { type: 'boolean', default: false, description: 'accept a stale generation (its sources changed since it was generated)' },
  },
  async run(context) {
    const app = await context.openApp();
    const result = await app.pidGeneration.accept(target(context), { generationId: stringOption(context, 'generation'), force: context.args.values.force === true, actor: cliActor() });
    if (context.json) printJson(context.io, result);
    else {
      context.io.stdout(`Accepted generation ${result.generationId} as the intelligence document of ${result.plugin} (${result.validationStatus}, document ${result.documentHash}).\n`);
      if (result.forced) context.io.stdout(`warning: accepted although stale (changed: ${result.staleSources.join(', ')})\n`);
      for (const warning of result.warnings) context.io.stdout(`warning: ${warning}\n`);
    }
    return 0;
  },
};

const reject: CommandSpec = {
  path: ['pid', 'reject'],
  summary: 'Mark the latest (or named) generated document rejected; it stays stored for history until the next generation.',
  usage: 'NAME [--generation ID]',
  options: { generation: { type: 'string', valueName: 'ID', description: 'the generation to reject (refused when it is not the latest)' } },
  async run(context) {
    const app = await context.openApp();
    const record = await app.pidGeneration.reject(target(context), { generationId: stringOption(context, 'generation'), actor: cliActor() });
    if (context.json) printJson(context.io, record);
    else context.io.stdout(`Rejected generation ${record.id} of ${record.pluginName}.\n`);
    return 0;
  },
};

/** The `pid` commands. */
export const pidCommands: CommandSpec[] = [generate, show, status, diff, accept, reject];
