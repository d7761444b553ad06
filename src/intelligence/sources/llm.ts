/**
 * @module intelligence/sources/llm
 * The LLM source (issue #14): each tool of the document the other sources produced is enriched
 * through an OpenAI-compatible chat endpoint (llm/enrichment.ts). Replies are cached by the
 * SHA-256 of their inputs — prompt version, model, the tool as described so far and the plugin
 * context — so the same inputs never cost a second call and only tools whose inputs changed are
 * sent again. Tools are enriched one after another (a rate-limited endpoint is not flooded);
 * the first failure (timeout, 5xx, invalid output after retries) fails the whole source, so
 * the caller keeps its previous document.
 */
import { contentHash } from '../../core/hash.ts';
import type { Queryable } from '../../store/database.ts';
import type { ChatClient } from '../llm/client.ts';
import { enrichTool, enrichmentSchema, PROMPT_VERSION, type Enrichment, type EnrichmentInput } from '../llm/enrichment.ts';
import { findCachedReply, storeCachedReply } from '../repository.ts';
import type { JsonObject, LlmUsage, SourceResult } from '../types.ts';

/** Prices per million tokens, when configured; without them usage is reported in tokens only. */
export interface LlmPrices {
  inputPerMillion?: number | undefined;
  outputPerMillion?: number | undefined;
}

/** What the LLM source needs. */
export interface LlmSourceOptions {
  db: Queryable;
  client: ChatClient;
  prices?: LlmPrices | undefined;
  maxAttempts?: number | undefined;
  now: () => Date;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : []);

/** The model's view of one tool of the merged document. */
function inputOf(pluginName: string, document: JsonObject, tool: JsonObject): EnrichmentInput {
  const semantic = (document['semantic'] ?? {}) as JsonObject;
  const { name, description, inputSchema, llmNotes, sideEffects, examples } = tool;
  return {
    plugin: pluginName,
    pluginContext: strings(semantic['domainContext']),
    tool: { name: String(name), description, inputSchema, llmNotes, sideEffects, examples },
  };
}

function costOf(usage: LlmUsage, prices: LlmPrices | undefined): number | null {
  if (prices?.inputPerMillion === undefined && prices?.outputPerMillion === undefined) return null;
  return (usage.promptTokens * (prices.inputPerMillion ?? 0) + usage.completionTokens * (prices.outputPerMillion ?? 0)) / 1_000_000;
}

/** Unique non-empty texts, first occurrence kept. */
function unique(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  return texts.filter((text) => {
    const key = text.trim().toLowerCase();
    if (key === '' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Enriches every tool of `document` (the merge of the other sources); returns the source result and usage. */
export async function llmSource(pluginName: string, document: JsonObject, options: LlmSourceOptions): Promise<{ result: SourceResult; usage: LlmUsage }> {
  const usage: LlmUsage = { calls: 0, cacheHits: 0, promptTokens: 0, completionTokens: 0, costUsd: null };
  const tools: Record<string, JsonObject> = {};
  const keys: string[] = [];
  const enrichments: Enrichment[] = [];
  for (const tool of (document['tools'] ?? []) as JsonObject[]) {
    const input = inputOf(pluginName, document, tool);
    const key = contentHash({ promptVersion: PROMPT_VERSION, model: options.client.model, input });
    keys.push(key);
    let enrichment: Enrichment | undefined;
    const cached = await findCachedReply(options.db, key);
    const parsedCache = cached === undefined ? undefined : enrichmentSchema.safeParse(cached.output);
    if (parsedCache?.success) {
      enrichment = parsedCache.data;
      usage.cacheHits++;
    } else {
      const result = await enrichTool(options.client, input, options.maxAttempts);
      usage.calls += result.attempts;
      usage.promptTokens += result.promptTokens;
      usage.completionTokens += result.completionTokens;
      enrichment = result.enrichment;
      await storeCachedReply(options.db, key, options.client.model, { output: enrichment as unknown as JsonObject, promptTokens: result.promptTokens, completionTokens: result.completionTokens }, options.now());
    }
    enrichments.push(enrichment);
    tools[input.tool.name] = { name: input.tool.name, llmNotes: enrichment.llmNotes, exampleRequests: enrichment.exampleRequests };
  }
  usage.costUsd = costOf(usage, options.prices);
  const semantic: JsonObject = {
    capabilities: unique(enrichments.flatMap((enrichment) => enrichment.capabilities)),
    useCases: enrichments.flatMap((enrichment) => enrichment.useCases).filter((useCase, index, all) => all.findIndex((other) => other.scenario.toLowerCase() === useCase.scenario.toLowerCase()) === index),
    antiPatterns: unique(enrichments.flatMap((enrichment) => enrichment.antiPatterns)),
  };
  return { result: { source: 'llm', inputHash: contentHash(keys), partial: { tools, semantic }, warnings: [] }, usage };
}
