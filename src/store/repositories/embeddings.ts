/**
 * @module store/repositories/embeddings
 * Tool vectors in pgvector (`tool_embeddings`, one row per tool and embedder model) and the
 * embedding lifecycle columns of `tools` (seed 001 §4.2: pending → current, stale after a
 * content change). Vectors travel as pgvector's text form `[x,y,…]`, which both engines
 * accept and return.
 */
import type { Queryable } from '../database.ts';

/** A stored vector. */
export interface StoredEmbedding {
  toolId: string;
  model: string;
  dimensions: number;
  embedding: Float32Array;
  /** The tool's content hash when the vector was computed. */
  contentHash: string;
  embeddedAt: Date;
}

/** What an embedder needs to know about a tool whose vector is pending or stale. */
export interface ToolToEmbed {
  id: string;
  name: string;
  description: string;
  summary: string | null;
  parameters: Record<string, unknown>;
  tags: string[];
  whenToUse: string[];
  whenNotToUse: string[];
  exampleQueries: string[];
  contentHash: string;
  /** Where the tool stands in the listing's order, to list the next page after it. */
  position: EmbedListPosition;
}

/** A place in the order of listToolsToEmbed: the tool's last change (exact, as the database prints it) and id. */
export interface EmbedListPosition {
  updatedAt: string;
  id: string;
}

/** A tool whose embedding is missing, not current or old (seed 001 §8.6). */
export interface EmbeddingDriftRow {
  id: string;
  name: string;
  embeddingStatus: string;
  lastEmbeddedAt: Date | null;
  daysSinceEmbed: number;
}

/** pgvector text form of a vector. */
export function vectorLiteral(vector: Float32Array): string {
  let text = '[';
  for (let i = 0; i < vector.length; i++) {
    if (i > 0) text += ',';
    const value = vector[i]!;
    text += Number.isFinite(value) ? String(value) : '0';
  }
  return `${text}]`;
}

/**
 * Decodes pgvector's binary form (`vector_send`: int16 dimensions, int16 unused, then big-endian
 * float4s) sent as base64 text. Reading 10,000 512-d vectors as text made ~5 million short
 * strings (`split(',')`) that the server's heap then held until V8's memory reducer ran
 * (issue #28); base64 is decoded natively into one buffer per vector.
 */
export function decodeVectorBase64(value: unknown): Float32Array {
  if (typeof value !== 'string') throw new Error(`unexpected vector value ${String(value).slice(0, 40)}`);
  const bytes = Buffer.from(value, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimensions = bytes.byteLength >= 4 ? view.getInt16(0) : -1;
  if (dimensions < 0 || bytes.byteLength !== 4 + dimensions * 4) throw new Error(`unexpected binary vector of ${bytes.byteLength} bytes`);
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = view.getFloat32(4 + i * 4);
  return vector;
}

const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));

/** Inserts or replaces the vectors of several tools for one model, in one statement. */
export async function upsertEmbeddings(
  db: Queryable,
  rows: readonly { toolId: string; model: string; embedding: Float32Array; contentHash: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  const payload = rows.map((row) => ({
    tool_id: row.toolId,
    model: row.model,
    dimensions: row.embedding.length,
    embedding: vectorLiteral(row.embedding),
    content_hash: row.contentHash,
  }));
  await db.query(
    `INSERT INTO tool_embeddings (tool_id, model, dimensions, embedding, content_hash, embedded_at)
     SELECT x.tool_id, x.model, x.dimensions, x.embedding::vector, x.content_hash, now()
     FROM jsonb_to_recordset($1::jsonb) AS x(tool_id uuid, model text, dimensions integer, embedding text, content_hash text)
     ON CONFLICT (tool_id, model) DO UPDATE
       SET dimensions = EXCLUDED.dimensions, embedding = EXCLUDED.embedding,
           content_hash = EXCLUDED.content_hash, embedded_at = EXCLUDED.embedded_at`,
    [JSON.stringify(payload)],
  );
}

/** Reads the vectors of one model, optionally for some tools only; by tool id. */
export async function getEmbeddings(db: Queryable, model: string, toolIds?: readonly string[]): Promise<Map<string, StoredEmbedding>> {
  const { rows } = await db.query<{
    tool_id: string;
    model: string;
    dimensions: number;
    embedding: unknown;
    content_hash: string;
    embedded_at: unknown;
  }>(
    `SELECT tool_id, model, dimensions, encode(vector_send(embedding), 'base64') AS embedding, content_hash, embedded_at
     FROM tool_embeddings WHERE model = $1 ${toolIds ? 'AND tool_id = ANY($2::uuid[])' : ''}`,
    toolIds ? [model, [...toolIds]] : [model],
  );
  return new Map(
    rows.map((row) => [
      row.tool_id,
      {
        toolId: row.tool_id,
        model: row.model,
        dimensions: row.dimensions,
        embedding: decodeVectorBase64(row.embedding),
        contentHash: row.content_hash.trim(),
        embeddedAt: toDate(row.embedded_at),
      },
    ]),
  );
}

/**
 * Live tools whose embedding status is 'pending' or 'stale', oldest change first, `limit` at a
 * time; `after` continues after a tool of the previous page (keyset), so a run over 10,000
 * pending tools reads each once. A tool changed since it was listed moves to the end of the
 * order (its `updated_at`), where the same run finds it again.
 */
export async function listToolsToEmbed(db: Queryable, limit: number, after?: EmbedListPosition): Promise<ToolToEmbed[]> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    description: string;
    function_summary: string | null;
    parameters_schema: Record<string, unknown>;
    tags: string[];
    when_to_use: string[];
    limitations: string[];
    example_queries: unknown;
    content_hash: string;
    position_at: string;
  }>(
    // The position's time travels as text: a JavaScript Date keeps milliseconds, and tools
    // synced together share one microsecond timestamp, so only the exact value pages right.
    `SELECT id, name, description, function_summary, parameters_schema, tags, when_to_use, limitations,
            example_queries, content_hash, updated_at::text AS position_at
     FROM tools
     WHERE deleted_at IS NULL AND embedding_status IN ('pending', 'stale')
       ${after ? 'AND (updated_at, id) > ($2::timestamptz, $3::uuid)' : ''}
     ORDER BY updated_at, id
     LIMIT $1`,
    after ? [limit, after.updatedAt, after.id] : [limit],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    summary: row.function_summary,
    parameters: row.parameters_schema,
    tags: row.tags,
    whenToUse: row.when_to_use,
    whenNotToUse: row.limitations,
    exampleQueries: Array.isArray(row.example_queries) ? row.example_queries.filter((q): q is string => typeof q === 'string') : [],
    contentHash: row.content_hash.trim(),
    position: { updatedAt: row.position_at, id: row.id },
  }));
}

/**
 * Marks tools 'current' with `last_embedded_at = now()`, but only where the content hash is
 * still the one that was embedded: a tool edited meanwhile stays stale. Returns the ids marked.
 */
export async function markEmbedded(db: Queryable, tools: readonly { id: string; contentHash: string }[]): Promise<string[]> {
  if (tools.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `UPDATE tools t SET embedding_status = 'current', last_embedded_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, content_hash text)
     WHERE t.id = x.id AND t.content_hash = x.content_hash AND t.deleted_at IS NULL
     RETURNING t.id`,
    [JSON.stringify(tools.map((tool) => ({ id: tool.id, content_hash: tool.contentHash })))],
  );
  return rows.map((row) => row.id);
}

/**
 * The drift query of seed 001 §8.6: active tools whose embedding is not current, was never
 * computed, or is older than `maxAgeDays` (default 7), most out of date first.
 */
export async function findEmbeddingDrift(db: Queryable, options: { maxAgeDays?: number } = {}): Promise<EmbeddingDriftRow[]> {
  const maxAgeDays = options.maxAgeDays ?? 7;
  const { rows } = await db.query<{ id: string; name: string; embedding_status: string; last_embedded_at: unknown; days_since_embed: number }>(
    `SELECT id, name, embedding_status, last_embedded_at,
            EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - COALESCE(last_embedded_at, '1970-01-01'::timestamptz))) / 86400.0 AS days_since_embed
     FROM tools
     WHERE deleted_at IS NULL AND status = 'active'
       AND (embedding_status <> 'current' OR last_embedded_at IS NULL
            OR last_embedded_at < CURRENT_TIMESTAMP - ($1::double precision * INTERVAL '1 day'))
     ORDER BY days_since_embed DESC, id`,
    [maxAgeDays],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    embeddingStatus: row.embedding_status,
    lastEmbeddedAt: row.last_embedded_at === null ? null : toDate(row.last_embedded_at),
    daysSinceEmbed: Number(row.days_since_embed),
  }));
}

/** Live tools by embedding status (`pending`, `stale`, `current`, …). */
export async function countEmbeddingStatuses(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ embedding_status: string; n: number }>(
    `SELECT embedding_status, count(*)::int AS n FROM tools WHERE deleted_at IS NULL GROUP BY embedding_status ORDER BY embedding_status`,
  );
  return Object.fromEntries(rows.map((row) => [row.embedding_status, Number(row.n)]));
}

/**
 * Marks 'stale' every live tool that is 'current' but has no vector of `model`, or every
 * current tool when `all` is set (e.g. after switching embedders); returns how many.
 */
export async function markStaleForModel(db: Queryable, model: string, options: { all?: boolean } = {}): Promise<number> {
  const result = await db.query(
    `UPDATE tools t SET embedding_status = 'stale'
     WHERE t.deleted_at IS NULL AND t.embedding_status = 'current'
       AND ($2::boolean OR NOT EXISTS (SELECT 1 FROM tool_embeddings e WHERE e.tool_id = t.id AND e.model = $1))`,
    [model, options.all === true],
  );
  return result.affectedRows;
}
