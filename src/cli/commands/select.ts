/**
 * @module cli/commands/select
 * `quiver select QUERY …`: runs the selection pipeline and prints the chosen tools (or, with
 * --json, the whole result: tools, provider-ready schemas, metadata).
 * `quiver outcome EVENT_ID --called a,b [--failed]`: reports what the LLM did with a selection,
 * which updates the bandit (seed 001 §4.4, §5.5).
 */
import { QuiverError, ErrorCodes, invalidInput } from '../../core/errors.ts';
import type { App } from '../../app.ts';
import type { SelectionEngine } from '../../selection/engine.ts';
import { PROVIDERS, type SelectionProvider } from '../../selection/provider-formats.ts';
import { formatTable, printJson, type CliContext, type CommandSpec } from '../command.ts';
import { noCandidatesMessage } from '../empty-results.ts';

/** The engine on the app (`App.selection`, wired by the composition root). */
async function selectionOf(context: CliContext): Promise<SelectionEngine> {
  const app = (await context.openApp()) as App & { selection?: SelectionEngine };
  if (app.selection === undefined) throw new QuiverError(ErrorCodes.unavailable, 'the selection engine is not wired into this build');
  return app.selection;
}

function text(context: CliContext, name: string): string | undefined {
  const value = context.args.values[name];
  return typeof value === 'string' ? value : undefined;
}

function integer(context: CliContext, name: string): number | undefined {
  const value = text(context, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw invalidInput(`--${name} must be a whole number (got '${value}')`);
  return Number(value);
}

/** `quiver select`. */
export const selectCommand: CommandSpec = {
  path: ['select'],
  summary: 'Select the tools an LLM should see for a query (policy, enablement, page, retrieval, bandit, pins).',
  usage: 'QUERY [--k N] [--page P] [--workspace W] [--project P] [--org O] [--user U] [--role R]… [--tier T] [--provider openai|anthropic|gemini|mcp] [--token-budget N] [--no-log]',
  options: {
    k: { type: 'string', valueName: 'N', description: 'how many tools to retrieve, 1 to 50 (pinned tools come on top)', defaultHelp: '7' },
    page: { type: 'string', valueName: 'P', description: 'the page or screen the user is on, matched by page mappings' },
    workspace: { type: 'string', valueName: 'W', description: 'select among the plugins enabled in this workspace', defaultHelp: 'default' },
    project: { type: 'string', valueName: 'P', description: 'and in this project of the workspace' },
    org: { type: 'string', valueName: 'O', description: 'the organisation id, for policy rules' },
    user: { type: 'string', valueName: 'U', description: 'the user id, for policy rules and the bandit' },
    role: { type: 'string', multiple: true, valueName: 'R', description: 'a role of the user, for policy rules' },
    tier: { type: 'string', valueName: 'T', description: 'the plan tier, for policy rules' },
    provider: { type: 'string', valueName: 'NAME', description: 'schema format of the result: openai, anthropic, gemini or mcp', defaultHelp: 'openai' },
    'token-budget': { type: 'string', valueName: 'N', description: 'send at most N schema tokens (pins first, then the most relevant that fit)' },
    'no-log': { type: 'boolean', default: false, description: 'do not record a selection event (no outcome can be reported)' },
  },
  async run(context) {
    const query = context.args.positionals.join(' ').trim();
    if (query === '') throw invalidInput('select needs a QUERY');
    const provider = text(context, 'provider') ?? 'openai';
    if (!(PROVIDERS as readonly string[]).includes(provider)) throw invalidInput(`unknown provider '${provider}' (use ${PROVIDERS.join(', ')})`);
    const roles = context.args.values.role as string[] | undefined;
    const k = integer(context, 'k');
    const tokenBudget = integer(context, 'token-budget');
    const selection = await selectionOf(context);
    const result = await selection.selectTools({
      query,
      ...(k === undefined ? {} : { k }),
      ...(tokenBudget === undefined ? {} : { tokenBudget }),
      provider: provider as SelectionProvider,
      log: context.args.values['no-log'] !== true,
      context: {
        page: text(context, 'page'),
        workspace: text(context, 'workspace'),
        project: text(context, 'project'),
        orgId: text(context, 'org'),
        userId: text(context, 'user'),
        tier: text(context, 'tier'),
        ...(roles === undefined ? {} : { roles }),
      },
    });
    // A CLI process exits right after: write the event now so `quiver outcome` can find it.
    await selection.flush();
    if (context.json) {
      printJson(context.io, result);
      return 0;
    }
    const { metadata } = result;
    if (result.tools.length === 0 && metadata.candidateCount === 0) {
      // Nothing visible in this scope: say whether the catalog is empty or nothing is enabled here.
      const app = await context.openApp();
      const catalogTools = (await app.catalog.listTools({ limit: 1 } as Parameters<App['catalog']['listTools']>[0])).total;
      context.io.stdout(noCandidatesMessage({ catalogTools, workspace: text(context, 'workspace') ?? 'default', project: text(context, 'project') }));
      for (const warning of metadata.warnings) context.io.stderr(`warning: ${warning}\n`);
      return 0;
    }
    context.io.stdout(
      formatTable(
        ['#', 'TOOL', 'REASON', 'RELEVANCE', 'TOKENS'],
        result.tools.map((tool, i) => [i + 1, tool.qualifiedName, tool.reason, tool.reason === 'pinned' ? '-' : tool.score.toFixed(3), tool.tokens]),
      ),
    );
    // Issue #26: the bandit reorders what retrieval scored (Thompson sampling, one exploration
    // slot), so the relevance column need not fall down the ranks: say so rather than puzzle.
    const retrievedScores = result.tools.filter((tool) => tool.reason !== 'pinned').map((tool) => tool.score);
    if (retrievedScores.some((score, i) => i > 0 && score > retrievedScores[i - 1]!)) {
      context.io.stdout('\nRanked by the bandit (Thompson sampling over relevance and past outcomes), not by relevance alone.\n');
    }
    context.io.stdout(
      `\n${result.tools.length} of ${metadata.candidateCount} tools · ${metadata.tokens.sent} of ${metadata.tokens.catalog} tokens ` +
        `(${metadata.tokens.savedPercent}% saved, ${metadata.tokens.tokenizer}) · ${metadata.stageTimingsMs.total.toFixed(1)} ms · ${metadata.method}\n` +
        (metadata.eventId === undefined ? '' : `event ${metadata.eventId}\n`),
    );
    for (const warning of metadata.warnings) context.io.stderr(`warning: ${warning}\n`);
    return 0;
  },
};

/** `quiver outcome`. */
export const outcomeCommand: CommandSpec = {
  path: ['outcome'],
  summary: 'Report which tools the LLM called for a selection event and whether they succeeded.',
  usage: 'EVENT_ID --called a,b [--failed]',
  options: {
    called: { type: 'string', multiple: true, valueName: 'a,b', description: 'the qualified names of the tools the LLM called (comma-separated or repeated)' },
    failed: { type: 'boolean', default: false, description: 'the calls did not succeed' },
  },
  async run(context) {
    const [eventId] = context.args.positionals;
    if (!eventId) throw invalidInput('outcome needs an EVENT_ID');
    const called = ((context.args.values.called as string[] | undefined) ?? [])
      .flatMap((entry) => entry.split(','))
      .map((name) => name.trim())
      .filter((name) => name !== '');
    const selection = await selectionOf(context);
    const result = await selection.recordOutcome(eventId, { toolsCalled: called, success: context.args.values.failed !== true });
    if (context.json) printJson(context.io, result);
    else {
      context.io.stdout(`recorded ${result.outcome} for event ${result.eventId}${result.calledToolIds.length > 0 ? ` (${result.calledToolIds.length} offered tool(s) called)` : ''}\n`);
      if (result.unresolved.length > 0) context.io.stderr(`warning: not among the offered tools: ${result.unresolved.join(', ')}\n`);
    }
    return 0;
  },
};

/** Both selection commands. */
export const selectionCommands: CommandSpec[] = [selectCommand, outcomeCommand];
