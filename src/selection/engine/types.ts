/**
 * @module selection/engine/types
 * The selection engine's request schemas, public result types and the internal shapes its
 * parts share (catalog snapshot, visible set, page set, queued outcomes).
 */
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import type { BanditIncrement } from '../../store/repositories/bandit-stats.ts';
import type { SelectionOutcomeWrite } from '../../store/repositories/selection-outcomes.ts';
import type { RandomSource } from '../random.ts';
import type { SelectionRetrieval } from '../retrieval.ts';
import { PROVIDERS, type FormattedTool, type SelectionProvider } from '../provider-formats.ts';
import type { CacheKind } from '../invalidation.ts';
import type { SelectionAnalytics } from '../analytics.ts';
import type { EventDurability } from './event-log.ts';

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
  /** Called tools the caller's loop guard flagged (seed 004 §7): they count for the bandit, never as learned examples (issue #13). */
  flaggedTools: z.array(z.string().min(1).max(300)).max(100).optional(),
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
  /**
   * Tool ids this caller must not be offered although the context may see them (the gateway's
   * silent tier, an expert allow-list, tools needing client capabilities the caller did not
   * declare). They are left out before ranking, so `k` is filled from the rest and the logged
   * event lists only what was offered. Narrows, never widens, what visibility allows.
   */
  exclude?: ReadonlySet<string> | undefined;
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
  /**
   * Event batching: flush after this many ms (default 50) or this many events (default 200).
   * `durability` (issue #23): how a returned event id survives a crash — `journal` (a file in the
   * embedded data folder), `write-through` (the row before the answer; the default on PostgreSQL)
   * or `batched` (the default on PGlite without a journal: nothing durable before the write).
   */
  events?: { flushMs?: number; maxWaitMs?: number; batchSize?: number; maxQueue?: number; durability?: EventDurability };
  /** Subscribe to catalog-change notifications (default true). */
  listen?: boolean;
  /** Told of every committed outcome (learned example queries, issue #13); never on the search path. */
  outcomeObserver?: OutcomeObserver;
  /** Ranking factor (≤ 1) of a plugin's tools from its trust (issue #10); absent, every factor is 1. */
  trustFactor?: (pluginId: string) => number;
}

/** A committed outcome as the learning from use sees it (DESIGN §3.10). */
export interface OutcomeObservation {
  eventId: string;
  /** `gateway`: queued by the MCP gateway; `api`: reported through `recordOutcome`. */
  source: 'gateway' | 'api';
  /** The selection's request and who made it, when the engine still holds them (else read from the event). */
  request?: { query: string; orgId: string | null; userId: string | null; sessionId: string | null };
  /** Offered tools that were called. */
  calledToolIds: string[];
  success: boolean;
  /** Offered tools the caller's loop guard flagged. */
  flaggedToolIds: string[];
}

/** Receives committed outcomes; must not throw and must not block. */
export interface OutcomeObserver {
  observe(observation: OutcomeObservation): void;
  /** Resolves once every observation so far has taken effect (`SelectionEngine.flush` waits for it). */
  flush?(): Promise<void>;
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
  /**
   * Tokens of the MCP definition a gateway session shows for `tool` (`mcpDefinition`): the count
   * stored at sync (issue #28), else the tokenizer's, written back so the next process needs none.
   */
  definitionTokens?(tool: SelectionCandidate): number;
  /** Writes queued events and outcomes now, then waits for the outcome observer (learned examples rank after it). */
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

// ---- shapes the engine's parts share (not part of the public API) ----

/** Every active tool at one catalog signature; `version` grows with each reload. */
export interface CatalogSnapshot {
  version: number;
  signature: string;
  tools: SelectionCandidate[];
  byId: Map<string, SelectionCandidate>;
  checkedAt: number;
}

/** A resolved workspace and (optional) project. */
export interface Scope {
  workspaceId: string;
  projectId: string | null;
}

/** The tools a context may see, its pins, and its catalog token total per provider (memoised). */
export interface VisibleSet {
  tools: SelectionCandidate[];
  pins: SelectionCandidate[];
  catalogTokens: Map<SelectionProvider, number>;
}

/** What retrieval may return on a page (stage 3). */
export interface PageSet {
  /** Non-pinned tools retrieval may return. */
  retrievalIds: Set<string>;
  /** The same tools in catalog order (the fallback ranking). */
  ordered: SelectionCandidate[];
  filtered: boolean;
  warning?: string;
}

/** A tool in a provider's format with its token count. */
export interface FormattedEntry extends FormattedTool {
  tokens: number;
}

/** A tool a selection offered, as an outcome resolves it. */
export interface OfferedTool {
  id: string;
  qualifiedName: string;
}

/** What a logged selection offered: enough to resolve its outcome in memory. */
export interface OfferedEvent {
  contextKey: string;
  tools: OfferedTool[];
  /** The request, for the outcome observer (learned examples, issue #13). */
  request?: OutcomeObservation['request'];
}

/** An outcome waiting in the batch queue with the bandit increments it brings. */
export interface QueuedOutcome {
  write: SelectionOutcomeWrite;
  contextKey: string;
  increments: BanditIncrement[];
  /** What the outcome observer is told once the batch committed. */
  observation?: OutcomeObservation;
}

