/**
 * @module selection/analytics
 * Seed 001 §8.4 analytics as service functions: metrics, heatmap, accuracy (daily hit rate)
 * and embedding drift (§8.6). Every function takes an organisation scope: admins read every
 * organisation, other callers only their own (the HTTP front decides which); a tenant caller
 * also passes a `TenantScope`, so it reads only its workspace's events and only rows about
 * tools it may see (issue #18: drift listed a denied plugin's tools).
 */
import { z } from 'zod';
import { parseOrThrow } from '../core/validation.ts';
import type { Queryable } from '../store/database.ts';
import {
  embeddingDrift,
  selectionAccuracy,
  selectionHeatmap,
  selectionMetrics,
  type AccuracyDay,
  type DriftRow,
  type HeatmapCell,
  type SelectionMetricsRow,
} from '../store/repositories/selection-events.ts';

/** The window and scope of an analytics read. */
export const analyticsQuerySchema = z.strictObject({
  /** How many days back from now (default 7, at most 366). */
  days: z.coerce.number().int().min(1).max(366).default(7),
  /** Most rows for heatmap and drift (default 100). */
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Drift: an embedding older than this many days counts as drifted (seed 001 §8.6: 7). */
  maxAgeDays: z.coerce.number().int().min(1).max(3_650).default(7),
});
/** An analytics query as a caller writes it. */
export type AnalyticsQuery = z.input<typeof analyticsQuerySchema>;

/** Which organisation's data: undefined = all (admin); null = data without an organisation; text = that one. */
export type OrgScope = string | null | undefined;

/** What a tenant caller is further restricted to (absent: no restriction beyond the organisation). */
export interface TenantScope {
  /** Only events of this workspace id. */
  workspaceId: string;
  /** Only heatmap cells and drift rows of these tool ids. */
  toolIds: ReadonlySet<string>;
}

/** The analytics functions. */
export interface SelectionAnalytics {
  metrics(query?: AnalyticsQuery, orgScope?: OrgScope, tenant?: TenantScope): Promise<SelectionMetricsRow & { days: number }>;
  heatmap(query?: AnalyticsQuery, orgScope?: OrgScope, tenant?: TenantScope): Promise<{ days: number; cells: HeatmapCell[] }>;
  accuracy(query?: AnalyticsQuery, orgScope?: OrgScope, tenant?: TenantScope): Promise<{ days: number; trend: AccuracyDay[] }>;
  drift(query?: AnalyticsQuery, orgScope?: OrgScope, tenant?: TenantScope): Promise<{ maxAgeDays: number; tools: DriftRow[] }>;
}

/**
 * How long a selection without an outcome counts as pending (then `unreported`): an MCP session
 * reports within its outcome window (5 minutes by default); an API or CLI caller that has not
 * reported within an hour is not going to.
 */
export const OUTCOME_PENDING_MS = 60 * 60_000;

/** Creates the analytics over `db`; `beforeRead` lets the engine flush queued events first. */
export function createSelectionAnalytics(options: { db: Queryable; clock?: () => Date; beforeRead?: () => Promise<void> }): SelectionAnalytics {
  const clock = options.clock ?? (() => new Date());
  const prepare = async (query: AnalyticsQuery | undefined) => {
    const parsed = parseOrThrow(analyticsQuerySchema, query ?? {}, 'analytics query');
    await options.beforeRead?.();
    const until = clock();
    // `until` is exclusive; one millisecond ahead keeps an event logged at this instant.
    return { parsed, window: { since: new Date(until.getTime() - parsed.days * 86_400_000), until: new Date(until.getTime() + 1) } };
  };
  const toolIdsOf = (tenant: TenantScope | undefined) => (tenant === undefined ? undefined : [...tenant.toolIds]);
  return {
    async metrics(query, orgScope, tenant) {
      const { parsed, window } = await prepare(query);
      const pendingSince = new Date(clock().getTime() - OUTCOME_PENDING_MS);
      return { days: parsed.days, ...(await selectionMetrics(options.db, { ...window, orgId: orgScope, workspaceId: tenant?.workspaceId }, pendingSince)) };
    },
    async heatmap(query, orgScope, tenant) {
      const { parsed, window } = await prepare(query);
      const filter = { ...window, orgId: orgScope, workspaceId: tenant?.workspaceId, toolIds: toolIdsOf(tenant) };
      return { days: parsed.days, cells: await selectionHeatmap(options.db, filter, parsed.limit) };
    },
    async accuracy(query, orgScope, tenant) {
      const { parsed, window } = await prepare(query);
      return { days: parsed.days, trend: await selectionAccuracy(options.db, { ...window, orgId: orgScope, workspaceId: tenant?.workspaceId }) };
    },
    async drift(query, orgScope, tenant) {
      const { parsed } = await prepare(query);
      return {
        maxAgeDays: parsed.maxAgeDays,
        tools: await embeddingDrift(options.db, { now: clock(), maxAgeDays: parsed.maxAgeDays, orgId: orgScope, limit: parsed.limit, toolIds: toolIdsOf(tenant) }),
      };
    },
  };
}
