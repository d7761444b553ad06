/**
 * @module cli/commands/eval
 * `quiver eval --tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl]
 * [--k 1,3,5,10] [--json]` (DESIGN §5): retrieval quality on a catalog and labelled queries.
 * Thin wrapper: the work is in src/retrieval/eval; `--replay` (issue #13) is in eval-replay.ts.
 * Exit 0 done, 2 bad usage or input.
 */
import { invalidInput } from '../../core/errors.ts';
import { describeOptions, stringOption, type CommandSpec } from '../command.ts';
import { embedderFlagHelp, evalOptions } from '../../retrieval/eval/options.ts';
import { executeReplay, replayOptions } from './eval-replay.ts';

export const evalCommand: CommandSpec = {
  path: ['eval'],
  summary: 'Measure retrieval (Recall@k, Comp@k, nDCG@10, MRR, latency) on tools.jsonl + queries.jsonl, fully offline.',
  usage:
    '--tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl] [--k 1,3,5,10] [--embedder NAME] [--json]\n' +
    '       quiver eval --replay --tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl | --cold] [--top-k 5] [--window 500] [--feedback-noise P] [--seed N] [--org ID] [--shuffle] [--no-feedback] [--retry-on-miss] [--embedder NAME] [--json]',
  options: {
    ...describeOptions(evalOptions, {
    tools: { valueName: 'FILE', description: 'the catalog: one tool per line (id, name, description, parameters?)' },
    queries: { valueName: 'FILE', description: 'labelled queries: one per line (id, query, gold tool ids)' },
    examples: { valueName: 'FILE', description: 'known example queries per tool (tool_id, query), used as tool metadata' },
    k: { valueName: 'LIST', description: 'extra cut-offs for Recall@k, comma-separated', defaultHelp: '1,3,5,10 always reported' },
    embedder: { valueName: 'NAME', description: `the embedder to measure (plain and --replay): ${embedderFlagHelp}`, defaultHelp: 'the configured one (QUIVER_EMBEDDER)' },
    }),
    ...describeOptions(replayOptions, {
    replay: 'replay the queries in order through the real selection path (in-memory store) with simulated outcomes; metrics per window',
    window: { valueName: 'N', description: 'replay: queries per reported window', defaultHelp: '500' },
    'top-k': { valueName: 'K', description: 'replay: tools offered per selection; the simulated model calls the gold tool when it is among them', defaultHelp: '5' },
    'feedback-noise': { valueName: 'P', description: 'replay: share of outcomes that credit a wrong offered tool instead', defaultHelp: '0' },
    seed: { valueName: 'N', description: 'replay: seed of the outcome simulation and the bandit', defaultHelp: '1' },
    cold: 'replay: no written example queries in the catalog (cold start)',
    org: { valueName: 'ID', description: 'replay: the organisation the stream runs as', defaultHelp: 'replay' },
      shuffle: 'replay: in a seeded random order instead of the file order, so windows hold alike queries',
      'no-feedback': 'replay: report no outcomes (the static ranking, to compare windows against)',
      'retry-on-miss': 'replay: a simulated model offered nothing it calls searches again, in the same session, for twice as many tools and calls the gold one among them (scored on the first search)',
    }),
  },
  storeless: true,
  async run(context) {
    if (context.args.positionals.length > 0) throw invalidInput(`eval takes no positional arguments, got '${context.args.positionals[0]}'`);
    if (context.args.values.replay === true) return executeReplay(context);
    const value = (name: string): string | undefined => stringOption(context, name);
    // The app module (every service behind it) loads when eval runs, not with the command list (issue #28).
    const [{ createEmbedder }, { executeEval }] = await Promise.all([import('../../app.ts'), import('../../retrieval/eval/cli.ts')]);
    return executeEval(
      { tools: value('tools'), queries: value('queries'), examples: value('examples'), k: value('k'), embedder: value('embedder'), json: context.json },
      { stdout: { write: (text: string) => context.io.stdout(text) }, stderr: { write: (text: string) => context.io.stderr(text) } },
      // By default eval measures what `quiver serve` would rank with.
      { configured: () => createEmbedder(context.config().embedder), env: context.env },
    );
  },
};
