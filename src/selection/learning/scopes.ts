/**
 * @module selection/learning/scopes
 * The per-organisation overlays in memory. A search never waits for them: `current` returns
 * what is built (or nothing) and schedules a load when a scope is missing or older than
 * `refreshMs` (other replicas' learning). Updates are differential: a capture's written rows
 * and trimmed ids are applied to the scope's rows in memory (no re-read), only texts not seen
 * before are embedded (vectors cached by example id and text), then the matrix is rebuilt.
 * An overlay depends only on its rows' id, tool, contributor and text, so a capture that only
 * refreshed an example (a repeat bumps its hit count and recency) and a periodic re-read that
 * found the same rows keep the overlay as built (issue #28: under a steady stream of repeated
 * requests nearly every capture is a refresh, and each rebuilt the scope's matrix and agreement
 * weights, ~5 % of the server's allocation under the 150-session bench).
 */
import type { Logger } from '../../core/logger.ts';
import type { Database } from '../../store/database.ts';
import type { Embedder } from '../../retrieval/embedders/embedder.ts';
import { loadScopeExamples, type LearnedExampleRow } from '../../store/repositories/learned-examples.ts';
import { terms } from '../../retrieval/tokenizer.ts';
import { buildOverlay, contentTerms, type OverlayExample, type OverlayScoring, type ScopeOverlay } from './overlay.ts';

type ScopeRow = Pick<LearnedExampleRow, 'id' | 'toolId' | 'contributor' | 'text'>;

/** The scopes' overlays and their (re)loading. */
export interface ScopeOverlays {
  /** The overlay as built now; schedules a (re)load when missing or stale. */
  current(orgScope: string): ScopeOverlay | undefined;
  /** Rebuilds a scope from the database now (after an admin write or retention). */
  reload(orgScope: string): Promise<void>;
  /** Applies captured rows and trimmed ids to a scope held in memory (a scope not held loads on its next search). */
  apply(orgScope: string, written: readonly ScopeRow[], removed: ReadonlySet<string>): Promise<void>;
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
  /** Resolves once the scoring's floors are calibrated; awaited before an overlay is built from examples. */
  calibrated: () => Promise<void>;
}): ScopeOverlays {
  const held = new Map<string, { rows: Map<string, ScopeRow>; overlay: ScopeOverlay; at: number }>();
  const requested = new Set<string>();
  // Example vectors by `id + text`: an example's vector depends only on its own text.
  let vectors = new Map<string, Float32Array>();
  const keyOf = (row: ScopeRow) => `${row.id}\u0000${row.text}`;

  async function build(orgScope: string, rows: Map<string, ScopeRow>, at: number): Promise<void> {
    if (rows.size > 0) await deps.calibrated(); // an empty overlay reads no floor
    const missing = [...rows.values()].filter((row) => !vectors.has(keyOf(row)));
    for (let start = 0; start < missing.length; start += deps.embedder.maxBatchSize) {
      const batch = missing.slice(start, start + deps.embedder.maxBatchSize);
      const embedded = await deps.embedder.embed(batch.map((row) => row.text));
      batch.forEach((row, i) => vectors.set(keyOf(row), embedded[i]!));
    }
    const examples: OverlayExample[] = [...rows.values()].map((row) => ({ id: row.id, toolId: row.toolId, contributor: row.contributor, vector: vectors.get(keyOf(row))!, terms: contentTerms(row.text), fieldTerms: terms(row.text) }));
    held.set(orgScope, { rows, overlay: buildOverlay(examples, deps.embedder.dimensions, deps.scoring), at });
    // Bound the cache: past twice what the scopes hold, keep only the held examples' vectors.
    if (vectors.size > 2 * totalExamples() + 1024) vectors = retainHeld();
  }

  async function reload(orgScope: string): Promise<void> {
    const rows = new Map((await loadScopeExamples(deps.db, orgScope)).map((row) => [row.id, row] as const));
    const entry = held.get(orgScope);
    if (entry && sameRows(entry.rows, rows)) {
      held.set(orgScope, { ...entry, at: deps.now() });
      return;
    }
    await build(orgScope, rows, deps.now());
  }

  function totalExamples(): number {
    let total = 0;
    for (const { rows } of held.values()) total += rows.size;
    return total;
  }

  function retainHeld(): Map<string, Float32Array> {
    const keep = new Map<string, Float32Array>();
    for (const { rows } of held.values()) for (const row of rows.values()) keep.set(keyOf(row), vectors.get(keyOf(row))!);
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
      const entry = held.get(orgScope);
      if (!entry || deps.now() - entry.at > deps.refreshMs) requestLoad(orgScope);
      return entry?.overlay;
    },
    reload,
    async apply(orgScope, written, removed) {
      const entry = held.get(orgScope);
      if (!entry || !changesRows(entry.rows, written, removed)) return;
      const rows = new Map(entry.rows);
      for (const row of written) rows.set(row.id, { id: row.id, toolId: row.toolId, contributor: row.contributor, text: row.text });
      for (const id of removed) rows.delete(id);
      await build(orgScope, rows, entry.at);
    },
    async reloadAll() {
      for (const orgScope of [...held.keys()]) await reload(orgScope);
    },
    stats: () => ({ scopes: held.size, examples: totalExamples(), vectorsCached: vectors.size }),
  };
}

/** Whether a row holds what an overlay is built from (id, tool, contributor, text) the same as another. */
function sameRow(a: ScopeRow | undefined, b: ScopeRow): boolean {
  return a !== undefined && a.id === b.id && a.toolId === b.toolId && a.contributor === b.contributor && a.text === b.text;
}

/** Whether two scopes' rows build the same overlay. */
function sameRows(held: ReadonlyMap<string, ScopeRow>, loaded: ReadonlyMap<string, ScopeRow>): boolean {
  if (held.size !== loaded.size) return false;
  for (const row of loaded.values()) if (!sameRow(held.get(row.id), row)) return false;
  return true;
}

/** Whether applying written rows and removed ids to a scope's rows changes what its overlay is built from. */
function changesRows(rows: ReadonlyMap<string, ScopeRow>, written: readonly ScopeRow[], removed: ReadonlySet<string>): boolean {
  for (const id of removed) if (rows.has(id)) return true;
  return written.some((row) => !sameRow(rows.get(row.id), row));
}
