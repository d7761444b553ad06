/**
 * @module selection
 * The selection pipeline's public surface (DESIGN §3.4, seed 001 §5).
 */
export {
  createSelectionEngine,
  selectTools,
  selectToolsInputSchema,
  selectionContextSchema,
  outcomeInputSchema,
} from './engine.ts';
export type {
  SelectionEngine,
  VisibleTools,
  SelectionEngineOptions,
  SelectToolsInput,
  SelectionContext,
  SelectionResult,
  SelectedTool,
  SelectionReason,
  StageTimings,
  SelectOptions,
  OutcomeInput,
  OutcomeOptions,
  OutcomeResult,
  CacheTtls,
} from './engine.ts';
export { createSelectionAnalytics, analyticsQuerySchema } from './analytics.ts';
export type { SelectionAnalytics, AnalyticsQuery, OrgScope } from './analytics.ts';
export { notifyCatalogChanged, CATALOG_CHANGED_CHANNEL, CACHE_KINDS } from './invalidation.ts';
export type { CacheKind } from './invalidation.ts';
export { PROVIDERS, formatTools, formatTool, providerToolName, toGeminiSchema } from './provider-formats.ts';
export type { SelectionProvider, FormattableTool, FormattedTool, GeminiSchemaResult } from './provider-formats.ts';
export { compilePolicy, DEFAULT_TIER_ORDER } from './policy.ts';
export type { CompiledPolicy, PolicyContext, PolicyRule } from './policy.ts';
export { thompsonRerank, banditContextKey } from './bandit.ts';
export { createSampler } from './sampler.ts';
export { createSeededRandom } from './random.ts';
export type { RandomSource } from './random.ts';
export { createLexicalRetrieval, adaptRetrievalIndex } from './retrieval.ts';
export type { SelectionRetrieval, RetrievalHit, RetrievalSearchOptions } from './retrieval.ts';
export { LruTtlCache } from './lru-cache.ts';
