/**
 * @module selection/engine/pipeline
 * The selection pipeline after visibility (seed 001 §5): page context → retrieval →
 * Thompson-sampling rerank → pins → token budget and provider format, then the result and its
 * event. The ranking stages fail open and say so in `metadata.warnings`; visibility (stages 1
 * and 2, in visibility.ts) fails closed before any of this runs.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../core/logger.ts';
import { TOKENIZER_NAME } from '../../core/tokens.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import type { SelectionEventWrite } from '../../store/repositories/selection-events.ts';
import { banditContextKey, thompsonRerank, type BanditPick, type RankedCandidate } from '../bandit.ts';
import type { createSampler } from '../sampler.ts';
import type { SelectionRetrieval } from '../retrieval.ts';
import { assembleProviderTools, type SelectionProvider } from '../provider-formats.ts';
import type { BanditArms } from './bandit-arms.ts';
import type { CatalogState } from './catalog.ts';
import type { EventLog } from './event-log.ts';
import type { Formatting } from './formatting.ts';
import type { Outcomes } from './outcomes.ts';
import type { PageSets } from './page-sets.ts';
import type { Visibility } from './visibility.ts';
import { applyTrustFactors } from './trust-ranking.ts';
import {
  selectToolsInputSchema,
  type CatalogSnapshot,
  type FormattedEntry,
  type PageSet,
  type SelectionReason,
  type SelectionResult,
  type SelectOptions,
  type SelectToolsInput,
  type StageTimings,
  type VisibleSet,
} from './types.ts';

/** What the pipeline runs on: the engine's parts and settings. */
export interface PipelineParts {
  visibility: Visibility;
  pageSets: PageSets;
  catalog: CatalogState;
  retrieval: SelectionRetrieval;
  arms: BanditArms;
  formatting: Formatting;
  events: EventLog;
  outcomes: Outcomes;
  sampler: ReturnType<typeof createSampler>;
  /** Trust factor of a plugin's tools (issue #10): lowers, never raises, a tool's relevance. */
  trustFactor?: ((pluginId: string) => number) | undefined;
  banditOptions: { poolFactor: number; relevanceStrength: number; exploration: boolean };
  logger: Logger;
  clock: () => Date;
}

type Chosen = { tool: SelectionCandidate; score: number; reason: SelectionReason };
type Kept = Chosen & { entry: FormattedEntry };

/** A stopwatch: each call returns the milliseconds since the previous one. */
function stopwatch(started: number): () => number {
  let mark = started;
  return () => {
    const at = performance.now();
    const elapsed = at - mark;
    mark = at;
    return elapsed;
  };
}

/** Stage 4: retrieval over the page set (relevance: fail open to catalog order). */
async function retrieve(
  parts: PipelineParts,
  current: CatalogSnapshot,
  pageSet: PageSet,
  query: string,
  poolSize: number,
  warnings: string[],
  orgId: string | null,
  exclude: ReadonlySet<string> | undefined,
): Promise<{ ranked: RankedCandidate[]; retrieved: boolean }> {
  if (pageSet.ordered.length === 0) return { ranked: [], retrieved: false };
  const offerable = (id: string): boolean => pageSet.retrievalIds.has(id) && exclude?.has(id) !== true;
  let ranked: RankedCandidate[] = [];
  let retrieved = false;
  try {
    await parts.catalog.ensureIndex(current);
    // A few excluded tools are dropped from the hits, so ask for as many more: the pool stays
    // full without copying the page's candidate set per request. Many (an expert allow-list of a
    // few tools in a large catalog) narrow the candidates instead, so retrieval never ranks them.
    const narrow = exclude !== undefined && exclude.size > Math.max(64, poolSize * 4);
    const candidateIds = narrow ? new Set([...pageSet.retrievalIds].filter((id) => !exclude.has(id))) : pageSet.retrievalIds;
    const k = narrow ? poolSize : poolSize + (exclude?.size ?? 0);
    // orgId: the organisation whose learned examples may shape this ranking (issue #13).
    const found = await parts.retrieval.search(query, { k, candidateIds, includeRanks: false, orgId });
    // Never trust an index to have honoured candidateIds: visibility is re-checked here.
    ranked = found.results.filter((hit) => offerable(hit.id)).slice(0, poolSize);
    for (const warning of found.warnings ?? []) warnings.push(warning);
    retrieved = ranked.length > 0;
    if (!retrieved) warnings.push('no tool matched the query; tools are returned in catalog order');
  } catch (error) {
    parts.logger.warn({ err: error }, 'selection: retrieval failed');
    warnings.push('retrieval failed; tools are returned in catalog order');
  }
  if (!retrieved) ranked = pageSet.ordered.filter((tool) => exclude?.has(tool.id) !== true).slice(0, poolSize).map((tool) => ({ id: tool.id, score: 0 }));
  return { ranked, retrieved };
}

/** Stage 5: Thompson-sampling rerank (relevance: fail open to retrieval order). */
async function rerank(parts: PipelineParts, contextKey: string, ranked: RankedCandidate[], k: number, warnings: string[]): Promise<{ picks: BanditPick[]; banditUsed: boolean }> {
  try {
    const context = await parts.arms.get(contextKey);
    // The context's outcomes are a running total kept beside its arms, not a sum over them per selection.
    return { picks: thompsonRerank(ranked, { k, sampler: parts.sampler, arm: (id) => context.arms.get(id), context: context.outcomes(), ...parts.banditOptions }), banditUsed: true };
  } catch (error) {
    parts.logger.warn({ err: error, contextKey }, 'selection: bandit statistics could not be read');
    warnings.push('bandit statistics could not be read; retrieval order kept');
    return { picks: ranked.slice(0, k).map((hit) => ({ id: hit.id, score: hit.score, sample: 0, reason: 'retrieved' })), banditUsed: false };
  }
}

/** Token budget and provider format: tools that fit, in order, and their token total. */
function fitToBudget(formatting: Formatting, chosen: readonly Chosen[], provider: SelectionProvider, tokenBudget: number | undefined, warnings: string[]): { kept: Kept[]; sent: number } {
  const kept: Kept[] = [];
  let sent = 0;
  let droppedForBudget = 0;
  for (const item of chosen) {
    const entry = formatting.formatted(item.tool, provider);
    if (tokenBudget !== undefined && sent + entry.tokens > tokenBudget) {
      droppedForBudget++;
      continue;
    }
    sent += entry.tokens;
    kept.push({ ...item, entry });
  }
  if (droppedForBudget > 0) warnings.push(`${droppedForBudget} tool(s) left out to stay within the token budget of ${tokenBudget}`);
  return { kept, sent };
}

/** The method label: the stages that shaped this answer. */
function methodOf(pageSet: PageSet, retrieved: boolean, retrievalMethod: string | undefined, banditUsed: boolean, visible: VisibleSet): string {
  return [
    'policy',
    pageSet.filtered ? 'page' : undefined,
    retrieved ? (retrievalMethod ?? 'retrieval') : 'catalog_order',
    banditUsed ? 'thompson' : undefined,
    visible.pins.length > 0 ? 'pins' : undefined,
  ]
    .filter((part) => part !== undefined)
    .join('+');
}

/** The public shape of the tools kept. */
function selectedTools(kept: readonly Kept[]): SelectionResult['tools'] {
  return kept.map(({ tool, score, reason, entry }) => ({
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
  }));
}

/** Creates `selectTools` over the engine's parts. */
export function createPipeline(parts: PipelineParts): (input: SelectToolsInput, options?: SelectOptions) => Promise<SelectionResult> {
  const { visibility, pageSets, formatting } = parts;

  return async function selectTools(input, selectOptions = {}) {
    const request = parseOrThrow(selectToolsInputSchema, input, 'selection request');
    const started = performance.now();
    const lap = stopwatch(started);
    const warnings: string[] = [];
    const context = request.context;
    const page = context.page ?? null;
    const { policyMs, candidatesMs, current, scope, visible } = await visibility.resolve(context, selectOptions.binding, warnings, lap);

    // Stage 3: page context (relevance: fail open).
    const pageSet = await pageSets.get(visible.key, visible.set, page);
    if (pageSet.warning) warnings.push(pageSet.warning);
    const contextMs = lap();

    const k = request.k;
    const { ranked: relevant, retrieved } = await retrieve(parts, current, pageSet, request.query, Math.max(k, Math.ceil(k * parts.banditOptions.poolFactor)), warnings, context.orgId ?? null, selectOptions.exclude);
    // Trust (issue #10): a low-trust plugin's tools rank lower, never higher.
    const ranked = parts.trustFactor === undefined ? relevant : applyTrustFactors(relevant, (id) => current.byId.get(id)?.pluginId ?? undefined, parts.trustFactor);
    const retrievalMs = lap();

    const contextKey = banditContextKey({ orgId: context.orgId, tier: context.tier, page });
    const { picks, banditUsed } = await rerank(parts, contextKey, ranked, k, warnings);
    const banditMs = lap();

    // Stage 6: pins, prepended by pin weight; they may exceed k (seed 001 §5.6).
    const chosen: Chosen[] = visible.set.pins.filter((tool) => selectOptions.exclude?.has(tool.id) !== true).map((tool) => ({ tool, score: 0, reason: 'pinned' }));
    for (const pick of picks) {
      // Picks come from pageSet.retrievalIds (checked above), so they are visible tools.
      const tool = current.byId.get(pick.id);
      if (tool) chosen.push({ tool, score: pick.score, reason: pick.reason });
    }
    const pinsMs = lap();

    const provider = request.provider;
    const { kept, sent } = fitToBudget(formatting, chosen, provider, request.tokenBudget, warnings);
    const catalog = formatting.catalogTokens(visible.set, provider);
    const schemas = assembleProviderTools(kept.map((item) => item.entry), provider);
    const toolNames: Record<string, string> = {};
    for (const item of kept) toolNames[item.entry.name] = item.tool.qualifiedName;
    const formatMs = lap();

    const method = methodOf(pageSet, retrieved, parts.retrieval.method, banditUsed, visible.set);
    const total = performance.now() - started;
    const stageTimingsMs: StageTimings = { policy: policyMs, candidates: candidatesMs, context: contextMs, retrieval: retrievalMs, bandit: banditMs, pins: pinsMs, format: formatMs, total };
    const saved = Math.max(0, catalog - sent);
    const tokens = { sent, catalog, saved, savedPercent: catalog === 0 ? 0 : Math.round((saved / catalog) * 10_000) / 100, tokenizer: TOKENIZER_NAME };

    let eventId: string | undefined;
    if (request.log) {
      const id = randomUUID();
      const event: SelectionEventWrite = {
        id,
        queryText: request.query,
        pageContext: page,
        orgId: context.orgId ?? null,
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
        createdAt: parts.clock(),
      };
      try {
        // Issue #23: an id is returned only once its event is durable (journaled or a row).
        await parts.events.record(event);
        eventId = id;
        parts.outcomes.remember(id, {
          contextKey,
          tools: kept.map((item) => ({ id: item.tool.id, qualifiedName: item.tool.qualifiedName })),
          request: { query: request.query, orgId: context.orgId ?? null, userId: context.userId ?? null, sessionId: context.sessionId ?? null },
        });
      } catch (error) {
        // Logging is feedback, not the answer: the tools still go out, without an id to report on.
        parts.logger.error({ err: error }, 'selection: could not log the selection event');
        warnings.push('selection event not logged: outcomes cannot be reported for this selection');
      }
    }

    return {
      tools: selectedTools(kept),
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
  };
}
