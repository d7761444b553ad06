-- Generated Plugin Intelligence Documents (issue #14, seed 000 §3.3). One row per plugin: the
-- last generated document, which source gave each field (provenance), the hash of each
-- source's inputs (a changed hash marks that source stale; an unchanged one is reused from
-- `sources`), the document's content hash (over the input hashes), what the LLM cost, and the
-- example requests it added to the plugin's catalog tools. The document an admin accepts is
-- still stored in plugin_intelligence_documents; this table is the reviewable candidate.
CREATE TABLE pid_generations (
  plugin_id uuid PRIMARY KEY REFERENCES plugins(id) ON DELETE CASCADE,
  document jsonb NOT NULL,
  provenance jsonb NOT NULL DEFAULT '{}'::jsonb,
  input_hashes jsonb NOT NULL DEFAULT '{}'::jsonb,
  content_hash char(64) NOT NULL,
  sources jsonb NOT NULL DEFAULT '[]'::jsonb,
  warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  llm_usage jsonb,
  applied_examples jsonb NOT NULL DEFAULT '{}'::jsonb,
  duration_ms integer NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
  generated_at timestamptz NOT NULL DEFAULT now()
);

-- Validated LLM enrichment replies by the SHA-256 of their inputs (prompt version, model and
-- the tool as the other sources described it): the same inputs never cost a second call.
CREATE TABLE pid_llm_cache (
  input_hash char(64) PRIMARY KEY,
  model varchar(200) NOT NULL,
  output jsonb NOT NULL,
  prompt_tokens integer NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
  completion_tokens integer NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
