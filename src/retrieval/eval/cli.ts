/**
 * @module retrieval/eval/cli
 * `quiver eval --tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl]
 * [--k 1,3,5,10] [--json]` (DESIGN §5). Exit codes: 0 done, 2 bad usage or input (one line
 * on stderr naming the file and line), 1 unexpected failure. Warnings (unknown gold ids,
 * an embedder that failed) go to stderr and never change stdout.
 */
import { parseArgs } from 'node:util';
import { QuiverError, isQuiverError } from '../../core/errors.ts';
import { loadEvalData } from './load.ts';
import { reportJson, reportTable, runEvaluation } from './run.ts';
import { describeEvalEmbedder, embedderFlagHelp, resolveEvalEmbedder, type EvalEmbedder } from './embedder-choice.ts';
import { createOfflineEmbedder } from '../embedders/offline.ts';
import { evalOptions } from './options.ts';

/** Where the command writes. */
export interface EvalIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const evalUsage = `usage: quiver eval --tools tools.jsonl --queries queries.jsonl [--examples examples.jsonl] [--k 1,3,5,10] [--embedder NAME] [--json]

Evaluates retrieval on a tool catalog and labelled queries, with the configured embedder
unless --embedder says otherwise; the report names the embedder used.
  --tools      one tool per line: id, name, description, parameters?, source?, other text fields
  --queries    one query per line: id, query, gold (tool ids), gold_groups? (list of lists)
  --examples   known example queries: tool_id, query (Tool2Vec and the examples field)
  --k          extra cut-offs for recall@k (recall@1,3,5,10 are always reported)
  --embedder   ${embedderFlagHelp}
  --json       print one JSON object instead of a table
Exit codes: 0 done, 1 unexpected failure, 2 bad usage or input.`;

function parseKs(text: string): number[] {
  const ks = text.split(',').map((part) => part.trim()).filter(Boolean);
  if (ks.length === 0 || ks.some((k) => !/^\d+$/.test(k) || Number(k) < 1 || Number(k) > 1000)) {
    throw new QuiverError('invalid_input', `--k must be a comma-separated list of integers from 1 to 1000, got '${text}'`);
  }
  return [...new Set(ks.map(Number))].sort((a, b) => a - b);
}

/** Parsed options of `quiver eval`. */
export interface EvalCommandOptions {
  tools?: string | undefined;
  queries?: string | undefined;
  examples?: string | undefined;
  /** Comma-separated cut-offs as typed. */
  k?: string | undefined;
  /** `--embedder` as typed (undefined: the configured embedder). */
  embedder?: string | undefined;
  json: boolean;
}

export { evalOptions } from './options.ts';

/** Runs an evaluation from parsed options; resolves to the exit code (errors are printed, not thrown). */
export async function executeEval(
  options: EvalCommandOptions,
  io: EvalIo,
  context: { configured?: () => EvalEmbedder; env?: Record<string, string | undefined> } = {},
): Promise<number> {
  const fail = (message: string, code: number): number => {
    io.stderr.write(
      options.json
        ? `${JSON.stringify({ error: { code: code === 2 ? 'invalid_input' : 'internal', message } })}\n`
        : `quiver eval: ${message}\n`,
    );
    return code;
  };
  try {
    if (!options.tools || !options.queries) return fail('--tools and --queries are required (see quiver eval --help)', 2);
    const ks = options.k ? parseKs(options.k) : [];
    const data = await loadEvalData({ tools: options.tools, queries: options.queries, examples: options.examples });
    for (const warning of data.warnings) io.stderr.write(`quiver eval: warning: ${warning}\n`);
    const embedder = resolveEvalEmbedder(options.embedder, context.configured ?? (() => createOfflineEmbedder()), context.env ?? {});
    try {
      const report = await runEvaluation({ documents: data.documents, queries: data.queries, ks, embedder });
      for (const warning of report.warnings) io.stderr.write(`quiver eval: warning: ${warning}\n`);
      // Named after the run: a model that could not load has fallen back by then.
      const used = describeEvalEmbedder(embedder);
      io.stdout.write(options.json ? `${JSON.stringify({ ...reportJson(report, ks), embedder: used })}\n` : `${reportTable(report, ks)}\nembedder  ${used}\n`);
    } finally {
      await embedder?.close?.();
    }
    return 0;
  } catch (error) {
    if (isQuiverError(error) && error.kind === 'user') return fail(error.message, 2);
    return fail(`unexpected error: ${(error as Error).message}`, 1);
  }
}

/** Runs `quiver eval` with `argv` (arguments after "eval"); resolves to the exit code. */
export async function runEval(argv: readonly string[], io: EvalIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { ...evalOptions, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    const message = `${(error as Error).message.split('\n')[0]} (see quiver eval --help)`;
    io.stderr.write(argv.includes('--json') ? `${JSON.stringify({ error: { code: 'invalid_input', message } })}\n` : `quiver eval: ${message}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${evalUsage}\n`);
    return 0;
  }
  return executeEval({ tools: values.tools, queries: values.queries, examples: values.examples, k: values.k, embedder: values.embedder, json: values.json === true }, io, { env: process.env });
}
