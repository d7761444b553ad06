/**
 * @module selection/engine
 * The selection pipeline (seed 001 §5, DESIGN §3.4): policy → candidates → context (page)
 * filter → retrieval → Thompson-sampling rerank → pins → token budget, with the caches of
 * seed §4.3, cross-process invalidation, events logged off the hot path, and outcomes that
 * update the bandit.
 *
 * Failure rules: the stages that decide who may see a tool (visibility rules, workspace /
 * project enablement, organisation-private tools) fail closed: an error there fails the
 * selection and nothing is returned. The stages that only rank (page mappings, retrieval,
 * bandit statistics) fail open and say so in `metadata.warnings`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { QuiverError, ErrorCodes, notFound } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { countJsonTokens, TOKENIZER_NAME } from '../core/tokens.ts';
import { parseOrThrow } from '../core/validation.ts';
import type { Database } from '../store/database.ts';
import { createBatchWriter } from '../store/batch-writer.ts';
import {
  catalogSignature,
  findCandidatesByIds,
  findProject,
  findWorkspace,
  listActiveCandidates,
  type SelectionCandidate,
} from '../store/repositories/candidates.ts';
import { effectivePluginIds } from '../store/repositories/enablement.ts';
import { listVisibilityRules } from '../store/repositories/visibility-rules.ts';
import { listPageMappings, type PageMappingRecord } from '../store/repositories/page-mappings.ts';
import { incrementArms, listContextArms, type BanditIncrement } from '../store/repositories/bandit-stats.ts';
import { findSelectionEvent, insertSelectionEvents, writeEventOutcome, type SelectionEventWrite } from '../store/repositories/selection-events.ts';
import { writeEventOutcomes, type SelectionOutcomeWrite } from '../store/repositories/selection-outcomes.ts';
import { matchPageMappings } from '../catalog/page-pattern.ts';
import { LruTtlCache } from './lru-cache.ts';
import { compilePolicy, policyCacheKey, DEFAULT_TIER_ORDER, type CompiledPolicy, type PolicyRule } from './policy.ts';
import { banditContextKey, thompsonRerank, type BanditArm, type BanditPick, type RankedCandidate } from './bandit.ts';
import { createSampler } from './sampler.ts';
import type { RandomSource } from './random.ts';
import { createLexicalRetrieval, type RetrievalDocument, type SelectionRetrieval } from './retrieval.ts';
import { PROVIDERS, assembleProviderTools, formatTool, providerToolName, type FormattedTool, type SelectionProvider } from './provider-formats.ts';
import { CATALOG_CHANGED_CHANNEL, parseCatalogChange, type CacheKind } from './invalidation.ts';
import { createSelectionAnalytics, type SelectionAnalytics } from './analytics.ts';

const identifier = z.string().min(1).max(200);

/** The request context (seed 001 §5: page, organisation, user, roles, tier, workspace, project, session). */
export const selectionContextSchema = z.strictObject({
  page: z.string().min(1).max(500).nullish(),
  orgId: identifier.nullish(),
  userId: identifier.nullish(),
  roles: z.array(z.string().min(1).max(100)).max(50).nullish(),
  tier: z.string().min(1).max(100).nullish(),
  /** Workspace name or id (default: the `default` workspace). */
  workspace: identifier.nullish(),
  /** Project name or id inside the workspace. */
  project: identifier.nullish(),
  sessionId: z.string().min(1).max(200).nullish(),
});
/** The request context as a caller writes it. */
export type SelectionContext = z.input<typeof selectionContextSchema>;

/** A selection request. */
export const selectToolsInputSchema = z.strictObject({
  query: z.string().trim().min(1, 'query must not be empty').max(10_000),
  context: selectionContextSchema.default({}),
  /** How many tools to retrieve (pins come on top, seed 001 §5.6). */
  k: z.number().int().min(1).max(50).default(7),
  /** Largest number of schema tokens to send; pins are kept first, then the most relevant tools that fit. */
  tokenBudget: z.number().int().min(1).max(10_000_000).optional(),
  provider: z.enum(PROVIDERS).default('openai'),
  /** Log a selection event (default true; the admin test-selection sets false). */
  log: z.boolean().default(true),
});
/** A selection request as a caller writes it. */
export type SelectToolsInput = z.input<typeof selectToolsInputSchema>;

/** An outcome report (seed 001 §4.4: tools called and whether the calls succeeded). */
export const outcomeInputSchema = z.strictObject({
  /** Tools the LLM called: qualified names, provider names or tool ids. */
  toolsCalled: z.array(z.string().min(1).max(300)).max(100),
  success: z.boolean(),
});
/** An outcome report as a caller writes it. */
export type OutcomeInput = z.input<typeof outcomeInputSchema>;

/** Why a tool is in the result. */
export type SelectionReason = 'retrieved' | 'exploration' | 'pinned';

/** One selected tool. */
export interface SelectedTool {
  id: string;
  qualifiedName: string;
  /** The tool's own name inside its plugin. */
  name: string;
  /** The name the provider sees (the qualified name unless the provider forbids it). */
  providerName: string;
  pluginName: string | null;
  description: string;
  parameters: Record<string, unknown>;
  /** Retrieval relevance (0 for pins and for catalog-order fallbacks). */
  score: number;
  reason: SelectionReason;
  /** Tokens of this tool's schema in the provider format. */
  tokens: number;
}

/** Stage timings in milliseconds. */
export interface StageTimings {
  policy: number;
  candidates: number;
  context: number;
  retrieval: number;
  bandit: number;
  pins: number;
  format: number;
  total: number;
}

/** What `selectTools` returns. */
export interface SelectionResult {
  tools: SelectedTool[];
  /** The provider-ready `tools` array. */
  schemas: unknown[];
  metadata: {
    eventId?: string;
    contextKey: string;
    provider: SelectionProvider;
    /** Tools the caller may see in this scope (after policy and enablement). */
    candidateCount: number;
    stageTimingsMs: StageTimings;
    tokens: { sent: number; catalog: number; saved: number; savedPercent: number; tokenizer: string };
    method: string;
    /** providerName → qualifiedName, to route a provider's tool call back. */
    toolNames: Record<string, string>;
    warnings: string[];
  };
}

/** What `recordOutcome` returns. */
export interface OutcomeResult {
  eventId: string;
  outcome: 'success' | 'failure' | 'no_call';
  /** The called tools as stored: qualified names where resolved, else the reported text. */
  toolsCalled: string[];
  /** Offered tools that were called (these got a bandit update). */
  calledToolIds: string[];
  /** Reported names that were not among the offered tools (stored, no bandit update). */
  unresolved: string[];
}

/** Extra constraints a front applies (an API key's bindings). */
export interface SelectOptions {
  /** The selection must run in this workspace / project (an API key bound to them). */
  binding?: { workspaceId?: string | null | undefined; projectId?: string | null | undefined };
}

/**
 * Ownership constraints on an outcome report (an API key's org / workspace binding). A value, `null`
 * included, must equal the event's (a key without an organisation owns only events without one);
 * `undefined` leaves that field unchecked (admins and unbound operator keys).
 */
export interface OutcomeOptions {
  orgId?: string | null | undefined;
  workspaceId?: string | null | undefined;
}

/** Cache lifetimes (seed 001 §4.3 defaults). */
export interface CacheTtls {
  policyMs?: number;
  mappingsMs?: number;
  toolsMs?: number;
  /** Bandit posteriors per context key; outcomes recorded here update them in place. */
  banditMs?: number;
}

/** Options of `createSelectionEngine`. */
export interface SelectionEngineOptions {
  db: Database;
  /** The retrieval index, or a factory for it (default: the retrieval service's index without vectors). */
  retrieval?: SelectionRetrieval | (() => SelectionRetrieval);
  logger?: Logger;
  clock?: () => Date;
  /** Uniform source for the bandit (pass `createSeededRandom(seed)` for reproducible runs). */
  random?: RandomSource;
  cacheTtls?: CacheTtls;
  /** Tier order for ordered tier comparisons (default: seed 001's five tiers). */
  tierOrder?: readonly string[];
  /** Workspace used when a request names none (default `default`). */
  defaultWorkspace?: string;
  /** Bandit pool as a multiple of k (default 2) and relevance prior strength (default 8). */
  bandit?: { poolFactor?: number; relevanceStrength?: number; exploration?: boolean };
  /** Event batching: flush after this many ms (default 50) or this many events (default 200). */
  events?: { flushMs?: number; batchSize?: number; maxQueue?: number };
  /** Subscribe to catalog-change notifications (default true). */
  listen?: boolean;
}

/** What `visibleTools` returns. */
export interface VisibleTools {
  tools: readonly SelectionCandidate[];
  pins: readonly SelectionCandidate[];
  warnings: string[];
}

/** The selection engine. */
export interface SelectionEngine {
  /** Runs the pipeline. */
  selectTools(input: SelectToolsInput, options?: SelectOptions): Promise<SelectionResult>;
  /**
   * The tools a context may see (policy, enablement and organisation applied; no ranking),
   * in catalog order, with its pinned tools. Fails closed like `selectTools`.
   */
  visibleTools(context: SelectionContext, options?: SelectOptions): Promise<VisibleTools>;
  /** Records what the LLM did with a selection and updates the bandit. */
  recordOutcome(eventId: string, outcome: OutcomeInput, options?: OutcomeOptions): Promise<OutcomeResult>;
  /**
   * Records an outcome off the hot path (the MCP gateway reports one after every search):
   * queued and written in batches with the bandit updates. Nothing to await and nothing
   * thrown: a bad report or a failed batch is logged. Use `recordOutcome` when the caller
   * needs the answer (404, 409, the resolved names).
   */
  queueOutcome(eventId: string, outcome: OutcomeInput): void;
  /** Drops cached data of one kind (local only; `notifyCatalogChanged` reaches every process). */
  invalidate(kind: CacheKind): void;
  /** Writes queued events and outcomes now. */
  flush(): Promise<void>;
  /** Resolves once the change subscription is active. */
  ready(): Promise<void>;
  /** Seed 001 §8.4 analytics over the logged events. */
  readonly analytics: SelectionAnalytics;
  /** Cache hit/miss counters and sizes, for tests and benchmarks. */
  cacheStats(): Record<string, { hits: number; misses: number; size: number }>;
  /** Flushes events, stops listening. Safe to call twice. */
  close(): Promise<void>;
}

interface CatalogSnapshot {
  version: number;
  signature: string;
  tools: SelectionCandidate[];
  byId: Map<string, SelectionCandidate>;
  checkedAt: number;
}

interface Scope {
  workspaceId: string;
  projectId: string | null;
}

interface VisibleSet {
  tools: SelectionCandidate[];
  pins: SelectionCandidate[];
  catalogTokens: Map<SelectionProvider, number>;
}

interface PageSet {
  /** Non-pinned tools retrieval may return. */
  retrievalIds: Set<string>;
  /** The same tools in catalog order (the fallback ranking). */
  ordered: SelectionCandidate[];
  filtered: boolean;
  warning?: string;
}

interface FormattedEntry extends FormattedTool {
  tokens: number;
}

interface OfferedTool {
  id: string;
  qualifiedName: string;
}

/** What a logged selection offered: enough to resolve its outcome in memory. */
interface OfferedEvent {
  contextKey: string;
  tools: OfferedTool[];
}

interface QueuedOutcome {
  write: SelectionOutcomeWrite;
  contextKey: string;
  increments: BanditIncrement[];
}

/** Sums increments per tool (one arm row is written once per statement). */
function mergeIncrements(increments: readonly BanditIncrement[]): BanditIncrement[] {
  const byTool = new Map<string, BanditIncrement>();
  for (const increment of increments) {
    const sum = byTool.get(increment.toolId);
    if (!sum) byTool.set(increment.toolId, { ...increment });
    else {
      sum.alpha += increment.alpha;
      sum.beta += increment.beta;
      sum.selections += increment.selections;
      sum.successes += increment.successes;
    }
  }
  return [...byTool.values()];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value as Record<string, unknown>)) deepFreeze(member);
  }
  return value;
}

function toDocument(tool: SelectionCandidate): RetrievalDocument {
  const extra = [tool.displayName, tool.categoryName, tool.pluginName].filter((text): text is string => typeof text === 'string' && text.length > 0);
  return {
    id: tool.id,
    name: tool.qualifiedName,
    description: tool.description,
    ...(tool.summary === null ? {} : { summary: tool.summary }),
    tags: tool.tags,
    whenToUse: tool.whenToUse,
    whenNotToUse: tool.whenNotToUse,
    exampleQueries: tool.exampleQueries,
    parameters: tool.parameters,
    extraText: extra,
  };
}

/** What makes a tool's retrieval document differ: content, name and category. */
function documentSignature(tool: SelectionCandidate): string {
  return `${tool.contentHash}|${tool.qualifiedName}|${tool.categoryName ?? ''}|${tool.displayName ?? ''}`;
}

function unavailable(stage: string, cause: unknown): QuiverError {
  return new QuiverError(ErrorCodes.unavailable, `selection refused: ${stage} could not be read (security stages fail closed)`, { cause, details: { stage } });
}

/** Creates the selection engine. */
export function createSelectionEngine(options: SelectionEngineOptions): SelectionEngine {
  const { db } = options;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? (() => new Date());
  const now = () => clock().getTime();
  const sampler = createSampler(options.random ?? Math.random);
  const tierOrder = options.tierOrder ?? DEFAULT_TIER_ORDER;
  const defaultWorkspace = options.defaultWorkspace ?? 'default';
  const ttl = {
    policyMs: options.cacheTtls?.policyMs ?? 30_000,
    mappingsMs: options.cacheTtls?.mappingsMs ?? 60_000,
    toolsMs: options.cacheTtls?.toolsMs ?? 60_000,
    banditMs: options.cacheTtls?.banditMs ?? 5_000,
  };
  const banditOptions = { poolFactor: options.bandit?.poolFactor ?? 2, relevanceStrength: options.bandit?.relevanceStrength ?? 8, exploration: options.bandit?.exploration ?? true };
  const flushMs = options.events?.flushMs ?? 50;
  const batchSize = options.events?.batchSize ?? 200;
  const maxQueue = options.events?.maxQueue ?? 10_000;
  const retrieval: SelectionRetrieval =
    typeof options.retrieval === 'function' ? options.retrieval() : (options.retrieval ?? createLexicalRetrieval());

  // Seed 001 §4.3 caches, plus the derived sets that keep the warm path free of O(catalog) work.
  const policyCache = new LruTtlCache<CompiledPolicy>({ maxEntries: 256, ttlMs: ttl.policyMs, now });
  const pageCategoryCache = new LruTtlCache<Set<string> | null>({ maxEntries: 512, ttlMs: ttl.mappingsMs, now });
  const toolListCache = new LruTtlCache<SelectionCandidate[]>({ maxEntries: 128, ttlMs: ttl.toolsMs, now });
  const scopeCache = new LruTtlCache<Scope>({ maxEntries: 256, ttlMs: ttl.toolsMs, now });
  const visibleCache = new LruTtlCache<VisibleSet>({ maxEntries: 512, ttlMs: ttl.policyMs, now });
  const pageSetCache = new LruTtlCache<PageSet>({ maxEntries: 512, ttlMs: Math.min(ttl.policyMs, ttl.mappingsMs), now });
  const banditCache = new LruTtlCache<Map<string, BanditArm>>({ maxEntries: 1024, ttlMs: ttl.banditMs, now });
  // Formatted schemas for the tools actually sent; token counts (small) for the whole catalog,
  // so a 100,000-tool catalog's total is counted once, not after every catalog change.
  const formatCache = new LruTtlCache<FormattedEntry>({ maxEntries: 20_000, ttlMs: 24 * 3_600_000, now });
  const tokenCache = new LruTtlCache<number>({ maxEntries: 1_000_000, ttlMs: 24 * 3_600_000, now });
  let rulesSnapshot: { rules: PolicyRule[]; at: number } | undefined;
  let mappingsSnapshot: { mappings: PageMappingRecord[]; at: number } | undefined;

  let snapshot: CatalogSnapshot | undefined;
  let snapshotForced = true;
  let snapshotLoad: Promise<CatalogSnapshot> | undefined;
  let snapshotVersion = 0;
  // What the retrieval index holds: id → document signature, and the snapshot version it matches.
  let indexed: Map<string, string> | undefined;
  let indexedVersion = -1;
  let indexLoad: Promise<void> | undefined;

  function clearDerived(): void {
    visibleCache.clear();
    pageSetCache.clear();
  }

  function invalidate(kind: CacheKind): void {
    switch (kind) {
      case 'tools':
      case 'categories':
        snapshotForced = true;
        toolListCache.clear();
        clearDerived();
        break;
      case 'mappings':
        mappingsSnapshot = undefined;
        pageCategoryCache.clear();
        pageSetCache.clear();
        break;
      case 'rules':
        rulesSnapshot = undefined;
        policyCache.clear();
        clearDerived();
        break;
      case 'enablement':
        scopeCache.clear();
        toolListCache.clear();
        clearDerived();
        break;
      case 'bandit':
        banditCache.clear();
        break;
      case 'all':
        snapshotForced = true;
        rulesSnapshot = undefined;
        mappingsSnapshot = undefined;
        for (const cache of [policyCache, pageCategoryCache, toolListCache, scopeCache, banditCache]) cache.clear();
        clearDerived();
        break;
    }
  }

  // ---- cross-process invalidation -------------------------------------------------------
  let unlisten: (() => Promise<void>) | undefined;
  let closed = false;
  const subscription: Promise<void> =
    options.listen === false
      ? Promise.resolve()
      : db
          .listen(CATALOG_CHANGED_CHANNEL, (payload) => invalidate(parseCatalogChange(payload)))
          .then((stop) => {
            unlisten = stop;
            if (closed) void stop().catch(() => {});
          })
          .catch((error: unknown) => {
            // Without notifications the TTLs still bound staleness; say so loudly once.
            logger.warn({ err: error }, 'selection: could not LISTEN for catalog changes; caches rely on TTLs');
          });

  // ---- catalog snapshot and retrieval index ---------------------------------------------
  async function loadSnapshot(): Promise<CatalogSnapshot> {
    // Reset first: an invalidation arriving while this load runs sets it again and forces the next one.
    const forced = snapshotForced;
    snapshotForced = false;
    const signature = await catalogSignature(db);
    if (snapshot && !forced && signature === snapshot.signature) {
      snapshot.checkedAt = now();
      return snapshot;
    }
    const tools = await listActiveCandidates(db);
    for (const tool of tools) deepFreeze(tool.parameters);
    snapshot = { version: ++snapshotVersion, signature, tools, byId: new Map(tools.map((tool) => [tool.id, tool])), checkedAt: now() };
    toolListCache.clear();
    clearDerived();
    return snapshot;
  }

  async function getSnapshot(): Promise<CatalogSnapshot> {
    if (snapshot && !snapshotForced && now() - snapshot.checkedAt < ttl.toolsMs) return snapshot;
    snapshotLoad ??= loadSnapshot().finally(() => {
      snapshotLoad = undefined;
    });
    return snapshotLoad;
  }

  async function syncIndex(current: CatalogSnapshot): Promise<void> {
    const next = new Map(current.tools.map((tool) => [tool.id, documentSignature(tool)]));
    if (indexed !== undefined && retrieval.upsert && retrieval.remove) {
      const changed = current.tools.filter((tool) => indexed!.get(tool.id) !== next.get(tool.id));
      const removed = [...indexed.keys()].filter((id) => !next.has(id));
      if (changed.length + removed.length <= Math.max(50, current.tools.length / 2)) {
        if (removed.length > 0) await retrieval.remove(removed);
        if (changed.length > 0) await retrieval.upsert(changed.map(toDocument));
        indexed = next;
        indexedVersion = current.version;
        return;
      }
    }
    await retrieval.build(current.tools.map(toDocument));
    indexed = next;
    indexedVersion = current.version;
  }

  async function ensureIndex(current: CatalogSnapshot): Promise<void> {
    while (indexedVersion !== current.version) {
      indexLoad ??= syncIndex(current).finally(() => {
        indexLoad = undefined;
      });
      await indexLoad;
      if (snapshot !== current) return;
    }
  }

  // ---- scope, policy, candidates ---------------------------------------------------------
  async function resolveScope(workspace: string | null | undefined, project: string | null | undefined): Promise<Scope> {
    const key = JSON.stringify([workspace ?? null, project ?? null]);
    const cached = scopeCache.get(key);
    if (cached) return cached;
    const name = workspace ?? defaultWorkspace;
    let ws;
    try {
      ws = await findWorkspace(db, name);
    } catch (error) {
      throw unavailable('workspace', error);
    }
    // Unknown workspace: an error, never "every tool" (fail closed).
    if (!ws) throw notFound('workspace', name);
    let projectId: string | null = null;
    if (project !== undefined && project !== null) {
      let found;
      try {
        found = await findProject(db, ws.id, project);
      } catch (error) {
        throw unavailable('project', error);
      }
      if (!found) throw notFound('project', project);
      projectId = found.id;
    }
    const scope = { workspaceId: ws.id, projectId };
    scopeCache.set(key, scope);
    return scope;
  }

  async function getPolicy(context: Parameters<typeof compilePolicy>[1], key: string): Promise<CompiledPolicy> {
    const cached = policyCache.get(key);
    if (cached) return cached;
    if (!rulesSnapshot || now() - rulesSnapshot.at >= ttl.policyMs) {
      rulesSnapshot = { rules: await listVisibilityRules(db), at: now() };
    }
    const policy = compilePolicy(rulesSnapshot.rules, context, { tierOrder });
    if (policy.malformedRuleIds.length > 0) {
      logger.warn({ ruleIds: policy.malformedRuleIds }, 'selection: malformed visibility rules (allow ignored, others deny their target)');
    }
    policyCache.set(key, policy);
    return policy;
  }

  async function getScopedTools(current: CatalogSnapshot, scope: Scope, orgId: string | null): Promise<{ key: string; tools: SelectionCandidate[] }> {
    const key = `${current.version}|${scope.workspaceId}|${scope.projectId ?? ''}|${orgId === null ? '~' : JSON.stringify(orgId)}`;
    const cached = toolListCache.get(key);
    if (cached) return { key, tools: cached };
    const enabled = new Set(await effectivePluginIds(db, scope));
    // Plugin tools only when their plugin is in effect here; org-private tools only for their org.
    const tools = current.tools.filter(
      (tool) => (tool.pluginId === null || enabled.has(tool.pluginId)) && (tool.orgId === null || tool.orgId === orgId),
    );
    toolListCache.set(key, tools);
    return { key, tools };
  }

  function getVisible(scopedKey: string, scoped: SelectionCandidate[], policy: CompiledPolicy, policyKey: string): { key: string; set: VisibleSet } {
    const key = `${scopedKey}|${policyKey}`;
    const cached = visibleCache.get(key);
    if (cached) return { key, set: cached };
    const tools = policy.allowsEverything ? scoped : scoped.filter((tool) => policy.allows(tool));
    const set: VisibleSet = { tools, pins: tools.filter((tool) => tool.isAlwaysPinned).sort((a, b) => b.pinWeight - a.pinWeight), catalogTokens: new Map() };
    visibleCache.set(key, set);
    return { key, set };
  }

  async function pageCategories(page: string): Promise<Set<string> | null> {
    const cached = pageCategoryCache.get(page);
    if (cached !== undefined) return cached;
    if (!mappingsSnapshot || now() - mappingsSnapshot.at >= ttl.mappingsMs) {
      mappingsSnapshot = { mappings: await listPageMappings(db), at: now() };
    }
    const matched = matchPageMappings(mappingsSnapshot.mappings, page);
    const result = matched.length === 0 ? null : new Set(matched.map((mapping) => mapping.categoryId));
    pageCategoryCache.set(page, result);
    return result;
  }

  async function getPageSet(visibleKey: string, visible: VisibleSet, page: string | null): Promise<PageSet> {
    const key = `${visibleKey}|${page === null ? '~' : JSON.stringify(page)}`;
    const cached = pageSetCache.get(key);
    if (cached) return cached;
    const unpinned = visible.tools.filter((tool) => !tool.isAlwaysPinned);
    const unfiltered = (warning?: string): PageSet => ({
      retrievalIds: new Set(unpinned.map((tool) => tool.id)),
      ordered: unpinned,
      filtered: false,
      ...(warning === undefined ? {} : { warning }),
    });
    if (page === null) {
      const set = unfiltered();
      pageSetCache.set(key, set);
      return set;
    }
    let categories: Set<string> | null;
    try {
      categories = await pageCategories(page);
    } catch (error) {
      // Relevance stage: fail open, and do not cache the degraded answer.
      logger.warn({ err: error, page }, 'selection: page mappings could not be read');
      return unfiltered('page mappings could not be read; the page filter was skipped');
    }
    if (categories === null) {
      const set = unfiltered();
      pageSetCache.set(key, set);
      return set;
    }
    const ordered = unpinned.filter((tool) => tool.categoryId !== null && categories.has(tool.categoryId));
    const set =
      ordered.length === 0
        ? unfiltered(`no visible tool is in a category mapped to page '${page}'; the page filter was skipped`)
        : { retrievalIds: new Set(ordered.map((tool) => tool.id)), ordered, filtered: true };
    pageSetCache.set(key, set);
    return set;
  }

  async function getArms(contextKey: string): Promise<Map<string, BanditArm>> {
    const cached = banditCache.get(contextKey);
    if (cached) return cached;
    const arms = new Map<string, BanditArm>();
    for (const row of await listContextArms(db, contextKey)) arms.set(row.toolId, { alpha: row.alpha, beta: row.beta });
    banditCache.set(contextKey, arms);
    return arms;
  }

  const formatKey = (tool: SelectionCandidate, provider: SelectionProvider) => `${provider}|${tool.id}|${tool.contentHash}|${tool.qualifiedName}`;

  function formatted(tool: SelectionCandidate, provider: SelectionProvider): FormattedEntry {
    const key = formatKey(tool, provider);
    const cached = formatCache.get(key);
    if (cached) return cached;
    const entry = formatTool(tool, provider);
    let tokens = tokenCache.get(key);
    if (tokens === undefined) {
      tokens = countJsonTokens(entry.schema);
      tokenCache.set(key, tokens);
    }
    const value: FormattedEntry = { name: entry.name, schema: deepFreeze(entry.schema), tokens };
    formatCache.set(key, value);
    return value;
  }

  function toolTokens(tool: SelectionCandidate, provider: SelectionProvider): number {
    const key = formatKey(tool, provider);
    let tokens = tokenCache.get(key);
    if (tokens === undefined) {
      tokens = countJsonTokens(formatTool(tool, provider).schema);
      tokenCache.set(key, tokens);
    }
    return tokens;
  }

  function catalogTokens(visible: VisibleSet, provider: SelectionProvider): number {
    let total = visible.catalogTokens.get(provider);
    if (total === undefined) {
      total = 0;
      for (const tool of visible.tools) total += toolTokens(tool, provider);
      visible.catalogTokens.set(provider, total);
    }
    return total;
  }

  // ---- events -----------------------------------------------------------------------------
  // Event logging is off the hot path (seed 001 §7.5): queued, written in batches.
  const pendingIds = new Set<string>();
  const events = createBatchWriter<SelectionEventWrite>({
    write: (batch) => insertSelectionEvents(db, batch),
    flushMs,
    batchSize,
    maxQueue,
    onDrop: (dropped) => {
      pendingIds.delete(dropped.id);
      logger.warn({ eventId: dropped.id }, 'selection: event queue full; oldest event dropped');
    },
    // Best effort: report, never throw into a request.
    onError: (error, batch) => logger.error({ err: error, events: batch.length }, 'selection: could not write selection events'),
    onSettled: (batch) => {
      for (const event of batch) pendingIds.delete(event.id);
    },
  });

  function enqueue(event: SelectionEventWrite): void {
    pendingIds.add(event.id);
    events.push(event);
  }

  const flushEvents = (): Promise<void> => events.flush();

  // ---- queued outcomes ----------------------------------------------------------------------
  // What each logged selection offered, so a queued outcome resolves without reading the event
  // back (issue #18 finding 9: no database round trip per search). Bounded; a report for an
  // event no longer here takes the transactional path of recordOutcome.
  const offeredByEvent = new LruTtlCache<OfferedEvent>({ maxEntries: maxQueue, ttlMs: 3_600_000, now });
  const pendingOutcomeIds = new Set<string>();
  const outcomes = createBatchWriter<QueuedOutcome>({
    write: writeQueuedOutcomes,
    flushMs,
    batchSize,
    maxQueue,
    onDrop: (dropped) => {
      pendingOutcomeIds.delete(dropped.write.id);
      logger.warn({ eventId: dropped.write.id }, 'selection: outcome queue full; oldest outcome dropped');
    },
    onError: (error, batch) => logger.error({ err: error, outcomes: batch.length }, 'selection: could not write selection outcomes'),
    onSettled: (batch) => {
      for (const item of batch) pendingOutcomeIds.delete(item.write.id);
    },
  });

  function resolveCalled(tools: readonly OfferedTool[], toolsCalled: readonly string[]) {
    const lookup = new Map<string, OfferedTool>();
    for (const tool of tools) {
      lookup.set(tool.id, tool);
      lookup.set(tool.qualifiedName, tool);
      for (const provider of PROVIDERS) lookup.set(providerToolName(tool.qualifiedName, provider), tool);
    }
    const calledIds = new Set<string>();
    const stored: string[] = [];
    const unresolved: string[] = [];
    for (const name of toolsCalled) {
      const tool = lookup.get(name);
      if (tool) {
        calledIds.add(tool.id);
        stored.push(tool.qualifiedName);
      } else {
        unresolved.push(name);
        stored.push(name);
      }
    }
    return { calledIds, stored, unresolved };
  }

  /** Seed 001 §5.5: a called tool moves by the call's success; an offered, uncalled one only counts as selected. */
  function incrementsOf(offeredIds: readonly string[], calledIds: ReadonlySet<string>, success: boolean): BanditIncrement[] {
    return offeredIds.map((toolId) => {
      const called = calledIds.has(toolId);
      return { toolId, alpha: called && success ? 1 : 0, beta: called && !success ? 1 : 0, selections: 1, successes: called && success ? 1 : 0 };
    });
  }

  /** Keeps this process's cached posteriors in step with increments just committed. */
  function applyToCachedArms(contextKey: string, increments: readonly BanditIncrement[]): void {
    const arms = banditCache.get(contextKey);
    if (!arms) return;
    for (const increment of increments) {
      if (increment.alpha === 0 && increment.beta === 0) continue;
      const arm = arms.get(increment.toolId) ?? { alpha: 1, beta: 1 };
      arms.set(increment.toolId, { alpha: arm.alpha + increment.alpha, beta: arm.beta + increment.beta });
    }
  }

  async function writeQueuedOutcomes(batch: QueuedOutcome[]): Promise<void> {
    // The events must be rows before their outcomes can land on them.
    await flushEvents();
    const committed = await db.transaction(async (tx) => {
      const written = await writeEventOutcomes(tx, batch.map((item) => item.write));
      const byContext = new Map<string, BanditIncrement[]>();
      for (const item of batch) {
        if (!written.has(item.write.id)) continue;
        const list = byContext.get(item.contextKey) ?? [];
        list.push(...item.increments);
        byContext.set(item.contextKey, list);
      }
      // Contexts in a fixed order, so concurrent writers lock arms in the same order.
      const contexts = [...byContext.keys()].sort();
      for (const contextKey of contexts) await incrementArms(tx, contextKey, mergeIncrements(byContext.get(contextKey)!));
      return byContext;
    });
    for (const [contextKey, increments] of committed) applyToCachedArms(contextKey, increments);
  }

  function queueOutcome(eventId: string, outcome: OutcomeInput): void {
    const parsed = outcomeInputSchema.safeParse(outcome);
    const offered = offeredByEvent.get(eventId);
    if (!parsed.success || offered === undefined || pendingOutcomeIds.has(eventId)) {
      // Unknown here (another process's event, or long ago): the transactional path decides.
      recordOutcome(eventId, outcome).catch((error: unknown) => logger.warn({ err: error, eventId }, 'selection: outcome not recorded'));
      return;
    }
    offeredByEvent.delete(eventId);
    const report = parsed.data;
    const { calledIds, stored } = resolveCalled(offered.tools, report.toolsCalled);
    const kind: OutcomeResult['outcome'] = report.toolsCalled.length === 0 ? 'no_call' : report.success ? 'success' : 'failure';
    pendingOutcomeIds.add(eventId);
    outcomes.push({
      write: { id: eventId, toolsCalled: stored, calledToolIds: [...calledIds], success: report.success, outcome: kind, at: clock() },
      contextKey: offered.contextKey,
      increments: incrementsOf(offered.tools.map((tool) => tool.id), calledIds, report.success),
    });
  }

  const flush = async (): Promise<void> => {
    await flushEvents();
    await outcomes.flush();
  };

  // ---- the pipeline -----------------------------------------------------------------------
  /**
   * Stages 1 and 2 (both fail closed): the tools this context may see. The one place that
   * decides visibility; `selectTools` and `visibleTools` both go through it.
   */
  async function resolveVisible(
    context: z.output<typeof selectionContextSchema>,
    binding: SelectOptions['binding'],
    warnings: string[],
    lap: () => number = () => 0,
  ): Promise<{ policyMs: number; candidatesMs: number; current: CatalogSnapshot; scope: Scope; visible: { key: string; set: VisibleSet; policyKey: string } }> {
    const orgId = context.orgId ?? null;
    const policyContext = { orgId: context.orgId, userId: context.userId, roles: context.roles, tier: context.tier, page: context.page };

    // Stage 1: policy (fail closed).
    const policyKey = policyCacheKey(policyContext);
    let policy: CompiledPolicy;
    try {
      policy = await getPolicy(policyContext, policyKey);
    } catch (error) {
      throw unavailable('visibility rules', error);
    }
    if (policy.malformedRuleIds.length > 0) {
      warnings.push(`${policy.malformedRuleIds.length} malformed visibility rule(s): allow rules ignored, deny rules applied to their targets`);
    }
    const policyMs = lap();

    // Stage 2: candidates in scope (fail closed).
    const scope = await resolveScope(context.workspace, context.project);
    if (binding?.workspaceId && binding.workspaceId !== scope.workspaceId) {
      throw new QuiverError(ErrorCodes.forbidden, 'this API key is bound to another workspace');
    }
    if (binding?.projectId && binding.projectId !== scope.projectId) {
      throw new QuiverError(ErrorCodes.forbidden, 'this API key is bound to another project');
    }
    let current: CatalogSnapshot;
    let scoped: { key: string; tools: SelectionCandidate[] };
    try {
      current = await getSnapshot();
      scoped = await getScopedTools(current, scope, orgId);
    } catch (error) {
      throw unavailable('tool catalog or enablement', error);
    }
    const visible = getVisible(scoped.key, scoped.tools, policy, policyKey);
    const candidatesMs = lap();
    return { policyMs, candidatesMs, current, scope, visible: { ...visible, policyKey } };
  }

  async function visibleTools(input: SelectionContext, selectOptions: SelectOptions = {}): Promise<VisibleTools> {
    const context = parseOrThrow(selectionContextSchema, input, 'selection context');
    const warnings: string[] = [];
    const { visible } = await resolveVisible(context, selectOptions.binding, warnings);
    return { tools: visible.set.tools, pins: visible.set.pins, warnings };
  }

  async function selectTools(input: SelectToolsInput, selectOptions: SelectOptions = {}): Promise<SelectionResult> {
    const request = parseOrThrow(selectToolsInputSchema, input, 'selection request');
    const started = performance.now();
    let mark = started;
    const lap = () => {
      const at = performance.now();
      const elapsed = at - mark;
      mark = at;
      return elapsed;
    };
    const warnings: string[] = [];
    const context = request.context;
    const page = context.page ?? null;
    const orgId = context.orgId ?? null;
    const { policyMs, candidatesMs, current, scope, visible } = await resolveVisible(context, selectOptions.binding, warnings, lap);

    // Stage 3: page context (relevance: fail open).
    const pageSet = await getPageSet(visible.key, visible.set, page);
    if (pageSet.warning) warnings.push(pageSet.warning);
    const contextMs = lap();

    // Stage 4: retrieval (relevance: fail open to catalog order).
    const k = request.k;
    const poolSize = Math.max(k, Math.ceil(k * banditOptions.poolFactor));
    let ranked: RankedCandidate[] = [];
    let retrieved = false;
    if (pageSet.ordered.length > 0) {
      try {
        await ensureIndex(current);
        const found = await retrieval.search(request.query, { k: poolSize, candidateIds: pageSet.retrievalIds, includeRanks: false });
        // Never trust an index to have honoured candidateIds: visibility is re-checked here.
        ranked = found.results.filter((hit) => pageSet.retrievalIds.has(hit.id)).slice(0, poolSize);
        for (const warning of found.warnings ?? []) warnings.push(warning);
        retrieved = ranked.length > 0;
        if (!retrieved) warnings.push('no tool matched the query; tools are returned in catalog order');
      } catch (error) {
        logger.warn({ err: error }, 'selection: retrieval failed');
        warnings.push('retrieval failed; tools are returned in catalog order');
      }
      if (!retrieved) ranked = pageSet.ordered.slice(0, poolSize).map((tool) => ({ id: tool.id, score: 0 }));
    }
    const retrievalMs = lap();

    // Stage 5: Thompson-sampling rerank (relevance: fail open to retrieval order).
    const contextKey = banditContextKey({ tier: context.tier, page });
    let picks: BanditPick[];
    let banditUsed = false;
    try {
      const arms = await getArms(contextKey);
      picks = thompsonRerank(ranked, { k, sampler, arm: (id) => arms.get(id), ...banditOptions });
      banditUsed = true;
    } catch (error) {
      logger.warn({ err: error, contextKey }, 'selection: bandit statistics could not be read');
      warnings.push('bandit statistics could not be read; retrieval order kept');
      picks = ranked.slice(0, k).map((hit) => ({ id: hit.id, score: hit.score, sample: 0, reason: 'retrieved' }));
    }
    const banditMs = lap();

    // Stage 6: pins, prepended by pin weight; they may exceed k (seed 001 §5.6).
    const byId = current.byId;
    const chosen: Array<{ tool: SelectionCandidate; score: number; reason: SelectionReason }> = visible.set.pins.map((tool) => ({ tool, score: 0, reason: 'pinned' }));
    for (const pick of picks) {
      // Picks come from pageSet.retrievalIds (checked above), so they are visible tools.
      const tool = byId.get(pick.id);
      if (tool) chosen.push({ tool, score: pick.score, reason: pick.reason });
    }
    const pinsMs = lap();

    // Token budget and provider format.
    const provider = request.provider;
    const kept: Array<{ tool: SelectionCandidate; score: number; reason: SelectionReason; entry: FormattedEntry }> = [];
    let sent = 0;
    let droppedForBudget = 0;
    for (const item of chosen) {
      const entry = formatted(item.tool, provider);
      if (request.tokenBudget !== undefined && sent + entry.tokens > request.tokenBudget) {
        droppedForBudget++;
        continue;
      }
      sent += entry.tokens;
      kept.push({ ...item, entry });
    }
    if (droppedForBudget > 0) warnings.push(`${droppedForBudget} tool(s) left out to stay within the token budget of ${request.tokenBudget}`);
    const catalog = catalogTokens(visible.set, provider);
    const schemas = assembleProviderTools(kept.map((item) => item.entry), provider);
    const toolNames: Record<string, string> = {};
    for (const item of kept) toolNames[item.entry.name] = item.tool.qualifiedName;
    const formatMs = lap();

    const method = [
      'policy',
      pageSet.filtered ? 'page' : undefined,
      retrieved ? (retrieval.method ?? 'retrieval') : 'catalog_order',
      banditUsed ? 'thompson' : undefined,
      visible.set.pins.length > 0 ? 'pins' : undefined,
    ]
      .filter((part) => part !== undefined)
      .join('+');
    const total = performance.now() - started;
    const stageTimingsMs: StageTimings = { policy: policyMs, candidates: candidatesMs, context: contextMs, retrieval: retrievalMs, bandit: banditMs, pins: pinsMs, format: formatMs, total };
    const saved = Math.max(0, catalog - sent);
    const tokens = { sent, catalog, saved, savedPercent: catalog === 0 ? 0 : Math.round((saved / catalog) * 10_000) / 100, tokenizer: TOKENIZER_NAME };

    let eventId: string | undefined;
    if (request.log) {
      eventId = randomUUID();
      offeredByEvent.set(eventId, { contextKey, tools: kept.map((item) => ({ id: item.tool.id, qualifiedName: item.tool.qualifiedName })) });
      enqueue({
        id: eventId,
        queryText: request.query,
        pageContext: page,
        orgId,
        userId: context.userId ?? null,
        workspaceId: scope.workspaceId,
        projectId: scope.projectId,
        sessionId: context.sessionId ?? null,
        contextKey,
        tier: context.tier ?? null,
        provider,
        selectedToolIds: kept.map((item) => item.tool.id),
        candidateCount: visible.set.tools.length,
        selectionMethod: method,
        latencyMs: total,
        stageTimings: { ...stageTimingsMs },
        tokensUsed: sent,
        tokensTotal: catalog,
        tokensSaved: saved,
        warnings: [...warnings],
        createdAt: clock(),
      });
    }

    return {
      tools: kept.map(({ tool, score, reason, entry }) => ({
        id: tool.id,
        qualifiedName: tool.qualifiedName,
        name: tool.name,
        providerName: entry.name,
        pluginName: tool.pluginName,
        description: tool.description,
        parameters: tool.parameters,
        score,
        reason,
        tokens: entry.tokens,
      })),
      schemas,
      metadata: {
        ...(eventId === undefined ? {} : { eventId }),
        contextKey,
        provider,
        candidateCount: visible.set.tools.length,
        stageTimingsMs,
        tokens,
        method,
        toolNames,
        warnings,
      },
    };
  }

  // ---- outcomes -----------------------------------------------------------------------------
  async function recordOutcome(eventId: string, outcome: OutcomeInput, outcomeOptions: OutcomeOptions = {}): Promise<OutcomeResult> {
    if (!z.string().uuid().safeParse(eventId).success) throw notFound('selection event', eventId);
    const report = parseOrThrow(outcomeInputSchema, outcome, 'outcome');
    // Reported here: a later queued report for the same event must take this path too (and conflict).
    offeredByEvent.delete(eventId);
    if (pendingOutcomeIds.has(eventId)) await flush();
    else if (pendingIds.has(eventId)) await flushEvents();
    const result = await db.transaction(async (tx) => {
      const event = await findSelectionEvent(tx, eventId, { lock: true });
      // Someone else's event reads as missing, so its existence does not leak across tenants.
      const foreign =
        event !== undefined &&
        ((outcomeOptions.orgId !== undefined && event.orgId !== outcomeOptions.orgId) ||
          (outcomeOptions.workspaceId !== undefined && event.workspaceId !== outcomeOptions.workspaceId));
      if (event === undefined || foreign) throw notFound('selection event', eventId);
      if (event.outcomeAt !== null) throw new QuiverError(ErrorCodes.conflict, `the outcome of selection event '${eventId}' was already recorded`);
      const offered = await findCandidatesByIds(tx, event.selectedToolIds);
      const { calledIds, stored, unresolved } = resolveCalled(offered, report.toolsCalled);
      const kind: OutcomeResult['outcome'] = report.toolsCalled.length === 0 ? 'no_call' : report.success ? 'success' : 'failure';
      const written = await writeEventOutcome(tx, { id: eventId, toolsCalled: stored, calledToolIds: [...calledIds], success: report.success, outcome: kind, at: clock() });
      if (!written) throw new QuiverError(ErrorCodes.conflict, `the outcome of selection event '${eventId}' was already recorded`);
      const increments = incrementsOf(offered.map((tool) => tool.id), calledIds, report.success);
      await incrementArms(tx, event.contextKey, increments);
      return { contextKey: event.contextKey, increments, value: { eventId, outcome: kind, toolsCalled: stored, calledToolIds: [...calledIds], unresolved } };
    });
    applyToCachedArms(result.contextKey, result.increments);
    return result.value;
  }

  const analytics = createSelectionAnalytics({ db, clock, beforeRead: flush });

  return {
    selectTools,
    visibleTools,
    recordOutcome,
    queueOutcome,
    invalidate,
    flush,
    ready: () => subscription,
    analytics,
    cacheStats() {
      const entries: Array<[string, LruTtlCache<unknown>]> = [
        ['policy', policyCache],
        ['pageMappings', pageCategoryCache],
        ['toolList', toolListCache],
        ['scope', scopeCache],
        ['visible', visibleCache],
        ['pageSets', pageSetCache],
        ['bandit', banditCache],
        ['format', formatCache],
        ['tokens', tokenCache],
      ];
      return Object.fromEntries(entries.map(([name, cache]) => [name, { hits: cache.stats.hits, misses: cache.stats.misses, size: cache.size }]));
    },
    async close() {
      if (closed) return;
      closed = true;
      await subscription;
      await flush();
      if (unlisten) await unlisten().catch(() => {});
    },
  };
}

/** Runs one selection on an engine (the library's shorthand for `engine.selectTools`). */
export function selectTools(engine: SelectionEngine, input: SelectToolsInput, options?: SelectOptions): Promise<SelectionResult> {
  return engine.selectTools(input, options);
}
