/**
 * @module retrieval/eval/embedder-choice
 * Which embedder `quiver eval` measures (issue #25): the configured one by default (so eval
 * measures what runs), or `--embedder table|model|offline|none|openai:URL`. The report names the
 * embedder actually used (a model that fell back says so).
 */
import { QuiverError } from '../../core/errors.ts';
import type { Embedder } from '../embedders/embedder.ts';
import type { ReportingEmbedder } from '../embedders/fallback.ts';
import { createOfflineEmbedder } from '../embedders/offline.ts';
import { createOpenAICompatibleEmbedder } from '../embedders/openai-compatible.ts';
import { createShippedModelEmbedder, createShippedTableEmbedder } from '../embedders/shipped-model.ts';
import { embedderFlagHelp } from './options.ts';

// The flag's help lives with the eval options, which the CLI's command list reads without loading the embedders.
export { embedderFlagHelp };

/** An embedder to evaluate (null: lexical only). */
export type EvalEmbedder = Embedder | null;

/** Resolves `--embedder`; undefined gives `configured()` (the configured embedder). */
export function resolveEvalEmbedder(
  flag: string | undefined,
  configured: () => EvalEmbedder,
  env: Record<string, string | undefined> = {},
): EvalEmbedder {
  if (flag === undefined) return configured();
  if (flag === 'none') return null;
  if (flag === 'offline') return createOfflineEmbedder();
  if (flag === 'table') return createShippedTableEmbedder();
  if (flag === 'model') return createShippedModelEmbedder();
  if (flag.startsWith('openai:')) {
    const baseURL = flag.slice('openai:'.length);
    const model = env.QUIVER_EMBEDDER_MODEL;
    if (!/^https?:\/\//.test(baseURL)) throw new QuiverError('invalid_input', `--embedder openai:URL needs an http(s) URL, got '${baseURL}'`);
    if (!model) throw new QuiverError('invalid_input', '--embedder openai:URL needs QUIVER_EMBEDDER_MODEL (the model name)');
    const apiKey = env.QUIVER_EMBEDDER_API_KEY;
    return createOpenAICompatibleEmbedder({ baseURL, model, ...(apiKey ? { apiKey } : {}) });
  }
  throw new QuiverError('invalid_input', `--embedder must be one of ${embedderFlagHelp}; got '${flag}'`);
}

/** How a report names the embedder it used. */
export function describeEvalEmbedder(embedder: EvalEmbedder): string {
  if (embedder === null) return 'none (lexical only)';
  const status = (embedder as Partial<ReportingEmbedder>).status?.();
  if (status?.fallback) return `${embedder.modelId} (fallback: ${status.configured} could not load)`;
  return embedder.modelId;
}
