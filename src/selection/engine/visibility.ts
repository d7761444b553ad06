/**
 * @module selection/engine/visibility
 * Pipeline stages 1 and 2, the one place that decides which tools a context may see: the
 * compiled visibility policy, the workspace / project scope and the API key's binding, the
 * plugins in effect there and organisation-private tools. Both stages fail closed: an error
 * here fails the selection. Each step is cached (seed 001 §4.3) and keyed so the warm path
 * does no O(catalog) work.
 */
import type { z } from 'zod';
import { QuiverError, ErrorCodes, notFound } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import { findProject, findWorkspace, type SelectionCandidate } from '../../store/repositories/candidates.ts';
import { effectivePluginIds } from '../../store/repositories/enablement.ts';
import { listVisibilityRules } from '../../store/repositories/visibility-rules.ts';
import { LruTtlCache } from '../lru-cache.ts';
import { compilePolicy, policyCacheKey, type CompiledPolicy, type PolicyRule } from '../policy.ts';
import { createSingleFlight, type SingleFlight } from '../single-flight.ts';
import type { CacheKind } from '../invalidation.ts';
import type { CatalogState } from './catalog.ts';
import type { CatalogSnapshot, Scope, SelectOptions, VisibleSet, selectionContextSchema } from './types.ts';

/** A security stage that could not be read: the selection is refused. */
export function unavailable(stage: string, cause: unknown): QuiverError {
  return new QuiverError(ErrorCodes.unavailable, `selection refused: ${stage} could not be read (security stages fail closed)`, { cause, details: { stage } });
}

/** What stages 1 and 2 decided, with their timings. */
export interface ResolvedVisible {
  policyMs: number;
  candidatesMs: number;
  current: CatalogSnapshot;
  scope: Scope;
  visible: { key: string; set: VisibleSet; policyKey: string };
}

/** The visibility stages and their caches. */
export interface Visibility {
  /** Stages 1 and 2 for a parsed context; `lap` times each stage. */
  resolve(
    context: z.output<typeof selectionContextSchema>,
    binding: SelectOptions['binding'],
    warnings: string[],
    lap?: () => number,
  ): Promise<ResolvedVisible>;
  /** Drops what a catalog change of this kind makes stale. */
  invalidate(kind: CacheKind): void;
  /** A new catalog snapshot: the scoped and visible tool lists are rebuilt. */
  onCatalogReload(): void;
  /** The caches, for `cacheStats`. */
  readonly caches: { policy: LruTtlCache<unknown>; toolList: LruTtlCache<unknown>; scope: LruTtlCache<unknown>; visible: LruTtlCache<unknown> };
}

/** The workspace / project a request names, resolved and cached; unknown ones are errors (fail closed). */
function createScopeResolver(db: Database, scopeCache: LruTtlCache<Scope>, flight: SingleFlight<Scope>, defaultWorkspace: string) {
  return async function resolveScope(workspace: string | null | undefined, project: string | null | undefined): Promise<Scope> {
    const key = JSON.stringify([workspace ?? null, project ?? null]);
    const cached = scopeCache.get(key);
    if (cached) return cached;
    return flight.run(key, () => loadScope(workspace, project), (scope) => scopeCache.set(key, scope));
  };

  async function loadScope(workspace: string | null | undefined, project: string | null | undefined): Promise<Scope> {
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
    return { workspaceId: ws.id, projectId };
  }
}

/** Creates the visibility stages over the catalog state. */
export function createVisibility(options: {
  db: Database;
  catalog: CatalogState;
  logger: Logger;
  now: () => number;
  ttl: { policyMs: number; toolsMs: number };
  tierOrder: readonly string[];
  defaultWorkspace: string;
}): Visibility {
  const { db, catalog, logger, now, ttl, tierOrder, defaultWorkspace } = options;
  const policyCache = new LruTtlCache<CompiledPolicy>({ maxEntries: 256, ttlMs: ttl.policyMs, now });
  const toolListCache = new LruTtlCache<SelectionCandidate[]>({ maxEntries: 128, ttlMs: ttl.toolsMs, now });
  const scopeCache = new LruTtlCache<Scope>({ maxEntries: 256, ttlMs: ttl.toolsMs, now });
  const visibleCache = new LruTtlCache<VisibleSet>({ maxEntries: 512, ttlMs: ttl.policyMs, now });
  // Concurrent misses share one database read; an invalidation starts them afresh.
  const scopeFlight = createSingleFlight<Scope>();
  const toolListFlight = createSingleFlight<SelectionCandidate[]>();
  let rulesSnapshot: { rules: PolicyRule[]; at: number } | undefined;
  const resolveScope = createScopeResolver(db, scopeCache, scopeFlight, defaultWorkspace);

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
    const tools = await toolListFlight.run(
      key,
      async () => {
        const enabled = new Set(await effectivePluginIds(db, scope));
        // Plugin tools only when their plugin is in effect here; org-private tools only for their org.
        return current.tools.filter((tool) => (tool.pluginId === null || enabled.has(tool.pluginId)) && (tool.orgId === null || tool.orgId === orgId));
      },
      (loaded) => toolListCache.set(key, loaded),
    );
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

  async function resolve(
    context: z.output<typeof selectionContextSchema>,
    binding: SelectOptions['binding'],
    warnings: string[],
    lap: () => number = () => 0,
  ): Promise<ResolvedVisible> {
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
      current = await catalog.get();
      scoped = await getScopedTools(current, scope, orgId);
    } catch (error) {
      throw unavailable('tool catalog or enablement', error);
    }
    const visible = getVisible(scoped.key, scoped.tools, policy, policyKey);
    const candidatesMs = lap();
    return { policyMs, candidatesMs, current, scope, visible: { ...visible, policyKey } };
  }

  return {
    resolve,
    invalidate(kind) {
      switch (kind) {
        case 'tools':
        case 'categories':
          toolListFlight.invalidate();
          toolListCache.clear();
          visibleCache.clear();
          break;
        case 'rules':
          rulesSnapshot = undefined;
          policyCache.clear();
          visibleCache.clear();
          break;
        case 'enablement':
          scopeFlight.invalidate();
          toolListFlight.invalidate();
          scopeCache.clear();
          toolListCache.clear();
          visibleCache.clear();
          break;
        case 'all':
          scopeFlight.invalidate();
          toolListFlight.invalidate();
          rulesSnapshot = undefined;
          for (const cache of [policyCache, toolListCache, scopeCache, visibleCache]) cache.clear();
          break;
        case 'mappings':
        case 'bandit':
          break;
      }
    },
    onCatalogReload() {
      toolListFlight.invalidate();
      toolListCache.clear();
      visibleCache.clear();
    },
    caches: { policy: policyCache, toolList: toolListCache, scope: scopeCache, visible: visibleCache },
  };
}
