/**
 * @module selection/learning/scopes
 * The per-organisation overlays in memory. A search never waits for them: `current` returns
 * what is built (or nothing) and schedules a load when a scope is missing or older than
 * `refreshMs` (other replicas' learning). Rebuilds are differential: example vectors are cached
 * by example id and text, so a new example embeds one text, not the scope.
 */
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import { loadScopeExamples } from '../../store/repositories/learned-examples.ts';
import { buildOverlay, contentTerms, type OverlayExample, type OverlayScoring, type ScopeOverlay } from './overlay.ts';

/** The scopes' overlays and their (re)loading. */
export interface ScopeOverlays {
  /** The overlay as built now; schedules a (re)load when missing or stale. */
  current(orgScope: string): ScopeOverlay | undefined;
  /** Rebuilds a scope from the database now (after a write). */
  reload(orgScope: string): Promise<void>;
  /** Rebuilds every scope held now (after a change that touches all of them). */
  reloadAll(): Promise<void>;
  /** Scopes and examples held. */
  stats(): { scopes: number; examples: number; vectorsCached: number };
}

/** Creates the overlay cache; `schedule` runs work on the learning queue. */
export function createScopeOverlays(deps: {
  db: Database;
  embedder: Embedder;
  scoring: OverlayScoring;
  refreshMs: number;
  now: () => number;
  logger: Logger;
  schedule: (task: () => Promise<void>) => void;
}): ScopeOverlays {
  const built = new Map<string, { overlay: ScopeOverlay; at: number }>();
  const requested = new Set<string>();
  // Example vectors by `id + text`: an example's vector depends only on its own text.
  let vectors = new Map<string, Float32Array>();

  async function reload(orgScope: string): Promise<void> {
    const rows = await loadScopeExamples(deps.db, orgScope);
    const keyOf = (row: { id: string; text: string }) => `${row.id}\u0000${row.text}`;
    const missing = rows.filter((row) => !vectors.has(keyOf(row)));
    for (let start = 0; start < missing.length; start += deps.embedder.maxBatchSize) {
      const batch = missing.slice(start, start + deps.embedder.maxBatchSize);
      const embedded = await deps.embedder.embed(batch.map((row) => row.text));
      batch.forEach((row, i) => vectors.set(keyOf(row), embedded[i]!));
    }
    const examples: OverlayExample[] = rows.map((row) => ({ id: row.id, toolId: row.toolId, contributor: row.contributor, vector: vectors.get(keyOf(row))!, terms: contentTerms(row.text) }));
    built.set(orgScope, { overlay: buildOverlay(examples, deps.embedder.dimensions, deps.scoring), at: deps.now() });
    // Bound the cache: past twice what the scopes hold, keep only this scope's vectors (the
    // others re-embed on their next reload; deleted, trimmed and expired examples go for good).
    if (vectors.size > 2 * totalExamples() + 1024) vectors = retainHeld(vectors, rows, keyOf);
  }

  function totalExamples(): number {
    let total = 0;
    for (const { overlay } of built.values()) total += overlay.size;
    return total;
  }

  function retainHeld(all: Map<string, Float32Array>, rows: readonly { id: string; text: string }[], keyOf: (row: { id: string; text: string }) => string): Map<string, Float32Array> {
    const keep = new Map<string, Float32Array>();
    for (const row of rows) keep.set(keyOf(row), all.get(keyOf(row))!);
    return keep;
  }

  function requestLoad(orgScope: string): void {
    if (requested.has(orgScope)) return;
    requested.add(orgScope);
    deps.schedule(async () => {
      try {
        await reload(orgScope);
      } catch (error) {
        deps.logger.warn({ err: error, orgScope }, 'learning: could not load learned examples; ranking without them');
      } finally {
        requested.delete(orgScope);
      }
    });
  }

  return {
    current(orgScope) {
      const entry = built.get(orgScope);
      if (!entry || deps.now() - entry.at > deps.refreshMs) requestLoad(orgScope);
      return entry?.overlay;
    },
    reload,
    async reloadAll() {
      for (const orgScope of [...built.keys()]) await reload(orgScope);
    },
    stats: () => ({ scopes: built.size, examples: totalExamples(), vectorsCached: vectors.size }),
  };
}
