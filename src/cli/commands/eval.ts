/**
 * @module cli/commands/eval
 * `quiver eval --tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl]
 * [--k 1,3,5,10] [--json]` (DESIGN §5): retrieval quality on a catalog and labelled queries.
 * Thin wrapper: the work is in src/retrieval/eval. Exit 0 done, 2 bad usage or input.
 */
import { invalidInput } from '../../core/errors.ts';
import { describeOptions, type CommandSpec } from '../command.ts';
import { evalOptions, executeEval } from '../../retrieval/eval/cli.ts';

export const evalCommand: CommandSpec = {
  path: ['eval'],
  summary: 'Measure retrieval (Recall@k, Comp@k, nDCG@10, MRR, latency) on tools.jsonl + queries.jsonl, fully offline.',
  usage: '--tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl] [--k 1,3,5,10] [--json]',
  options: describeOptions(evalOptions, {
    tools: { valueName: 'FILE', description: 'the catalog: one tool per line (id, name, description, parameters?)' },
    queries: { valueName: 'FILE', description: 'labelled queries: one per line (id, query, gold tool ids)' },
    examples: { valueName: 'FILE', description: 'known example queries per tool (tool_id, query), used as tool metadata' },
    k: { valueName: 'LIST', description: 'extra cut-offs for Recall@k, comma-separated', defaultHelp: '1,3,5,10 always reported' },
  }),
  storeless: true,
  async run(context) {
    if (context.args.positionals.length > 0) throw invalidInput(`eval takes no positional arguments, got '${context.args.positionals[0]}'`);
    const value = (name: string): string | undefined => {
      const v = context.args.values[name];
      return typeof v === 'string' ? v : undefined;
    };
    return executeEval(
      { tools: value('tools'), queries: value('queries'), examples: value('examples'), k: value('k'), json: context.json },
      { stdout: { write: (text: string) => context.io.stdout(text) }, stderr: { write: (text: string) => context.io.stderr(text) } },
    );
  },
};
