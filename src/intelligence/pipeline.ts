/**
 * @module intelligence/pipeline
 * One generation run (issue #14): runs the asked sources over the inputs, reusing a previous
 * run's result for each source whose input hash did not change, merges them by precedence
 * (merge.ts), then — when asked — enriches the merged tools through the LLM and merges again.
 * The result is validated against the PID schema (core/pid.ts) before anyone stores it.
 * Plugin code is only read as text (code-files.ts); nothing here runs it.
 */
import { performance } from 'node:perf_hooks';
import { ErrorCodes, QuiverError, invalidInput } from '../core/errors.ts';
import { validatePid } from '../core/pid.ts';
import type { Queryable } from '../store/database.ts';
import { generationHash } from './content-hash.ts';
import { mergeSources } from './merge.ts';
import { authorSource } from './sources/author.ts';
import { readCodeSnapshot } from './sources/code-files.ts';
import { scanCode } from './sources/code-scan.ts';
import { llmSource, type LlmPrices } from './sources/llm.ts';
import { mcpSource } from './sources/mcp.ts';
import { findOpenApiSpec, openApiSource } from './sources/openapi.ts';
import { typescriptSource } from './sources/typescript.ts';
import { zodSource } from './sources/zod.ts';
import type { ChatClient } from './llm/client.ts';
import type { GenerationInputs, JsonObject, LlmUsage, Provenance, SelectableSource, SourceName, SourceResult } from './types.ts';

/** How to run the pipeline. */
export interface PipelineOptions {
  from: readonly SelectableSource[];
  /** True when the caller named the sources (a named source that finds nothing is warned about). */
  explicit?: boolean | undefined;
  /** An OpenAPI document to read instead of looking in the code folder. */
  openApiPath?: string | undefined;
  /** Source results of the previous run, reused when their input hash is unchanged. */
  previous?: readonly SourceResult[] | undefined;
  /** LLM enrichment: a client (undefined when no endpoint is configured), its cache database and prices. */
  llm?: { client: ChatClient | undefined; db: Queryable; prices?: LlmPrices | undefined; maxAttempts?: number | undefined; now: () => Date } | undefined;
}

/** What a run produced. */
export interface PipelineResult {
  document: JsonObject;
  provenance: Provenance;
  inputHashes: Record<string, string>;
  contentHash: string;
  sources: SourceResult[];
  /** Sources computed this run, and those reused unchanged from the previous run. */
  regenerated: SourceName[];
  reused: SourceName[];
  warnings: string[];
  llmUsage: LlmUsage | null;
  toolCount: number;
  /** Wall time of the run, LLM calls included. */
  durationMs: number;
}

/** Whether a cheap source (recomputed every run) read the same inputs as in the previous run. */
const unchanged = (result: SourceResult, previous: readonly SourceResult[] | undefined): boolean =>
  previous?.some((earlier) => earlier.source === result.source && earlier.inputHash === result.inputHash) === true;

/** The code sources (zod, TypeScript), reusing the previous results when the files did not change. */
async function codeSources(codeDir: string, wanted: Array<'zod' | 'ts'>, previous: readonly SourceResult[], log: { regenerated: SourceName[]; reused: SourceName[] }): Promise<SourceResult[]> {
  const snapshot = await readCodeSnapshot(codeDir);
  const reusable = wanted.map((name) => previous.find((result) => result.source === name && result.inputHash === snapshot.inputHash));
  if (reusable.every((result) => result !== undefined)) {
    log.reused.push(...wanted);
    return reusable as SourceResult[];
  }
  const scan = scanCode(snapshot.files);
  log.regenerated.push(...wanted);
  return wanted.map((name) => (name === 'zod' ? zodSource(scan, snapshot.inputHash, snapshot.warnings) : typescriptSource(scan, snapshot.inputHash)));
}

/** Runs the non-LLM sources. */
async function baseSources(inputs: GenerationInputs, options: PipelineOptions, log: { regenerated: SourceName[]; reused: SourceName[]; warnings: string[] }): Promise<SourceResult[]> {
  const results: SourceResult[] = [];
  const author = inputs.author === undefined ? undefined : authorSource(inputs.pluginName, inputs.author);
  if (author !== undefined) results.push(author);
  if (options.from.includes('mcp')) {
    if (inputs.discovered === undefined) log.warnings.push('mcp: the plugin is not installed, so there is no discovery to read');
    else {
      const result = mcpSource(inputs.discovered);
      results.push(result);
      (unchanged(result, options.previous) ? log.reused : log.regenerated).push('mcp');
    }
  }
  const code = (['zod', 'ts'] as const).filter((name) => options.from.includes(name));
  if (code.length > 0) {
    if (inputs.codeDir === null) log.warnings.push(`${code.join(', ')}: the plugin has no code folder (a remote or sync-registered plugin)`);
    else results.push(...(await codeSources(inputs.codeDir, [...code], options.previous ?? [], log)));
  }
  if (options.from.includes('openapi')) {
    const spec = options.openApiPath ?? (inputs.codeDir === null ? undefined : await findOpenApiSpec(inputs.codeDir));
    if (spec !== undefined) {
      const result = await openApiSource(spec);
      results.push(result);
      (unchanged(result, options.previous) ? log.reused : log.regenerated).push('openapi');
    } else if (options.explicit === true) {
      log.warnings.push('openapi: no OpenAPI document found (openapi.yaml / .yml / .json in the plugin folder; or give --openapi FILE)');
    }
  }
  return results;
}

/** Runs a generation; throws without a result when a source fails (the caller keeps its previous document). */
export async function runPipeline(inputs: GenerationInputs, options: PipelineOptions): Promise<PipelineResult> {
  const started = performance.now();
  const log = { regenerated: [] as SourceName[], reused: [] as SourceName[], warnings: [] as string[] };
  const results = await baseSources(inputs, options, log);
  let llmUsage: LlmUsage | null = null;
  if (options.from.includes('llm')) {
    if (options.llm?.client === undefined) {
      throw new QuiverError(ErrorCodes.config, 'LLM enrichment needs an OpenAI-compatible endpoint: set QUIVER_LLM_BASE_URL and QUIVER_LLM_MODEL (and QUIVER_LLM_API_KEY if it needs one)');
    }
    const base = mergeSources(inputs.pluginName, results);
    const enriched = await llmSource(inputs.pluginName, base.document, { ...options.llm, client: options.llm.client });
    results.push(enriched.result);
    llmUsage = enriched.usage;
    (enriched.usage.calls > 0 ? log.regenerated : log.reused).push('llm');
  }
  const merged = mergeSources(inputs.pluginName, results);
  const validation = validatePid(merged.document, { pluginName: inputs.pluginName, ...(inputs.discovered === undefined ? {} : { registeredTools: inputs.discovered.map((tool) => tool.name) }) });
  if (!validation.valid) throw invalidInput(`the generated document is not a valid PID: ${validation.errors.join(' ')}`, { errors: validation.errors });
  const inputHashes = Object.fromEntries(results.map((result) => [result.source, result.inputHash]));
  const toolCount = Array.isArray(merged.document['tools']) ? merged.document['tools'].length : 0;
  return {
    document: merged.document,
    provenance: merged.provenance,
    inputHashes,
    contentHash: generationHash(inputHashes),
    sources: results,
    regenerated: log.regenerated,
    reused: log.reused,
    warnings: [...log.warnings, ...results.flatMap((result) => result.warnings.map((warning) => `${result.source}: ${warning}`)), ...merged.warnings, ...validation.warnings],
    llmUsage,
    toolCount,
    durationMs: performance.now() - started,
  };
}
