/**
 * @module retrieval/embedding-sync
 * Keeps pgvector in step with the catalog (seed 001 §4.2, §6.10, §8.6): embeds only the
 * tools whose embedding status is 'pending' or 'stale', stores their vectors under the
 * embedder's modelId, and marks them 'current'. A tool edited while it was being embedded
 * keeps its new hash and stays stale for the next run. An embedder failure leaves the
 * statuses alone and is reported, never thrown past the batch (fail open, DESIGN §3.4).
 */
import type { Database } from '../store/database.ts';
import {
  findEmbeddingDrift,
  getEmbeddings,
  listToolsToEmbed,
  markEmbedded,
  upsertEmbeddings,
  type EmbedListPosition,
  type EmbeddingDriftRow,
  type ToolToEmbed,
} from '../store/repositories/embeddings.ts';
import type { RetrievalDocument } from './document.ts';
import type { Embedder } from './embedders/embedder.ts';
import { embedDocuments } from './tool2vec.ts';

/** What a recompute run did. */
export interface RecomputeResult {
  /** Tool ids embedded and marked current. */
  embedded: string[];
  /** Tools embedded but changed meanwhile (left stale). */
  changedMeanwhile: string[];
  warnings: string[];
}

/** The retrieval view of a stored tool. */
export function toolToDocument(tool: ToolToEmbed): RetrievalDocument {
  return {
    id: tool.id,
    name: tool.name,
    description: tool.description,
    ...(tool.summary ? { summary: tool.summary } : {}),
    parameters: tool.parameters,
    tags: tool.tags,
    whenToUse: tool.whenToUse,
    whenNotToUse: tool.whenNotToUse,
    exampleQueries: tool.exampleQueries,
  };
}

/**
 * Embeds every pending or stale tool in batches of `batchSize` (default 256) and marks it
 * current. Returns what was done; an embedder error stops the run with a warning.
 */
export async function recomputeStale(
  db: Database,
  embedder: Embedder,
  options: { batchSize?: number; textShare?: number; signal?: AbortSignal } = {},
): Promise<RecomputeResult> {
  const batchSize = Math.max(1, options.batchSize ?? 256);
  const result: RecomputeResult = { embedded: [], changedMeanwhile: [], warnings: [] };
  // Each tool is tried once per run: one changed meanwhile comes back later in the listing's
  // order and is left for the run its change queued. Before the listing paged by position it
  // re-read every tool tried so far on each batch (10,000 pending tools: ~10x the rows read).
  const attempted = new Set<string>();
  let after: EmbedListPosition | undefined;
  for (;;) {
    const page = await listToolsToEmbed(db, batchSize, after);
    if (page.length === 0) return result;
    after = page[page.length - 1]!.position;
    const tools = page.filter((tool) => !attempted.has(tool.id));
    if (tools.length === 0) continue;
    for (const tool of tools) attempted.add(tool.id);
    let vectors: Float32Array[];
    try {
      vectors = await embedDocuments(embedder, tools.map(toolToDocument), {
        ...(options.textShare !== undefined ? { textShare: options.textShare } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      result.warnings.push(`embedder ${embedder.modelId} failed on ${tools.length} tool(s), left pending/stale: ${(error as Error).message}`);
      return result;
    }
    const marked = await db.transaction(async (tx) => {
      await upsertEmbeddings(
        tx,
        tools.map((tool, i) => ({ toolId: tool.id, model: embedder.modelId, embedding: vectors[i]!, contentHash: tool.contentHash })),
      );
      return markEmbedded(tx, tools);
    });
    const markedSet = new Set(marked);
    for (const tool of tools) (markedSet.has(tool.id) ? result.embedded : result.changedMeanwhile).push(tool.id);
  }
}

/** Stored vectors of current tools for an embedder, ready for `RetrievalIndex.build({vectors})`. */
export async function loadVectors(db: Database, embedder: Embedder, toolIds?: readonly string[]): Promise<Map<string, Float32Array>> {
  const stored = await getEmbeddings(db, embedder.modelId, toolIds);
  const vectors = new Map<string, Float32Array>();
  for (const [id, row] of stored) if (row.dimensions === embedder.dimensions || embedder.dimensions === 0) vectors.set(id, row.embedding);
  return vectors;
}

/** Tools whose embeddings drifted (seed 001 §8.6). */
export function embeddingDrift(db: Database, options: { maxAgeDays?: number } = {}): Promise<EmbeddingDriftRow[]> {
  return findEmbeddingDrift(db, options);
}
