/**
 * @module cli/commands/eval-replay
 * `quiver eval --replay` (issue #13): replays a labelled query stream through a real App on a
 * fresh in-memory store (the user's data folder is never touched) and prints the metrics per
 * window. The work is in src/selection/replay; this opens the App, loads the files, wires the
 * settle step and prints. Exit 0 done, 2 bad usage or input.
 */
import { resolve } from 'node:path';
import { invalidInput } from '../../core/errors.ts';
import type { ReplayReport } from '../../selection/replay/replay.ts';
import type { ReplayWindow } from '../../selection/replay/windows.ts';
import { stringOption, type CliContext } from '../command.ts';
import type { QuiverConfig } from '../../config.ts';
import { embedderFlagHelp } from '../../retrieval/eval/options.ts';

/** The replay options, in node:util parseArgs form. */
export const replayOptions = {
  replay: { type: 'boolean', default: false },
  window: { type: 'string' },
  'top-k': { type: 'string' },
  'feedback-noise': { type: 'string' },
  seed: { type: 'string' },
  cold: { type: 'boolean', default: false },
  org: { type: 'string' },
  shuffle: { type: 'boolean', default: false },
  'no-feedback': { type: 'boolean', default: false },
  'retry-on-miss': { type: 'boolean', default: false },
} as const;

/** Parses an integer option within bounds. */
function integerOption(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw invalidInput(`--${name} must be an integer from ${min} to ${max}, got '${text}'`);
  return Number(text);
}

/** Parses --feedback-noise: a share in [0, 1]. */
function shareOption(text: string | undefined): number {
  if (text === undefined) return 0;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) throw invalidInput(`--feedback-noise must be a number from 0 to 1, got '${text}'`);
  return value;
}

const percent = (value: number): string => value.toFixed(3);

/** The report as a readable table. */
export function replayTable(report: ReplayReport): string {
  const header = ['queries', 'n', 'R@1', 'R@3', 'R@5', 'MRR', 'called', 'noisy'];
  const row = (label: string, w: ReplayWindow) => [label, String(w.n), percent(w['recall@1']), percent(w['recall@3']), percent(w['recall@5']), percent(w.mrr), percent(w.called), percent(w.noisy)];
  const rows = [header, ...report.windows.map((w) => row(`${w.from}-${w.to}`, w)), row('all', report.overall)];
  const widths = header.map((_, column) => Math.max(...rows.map((r) => r[column]!.length)));
  const lines = rows.map((r) => r.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
  const title = `replay of ${report.queries} queries over ${report.tools} tools, top ${report.k}, ${report.cold ? 'cold (no written examples)' : 'with written examples'}, ${report.shuffled ? 'shuffled' : 'in file order'}, ${report.feedback ? `feedback noise ${report.noise}${report.retryOnMiss ? ', a miss asks again for twice as many' : ''}` : 'no feedback (static ranking)'}, seed ${report.seed}, ${report.durationMs} ms`;
  return [title, ...lines].join('\n');
}

/** The embedder configuration of a replay: `--embedder` over the configured one (issue #25). */
function replayEmbedder(flag: string | undefined, configured: QuiverConfig['embedder'], env: Record<string, string | undefined>): QuiverConfig['embedder'] {
  if (flag === undefined) return configured;
  if (flag === 'table') return { kind: 'table', tablePath: undefined };
  if (flag === 'model') return { kind: 'model', modelPath: undefined };
  if (flag === 'offline') return { kind: 'offline' };
  if (flag === 'none') throw invalidInput('--replay needs an embedder (learned examples are vectors): use table, model, offline or openai:URL');
  if (flag.startsWith('openai:')) {
    const baseUrl = flag.slice('openai:'.length);
    if (!/^https?:\/\//.test(baseUrl)) throw invalidInput(`--embedder openai:URL needs an http(s) URL, got '${baseUrl}'`);
    if (!env.QUIVER_EMBEDDER_MODEL) throw invalidInput('--embedder openai:URL needs QUIVER_EMBEDDER_MODEL (the model name)');
    return { kind: 'openai', baseUrl, model: env.QUIVER_EMBEDDER_MODEL, apiKey: env.QUIVER_EMBEDDER_API_KEY, dimensions: undefined };
  }
  throw invalidInput(`--embedder must be one of ${embedderFlagHelp}; got '${flag}'`);
}

/** Runs `quiver eval --replay` from the parsed options of `quiver eval`. */
export async function executeReplay(context: CliContext): Promise<number> {
  const value = (name: string): string | undefined => stringOption(context, name);
  const tools = value('tools');
  const queries = value('queries');
  if (!tools || !queries) throw invalidInput('--tools and --queries are required (see quiver eval --help)');
  if (value('k') !== undefined) throw invalidInput('--k lists cut-offs of plain eval; with --replay use --top-k (tools offered per selection)');
  const cold = context.args.values.cold === true;
  const settings = {
    k: integerOption('top-k', value('top-k'), 5, 1, 50),
    window: integerOption('window', value('window'), 500, 1, 1_000_000),
    noise: shareOption(value('feedback-noise')),
    seed: integerOption('seed', value('seed'), 1, 0, 2 ** 32 - 1),
    orgId: value('org') ?? 'replay',
    shuffle: context.args.values.shuffle === true,
    feedback: context.args.values['no-feedback'] !== true,
    retryOnMiss: context.args.values['retry-on-miss'] === true,
  };
  const examples = value('examples');
  // Loaded when it runs (issue #28: the command list stays light).
  const [{ loadEvalData }, { createSeededRandom }] = await Promise.all([import('../../retrieval/eval/load.ts'), import('../../selection/random.ts')]);
  const data = await loadEvalData({ tools: resolve(context.cwd, tools), queries: resolve(context.cwd, queries), examples: cold || !examples ? undefined : resolve(context.cwd, examples) });
  for (const warning of data.warnings) context.io.stderr(`quiver eval: warning: ${warning}\n`);
  if (cold && examples) context.io.stderr('quiver eval: warning: --cold: the --examples file is not loaded\n');
  // A fresh in-memory store: the replay writes thousands of events and must not touch the data folder.
  const config = context.config();
  const embedder = replayEmbedder(value('embedder'), config.embedder, context.env);
  // The app and the replay load when a replay runs, not with the command list (issue #28).
  const [{ createApp }, { loadReplayCatalog, runReplay }] = await Promise.all([import('../../app.ts'), import('../../selection/replay/replay.ts')]);
  const app = await createApp({ ...config, embedder, store: { kind: 'memory' }, embeddings: { background: false, sweepIntervalMs: 0 } }, { selectionRandom: createSeededRandom(settings.seed) });
  try {
    const benchIdOf = await loadReplayCatalog(app.catalog, data.documents, { cold });
    await app.embeddings.runNow();
    const report = await runReplay({
      engine: app.selection,
      queries: data.queries,
      benchIdOf,
      settings,
      cold,
      // Learned examples of an outcome rank before the next query (deterministic windows).
      settle: () => app.learning.flush(),
      ...(context.json ? {} : { onWindow: (w: ReplayWindow) => context.io.stderr(`quiver eval: ${w.to} queries replayed, R@1 ${percent(w['recall@1'])} in the last window\n`) }),
    });
    // What the learned examples did (observed outcomes, captured examples, why others were skipped).
    const learning = app.learning.stats();
    const learned = `learned examples: ${learning.examples} kept (${learning.learned} captured of ${learning.observed} outcomes observed; skipped ${JSON.stringify(learning.skipped)})`;
    // Named after the run: a model that could not load has fallen back by then.
    const status = await app.embeddings.status();
    const used = status.fallback ? `${status.model} (fallback: ${status.fallback.configured} could not load)` : status.model;
    context.io.stdout(context.json ? `${JSON.stringify({ ...report, learning, embedder: used })}\n` : `${replayTable(report)}\n${learned}\nembedder ${used}\n`);
    return 0;
  } finally {
    await app.close();
  }
}
