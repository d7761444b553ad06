/**
 * @module intelligence/repository
 * The tables of migration 0062: the last generated document of each plugin (with provenance,
 * the input hashes of each source and each source's own result, so an unchanged source is
 * reused) and the LLM reply cache keyed by the hash of the request's inputs.
 */
import type { Queryable } from '../store/database.ts';
import { jsonParam, timeParam, toDate } from '../store/repositories/mapping.ts';
import type { JsonObject, LlmUsage, Provenance, SourceResult } from './types.ts';

/** A stored generation. */
export interface GenerationRecord {
  /** A new id for every stored generation (migration 0071). */
  id: string;
  pluginId: string;
  pluginName: string;
  document: JsonObject;
  provenance: Provenance;
  inputHashes: Record<string, string>;
  contentHash: string;
  sources: SourceResult[];
  warnings: string[];
  llmUsage: LlmUsage | null;
  /** Example requests this generation added to the catalog tools (so a later one can replace them). */
  appliedExamples: Record<string, string[]>;
  durationMs: number;
  generatedAt: Date;
  /** Review state: a new generation is a candidate until accepted or rejected. */
  review: 'candidate' | 'accepted' | 'rejected';
  reviewedBy: string | null;
  reviewedAt: Date | null;
}

interface GenerationRow {
  id: string;
  review: GenerationRecord['review'];
  reviewed_by: string | null;
  reviewed_at: unknown;
  plugin_id: string;
  plugin_name: string;
  document: JsonObject;
  provenance: Provenance;
  input_hashes: Record<string, string>;
  content_hash: string;
  sources: SourceResult[];
  warnings: string[];
  llm_usage: LlmUsage | null;
  applied_examples: Record<string, string[]>;
  duration_ms: number;
  generated_at: unknown;
}

const COLUMNS = `g.id, g.review, g.reviewed_by, g.reviewed_at, g.plugin_id, p.name AS plugin_name, g.document, g.provenance, g.input_hashes, g.content_hash, g.sources, g.warnings,
  g.llm_usage, g.applied_examples, g.duration_ms, g.generated_at`;

function toRecord(row: GenerationRow): GenerationRecord {
  return {
    id: row.id,
    review: row.review,
    reviewedBy: row.reviewed_by,
    reviewedAt: row.reviewed_at === null ? null : toDate(row.reviewed_at),
    pluginId: row.plugin_id,
    pluginName: row.plugin_name,
    document: row.document,
    provenance: row.provenance,
    inputHashes: row.input_hashes,
    contentHash: row.content_hash.trim(),
    sources: row.sources,
    warnings: row.warnings,
    llmUsage: row.llm_usage,
    appliedExamples: row.applied_examples,
    durationMs: row.duration_ms,
    generatedAt: toDate(row.generated_at),
  };
}

/** The last generation of a plugin. */
export async function findGeneration(db: Queryable, pluginId: string): Promise<GenerationRecord | undefined> {
  const { rows } = await db.query<GenerationRow>(`SELECT ${COLUMNS} FROM pid_generations g JOIN plugins p ON p.id = g.plugin_id WHERE g.plugin_id = $1`, [pluginId]);
  return rows[0] === undefined ? undefined : toRecord(rows[0]);
}

/** Creates or replaces the generation of a plugin. */
export async function upsertGeneration(db: Queryable, record: Omit<GenerationRecord, 'id' | 'pluginName' | 'generatedAt' | 'review' | 'reviewedBy' | 'reviewedAt'>, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO pid_generations (plugin_id, document, provenance, input_hashes, content_hash, sources, warnings, llm_usage, applied_examples, duration_ms, generated_at)
     VALUES ($1, $2::jsonb, $3::jsonb, $4::jsonb, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11)
     ON CONFLICT (plugin_id) DO UPDATE SET document = EXCLUDED.document, provenance = EXCLUDED.provenance, input_hashes = EXCLUDED.input_hashes,
       content_hash = EXCLUDED.content_hash, sources = EXCLUDED.sources, warnings = EXCLUDED.warnings, llm_usage = EXCLUDED.llm_usage,
       applied_examples = EXCLUDED.applied_examples, duration_ms = EXCLUDED.duration_ms, generated_at = EXCLUDED.generated_at,
       id = gen_random_uuid(), review = 'candidate', reviewed_by = NULL, reviewed_at = NULL`,
    [
      record.pluginId, jsonParam(record.document), jsonParam(record.provenance), jsonParam(record.inputHashes), record.contentHash,
      jsonParam(record.sources), jsonParam(record.warnings), record.llmUsage === null ? null : jsonParam(record.llmUsage),
      jsonParam(record.appliedExamples), Math.round(record.durationMs), timeParam(now),
    ],
  );
}

/** A cached LLM reply. */
export interface CachedReply {
  output: JsonObject;
  promptTokens: number;
  completionTokens: number;
}

/** The cached reply for a request hash. */
export async function findCachedReply(db: Queryable, inputHash: string): Promise<CachedReply | undefined> {
  const { rows } = await db.query<{ output: JsonObject; prompt_tokens: number; completion_tokens: number }>(
    'SELECT output, prompt_tokens, completion_tokens FROM pid_llm_cache WHERE input_hash = $1',
    [inputHash],
  );
  const row = rows[0];
  return row === undefined ? undefined : { output: row.output, promptTokens: row.prompt_tokens, completionTokens: row.completion_tokens };
}

/** Stores a validated reply (a concurrent identical request keeps the first). */
export async function storeCachedReply(db: Queryable, inputHash: string, model: string, reply: CachedReply, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO pid_llm_cache (input_hash, model, output, prompt_tokens, completion_tokens, created_at) VALUES ($1, $2, $3::jsonb, $4, $5, $6)
     ON CONFLICT (input_hash) DO NOTHING`,
    [inputHash, model.slice(0, 200), jsonParam(reply.output), reply.promptTokens, reply.completionTokens, timeParam(now)],
  );
}
