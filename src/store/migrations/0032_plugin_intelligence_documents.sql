-- Plugin Intelligence Documents (seed 000 §6.2): the current PID of each plugin, its canonical
-- content hash, and how it validated (valid / invalid, with the full error and warning lists).
CREATE TABLE plugin_intelligence_documents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL UNIQUE REFERENCES plugins(id) ON DELETE CASCADE,
  version varchar(50) NOT NULL,
  pid_content jsonb NOT NULL,
  schema_version varchar(20) NOT NULL DEFAULT '1.0',
  content_hash char(64) NOT NULL,
  validation_status varchar(30) NOT NULL CHECK (validation_status IN ('valid', 'valid_with_warnings', 'invalid')),
  validation_score integer CHECK (validation_score BETWEEN 0 AND 100),
  validation_errors jsonb NOT NULL DEFAULT '[]'::jsonb,
  validation_warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Where the document came from: shipped in quiver.json, generated from the catalog, or an admin PUT.
  origin varchar(30) NOT NULL DEFAULT 'admin' CHECK (origin IN ('shipped', 'generated', 'admin')),
  runtime_metrics jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
