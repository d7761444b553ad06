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
 *
 * This file is the assembly; each part lives in engine/ with one job: types.ts (schemas and
 * result types), catalog.ts (snapshot and retrieval index), visibility.ts (stages 1-2),
 * page-sets.ts (stage 3), pipeline.ts (stages 3-6, budget, result, event), formatting.ts
 * (provider formats and tokens), bandit-arms.ts, event-log.ts and outcomes.ts. Caches are
 * dropped on LISTEN / NOTIFY catalog changes (invalidation.ts), each part clearing its own.
 */
import { silentLogger } from '../core/logger.ts';
import { createLexicalRetrieval, type SelectionRetrieval } from './retrieval.ts';
import { createSampler } from './sampler.ts';
import { DEFAULT_TIER_ORDER } from './policy.ts';
import { CATALOG_CHANGED_CHANNEL, parseCatalogChange, type CacheKind } from './invalidation.ts';
import { createSelectionAnalytics } from './analytics.ts';
import type { LruTtlCache } from './lru-cache.ts';
import { createCatalogState } from './engine/catalog.ts';
import { createVisibility } from './engine/visibility.ts';
import { createPageSets } from './engine/page-sets.ts';
import { createFormatting } from './engine/formatting.ts';
import { createBanditArms } from './engine/bandit-arms.ts';
import { createEventLog } from './engine/event-log.ts';
import { createOutcomes } from './engine/outcomes.ts';
import { createPipeline } from './engine/pipeline.ts';
import type { z } from 'zod';
import { parseOrThrow } from '../core/validation.ts';
import {
  selectionContextSchema,
  type SelectionContext,
  type SelectionEngine,
  type SelectionEngineOptions,
  type SelectionResult,
  type SelectOptions,
  type SelectToolsInput,
} from './engine/types.ts';

export { selectionContextSchema, selectToolsInputSchema, outcomeInputSchema } from './engine/types.ts';
export type {
  SelectionContext,
  SelectToolsInput,
  OutcomeInput,
  SelectionReason,
  SelectedTool,
  StageTimings,
  SelectionResult,
  OutcomeResult,
  OutcomeObservation,
  OutcomeObserver,
  SelectOptions,
  OutcomeOptions,
  CacheTtls,
  SelectionEngineOptions,
  VisibleTools,
  SelectionEngine,
} from './engine/types.ts';

/** Creates the selection engine: its parts, wired, with one invalidation entry for all their caches. */
export function createSelectionEngine(options: SelectionEngineOptions): SelectionEngine {
  const { db } = options;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? (() => new Date());
  const now = () => clock().getTime();
  const ttl = {
    policyMs: options.cacheTtls?.policyMs ?? 30_000,
    mappingsMs: options.cacheTtls?.mappingsMs ?? 60_000,
    toolsMs: options.cacheTtls?.toolsMs ?? 60_000,
    banditMs: options.cacheTtls?.banditMs ?? 5_000,
  };
  // Written in the first 50 ms pause between selections, or once a second during a burst:
  // on the embedded database each write holds the event loop (issue #18, the stdio p99).
  const batches = {
    flushMs: options.events?.flushMs ?? 50,
    maxWaitMs: options.events?.maxWaitMs ?? 1_000,
    batchSize: options.events?.batchSize ?? 200,
    maxQueue: options.events?.maxQueue ?? 10_000,
  };
  const retrieval: SelectionRetrieval =
    typeof options.retrieval === 'function' ? options.retrieval() : (options.retrieval ?? createLexicalRetrieval());

  // A new snapshot rebuilds the lists derived from it (both parts are created just below).
  // The stored token counts are read with each snapshot (issue #28), so counting stays synchronous.
  const catalog = createCatalogState({ db, retrieval, toolsMs: ttl.toolsMs, now, logger, onReload: () => (visibility.onCatalogReload(), pageSets.onCatalogReload()), withSnapshot: () => formatting.loadCounts() });
  const visibility = createVisibility({ db, catalog, logger, now, ttl, tierOrder: options.tierOrder ?? DEFAULT_TIER_ORDER, defaultWorkspace: options.defaultWorkspace ?? 'default' });
  const pageSets = createPageSets({ db, logger, now, ttl });
  const formatting = createFormatting(now, { db, logger });
  const arms = createBanditArms({ db, now, banditMs: ttl.banditMs });
  // Issue #23: an event id returned is durable; a server database takes the row before the answer.
  const durability = options.events?.durability ?? (db.engine === 'postgres' ? { kind: 'write-through' as const } : { kind: 'batched' as const });
  const events = createEventLog({ db, logger, durability, ...batches });
  const outcomes = createOutcomes({ db, logger, clock, now, events, arms, observer: options.outcomeObserver, ...batches });
  const banditOptions = { poolFactor: options.bandit?.poolFactor ?? 2, relevanceStrength: options.bandit?.relevanceStrength ?? 8, exploration: options.bandit?.exploration ?? true };
  const sampler = createSampler(options.random ?? Math.random);
  const selectTools = createPipeline({ visibility, pageSets, catalog, retrieval, arms, formatting, events, outcomes, sampler, banditOptions, logger, clock, trustFactor: options.trustFactor });

  function invalidate(kind: CacheKind): void {
    catalog.invalidate(kind);
    visibility.invalidate(kind);
    pageSets.invalidate(kind);
    arms.invalidate(kind);
  }

  // Cross-process invalidation: every engine on the database drops what a committed change made stale.
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

  const caches: Array<[string, LruTtlCache<unknown>]> = [
    ['policy', visibility.caches.policy],
    ['pageMappings', pageSets.caches.pageMappings],
    ['toolList', visibility.caches.toolList],
    ['scope', visibility.caches.scope],
    ['visible', visibility.caches.visible],
    ['pageSets', pageSets.caches.pageSets],
    ['bandit', arms.cache],
    ['format', formatting.caches.format],
    ['tokens', formatting.caches.tokens],
  ];

  // A frozen context cannot change after its check: its parse is kept (a gateway session asks
  // `visibleTools` with the same frozen context on every plugin call, issue #28).
  const parsedContexts = new WeakMap<object, z.output<typeof selectionContextSchema>>();
  function parseContext(input: SelectionContext): z.output<typeof selectionContextSchema> {
    const known = parsedContexts.get(input);
    if (known !== undefined) return known;
    const context = parseOrThrow(selectionContextSchema, input, 'selection context');
    if (Object.isFrozen(input) && (input.roles === undefined || input.roles === null || Object.isFrozen(input.roles))) parsedContexts.set(input, context);
    return context;
  }

  return {
    selectTools,
    async visibleTools(input, selectOptions = {}) {
      const context = parseContext(input);
      const warnings: string[] = [];
      const { visible } = await visibility.resolve(context, selectOptions.binding, warnings);
      return { tools: visible.set.tools, pins: visible.set.pins, warnings };
    },
    recordOutcome: outcomes.record,
    queueOutcome: outcomes.queue,
    invalidate,
    definitionTokens: formatting.definitionTokens,
    async flush() {
      await outcomes.flush();
      await formatting.flush();
      // Then the observer's own work, so what was reported ranks (learned examples, issue #13).
      await options.outcomeObserver?.flush?.();
    },
    ready: () => subscription,
    analytics: createSelectionAnalytics({ db, clock, beforeRead: outcomes.flush }),
    cacheStats() {
      return Object.fromEntries(caches.map(([name, cache]) => [name, { hits: cache.stats.hits, misses: cache.stats.misses, size: cache.size }]));
    },
    async close() {
      if (closed) return;
      closed = true;
      await subscription;
      await outcomes.flush();
      await events.close();
      await formatting.flush();
      if (unlisten) await unlisten().catch(() => {});
    },
  };
}

/** Runs one selection on an engine (the library's shorthand for `engine.selectTools`). */
export function selectTools(engine: SelectionEngine, input: SelectToolsInput, options?: SelectOptions): Promise<SelectionResult> {
  return engine.selectTools(input, options);
}
