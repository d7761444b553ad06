/**
 * @module selection/engine/catalog
 * The engine's catalog snapshot (every active tool, frozen, reloaded when the catalog signature
 * changes or an invalidation forces it) and the retrieval index kept in step with it: small
 * changes are upserted / removed, larger ones rebuild the index.
 */
import { catalogSignature, listActiveCandidates, type SelectionCandidate } from '../../store/repositories/candidates.ts';
import type { Database } from '../../store/database.ts';
import type { Logger } from '../../core/logger.ts';
import type { CacheKind } from '../invalidation.ts';
import type { RetrievalDocument, SelectionRetrieval } from '../retrieval.ts';
import type { CatalogSnapshot } from './types.ts';

/** Freezes a value and everything it holds (shared tool parameters and schemas are never mutated). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value as Record<string, unknown>)) deepFreeze(member);
  }
  return value;
}

/**
 * `tool` as read again, holding the previous snapshot's copies of its content when the content
 * hash says it did not change (name, description, parameters, summary, tags, when to use / not,
 * example queries: what `toolContentHash` covers, as differential sync relies on). The retrieval
 * index keeps the documents it was given and re-indexes only changed tools, so without this each
 * reload left every unchanged tool's schema and texts in memory twice, the index's copy and the
 * new snapshot's (issue #28: the heap of `quiver serve` with 10,000 tools held 20,213 parameter
 * objects). Otherwise its parameters are frozen: they are shared from here on, never mutated.
 */
export function shareUnchanged(tool: SelectionCandidate, before: SelectionCandidate | undefined): SelectionCandidate {
  if (before === undefined || before.contentHash !== tool.contentHash || before.name !== tool.name) {
    deepFreeze(tool.parameters);
    return tool;
  }
  return {
    ...tool,
    // The same text (a fresh string per read), so the index's documents and this tool share one.
    qualifiedName: before.qualifiedName === tool.qualifiedName ? before.qualifiedName : tool.qualifiedName,
    description: before.description,
    parameters: before.parameters,
    summary: before.summary,
    tags: before.tags,
    whenToUse: before.whenToUse,
    whenNotToUse: before.whenNotToUse,
    exampleQueries: before.exampleQueries,
  };
}

/** The retrieval document of a tool: its text plus display, category and plugin names. */
export function toDocument(tool: SelectionCandidate): RetrievalDocument {
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
    actionHints: actionHints(tool.annotations),
  };
}

/** The MCP annotations retrieval's action intent reads (only booleans; anything else is unknown). */
function actionHints(annotations: Record<string, unknown> | null): RetrievalDocument['actionHints'] {
  const readOnly = annotations?.['readOnlyHint'];
  const destructive = annotations?.['destructiveHint'];
  return {
    readOnly: typeof readOnly === 'boolean' ? readOnly : undefined,
    destructive: typeof destructive === 'boolean' ? destructive : undefined,
  };
}

/** What makes a tool's retrieval document differ: content, name, category and the action hints (not in the content hash). */
export function documentSignature(tool: SelectionCandidate): string {
  const hints = actionHints(tool.annotations);
  return `${tool.contentHash}|${tool.qualifiedName}|${tool.categoryName ?? ''}|${tool.displayName ?? ''}|${hints?.readOnly ?? ''}|${hints?.destructive ?? ''}`;
}

/** The catalog snapshot and its retrieval index. */
export interface CatalogState {
  /** The current snapshot (re-checked against the catalog signature once per `toolsMs`). */
  get(): Promise<CatalogSnapshot>;
  /** Brings the retrieval index to `current` (concurrent callers share one sync). */
  ensureIndex(current: CatalogSnapshot): Promise<void>;
  /** Forces the next `get` to reload on catalog changes. */
  invalidate(kind: CacheKind): void;
}

/** Creates the catalog state; `onReload` runs when a new snapshot replaces the old one. */
export function createCatalogState(options: {
  db: Database;
  retrieval: SelectionRetrieval;
  toolsMs: number;
  now: () => number;
  onReload: () => void;
  /** Read beside each new snapshot's tools (the stored token counts); must not throw. */
  withSnapshot?: () => Promise<void>;
  /** Hears a background re-check that failed (the snapshot keeps serving until 2 x toolsMs). */
  logger?: Pick<Logger, 'warn'>;
}): CatalogState {
  const { db, retrieval, toolsMs, now, onReload } = options;
  let snapshot: CatalogSnapshot | undefined;
  // Invalidations so far, the count the snapshot was read under, and the count a running load
  // started under. The snapshot is served only while no invalidation came after its read, and a
  // caller that arrives after an invalidation waits for a load started after it, even while that
  // load runs: this process sees its own committed writes at once (other replicas on NOTIFY).
  let invalidations = 0;
  let snapshotBasis = -1;
  let snapshotLoad: { promise: Promise<CatalogSnapshot>; startedAt: number } | undefined;
  let snapshotVersion = 0;
  // The tools the retrieval index was given (the byId map of the snapshot it matches, so no copy:
  // their signatures are computed when a sync compares them, not kept, issue #28) and that version.
  let indexed: ReadonlyMap<string, SelectionCandidate> | undefined;
  let indexedVersion = -1;
  let indexLoad: Promise<void> | undefined;

  /** Reads the catalog under invalidation count `basis` (the count when this load was started). */
  async function loadSnapshot(basis: number): Promise<CatalogSnapshot> {
    // An invalidation since the snapshot was read forces a reload: the signature misses changes
    // that leave the tool and plugin rows as they were (a quarantine lives in tool_pins).
    const forced = snapshot === undefined || snapshotBasis !== basis;
    const signature = await catalogSignature(db);
    if (snapshot && !forced && signature === snapshot.signature) {
      snapshot.checkedAt = now();
      return snapshot;
    }
    const previous = snapshot?.byId;
    const [candidates] = await Promise.all([listActiveCandidates(db), options.withSnapshot?.()]);
    const tools = candidates.map((tool) => shareUnchanged(tool, previous?.get(tool.id)));
    snapshot = { version: ++snapshotVersion, signature, tools, byId: new Map(tools.map((tool) => [tool.id, tool])), checkedAt: now() };
    snapshotBasis = basis;
    onReload();
    return snapshot;
  }

  async function syncIndex(current: CatalogSnapshot): Promise<void> {
    const next = current.byId;
    if (indexed !== undefined && retrieval.upsert && retrieval.remove) {
      const held = indexed;
      const changed = current.tools.filter((tool) => {
        const before = held.get(tool.id);
        return before === undefined || documentSignature(before) !== documentSignature(tool);
      });
      const removed = [...held.keys()].filter((id) => !next.has(id));
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

  /** The load running for the latest invalidation, or a new one queued after any other. */
  function load(): Promise<CatalogSnapshot> {
    if (snapshotLoad !== undefined && snapshotLoad.startedAt === invalidations) return snapshotLoad.promise;
    // No load, or one that began before the latest invalidation: start one after the one running.
    const previous = snapshotLoad?.promise.catch(() => undefined);
    const basis = invalidations;
    const started = { startedAt: basis, promise: (previous ?? Promise.resolve()).then(() => loadSnapshot(basis)) };
    snapshotLoad = started;
    void started.promise.finally(() => {
      if (snapshotLoad === started) snapshotLoad = undefined;
    }).catch(() => undefined);
    return started.promise;
  }

  return {
    async get() {
      if (snapshot && snapshotBasis === invalidations) {
        const age = now() - snapshot.checkedAt;
        if (age < toolsMs) return snapshot;
        // Issue #28: the periodic re-check against the signature (a backstop: this process's own
        // writes invalidate at once, other replicas' arrive by NOTIFY) runs behind while the
        // snapshot serves, for up to another toolsMs. Every selection used to wait for that read,
        // which on the embedded store queues behind the batched writes of the load it serves.
        if (age < 2 * toolsMs) {
          void load().catch((error: unknown) => options.logger?.warn({ err: error }, 'selection: re-checking the catalog failed; serving the last snapshot'));
          return snapshot;
        }
      }
      return load();
    },
    async ensureIndex(current) {
      while (indexedVersion !== current.version) {
        indexLoad ??= syncIndex(current).finally(() => {
          indexLoad = undefined;
        });
        await indexLoad;
        if (snapshot !== current) return;
      }
    },
    invalidate(kind) {
      if (kind === 'tools' || kind === 'categories' || kind === 'all') invalidations += 1;
    },
  };
}
