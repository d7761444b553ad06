-- Quiver's initial schema. Runs unchanged on PGlite and PostgreSQL 15+ with pgvector.
-- Tables follow seed 001 §4.2 (tool registry and its six companions) plus the tenancy
-- (workspaces, projects), plugins and API keys the catalog needs.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  display_name text,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  display_name text,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);

-- Plugin names are kebab-case: never contain the `__` separator of qualified tool names.
CREATE TABLE plugins (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$' AND length(name) <= 64),
  display_name text,
  description text NOT NULL DEFAULT '',
  version text,
  source_type text NOT NULL DEFAULT 'sync' CHECK (source_type IN ('git', 'npm', 'path', 'url', 'sync')),
  source jsonb NOT NULL DEFAULT '{}'::jsonb,
  launch jsonb,
  manifest jsonb,
  manifest_warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  visibility text NOT NULL DEFAULT 'on-demand' CHECK (visibility IN ('always', 'on-demand', 'silent')),
  trust_score integer CHECK (trust_score BETWEEN 0 AND 100),
  trust_level text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'failed', 'removed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);

-- A row enables a plugin for a whole workspace (project_id NULL) or one project; a
-- project row with enabled = false opts that project out of a workspace-wide plugin.
CREATE TABLE plugin_enablements (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX plugin_enablements_scope_key ON plugin_enablements
  (plugin_id, workspace_id, COALESCE(project_id, '00000000-0000-0000-0000-000000000000'::uuid));
CREATE INDEX plugin_enablements_workspace_idx ON plugin_enablements (workspace_id);

-- Seed 001 table 1: category tree.
CREATE TABLE tool_categories (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  display_name text,
  description text NOT NULL DEFAULT '',
  parent_category_id uuid REFERENCES tool_categories(id) ON DELETE SET NULL,
  plugin_id uuid REFERENCES plugins(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tool_categories_name_key ON tool_categories
  (name, COALESCE(plugin_id, '00000000-0000-0000-0000-000000000000'::uuid));

-- Seed 001 table 2: the tool registry. `name` is the tool's own name inside its plugin;
-- the qualified name an LLM sees is `<plugin>__<name>`.
CREATE TABLE tools (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (name <> '' AND position('__' IN name) = 0 AND length(name) <= 128),
  display_name text,
  plugin_id uuid REFERENCES plugins(id) ON DELETE CASCADE,
  org_id text,
  category_id uuid REFERENCES tool_categories(id) ON DELETE SET NULL,
  description text NOT NULL DEFAULT '',
  parameters_schema jsonb NOT NULL DEFAULT '{"type":"object"}'::jsonb,
  return_schema jsonb,
  annotations jsonb NOT NULL DEFAULT '{}'::jsonb,
  function_summary text,
  tags text[] NOT NULL DEFAULT '{}',
  when_to_use text[] NOT NULL DEFAULT '{}',
  limitations text[] NOT NULL DEFAULT '{}',
  example_queries jsonb NOT NULL DEFAULT '[]'::jsonb,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  execution_type text NOT NULL DEFAULT 'mcp',
  execution_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  embedding_status text NOT NULL DEFAULT 'pending' CHECK (embedding_status IN ('pending', 'current', 'stale')),
  last_embedded_at timestamptz,
  is_always_pinned boolean NOT NULL DEFAULT false,
  pin_weight integer NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('draft', 'active', 'deprecated', 'retired')),
  schema_version text NOT NULL DEFAULT '1.0.0',
  version integer NOT NULL DEFAULT 1,
  needs_review boolean NOT NULL DEFAULT false,
  content_hash char(64) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX tools_plugin_name_key ON tools
  (COALESCE(plugin_id, '00000000-0000-0000-0000-000000000000'::uuid), name);
CREATE INDEX tools_active_idx ON tools (status, pin_weight DESC, name) WHERE deleted_at IS NULL;
CREATE INDEX tools_category_idx ON tools (category_id);
CREATE INDEX tools_embedding_status_idx ON tools (embedding_status) WHERE deleted_at IS NULL;

-- Vectors live beside the registry, one row per (tool, embedder), so several embedders of
-- different sizes can coexist; HNSW indexes are per dimension (partial expression indexes).
CREATE TABLE tool_embeddings (
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  model text NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions > 0),
  embedding vector NOT NULL,
  content_hash char(64) NOT NULL,
  embedded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tool_id, model)
);
CREATE INDEX tool_embeddings_384_hnsw ON tool_embeddings
  USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dimensions = 384;

-- Seed 001 table 3: context ("page") mappings, four pattern modes (exact, prefix*, *suffix, *contains*).
CREATE TABLE tool_page_mappings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  page_pattern text NOT NULL CHECK (page_pattern <> ''),
  category_id uuid NOT NULL REFERENCES tool_categories(id) ON DELETE CASCADE,
  plugin_id uuid REFERENCES plugins(id) ON DELETE CASCADE,
  priority integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tool_page_mappings_key ON tool_page_mappings
  (page_pattern, category_id, COALESCE(plugin_id, '00000000-0000-0000-0000-000000000000'::uuid));

-- Seed 001 table 4: visibility rules. A rule targets a tool, a category, a plugin, or
-- (all three NULL) every tool; `conditions` is the predicate on the request context.
CREATE TABLE tool_visibility_rules (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  rule_type text NOT NULL CHECK (rule_type IN ('org', 'user', 'page', 'role', 'tier', 'composite')),
  effect text NOT NULL CHECK (effect IN ('allow', 'deny')),
  tool_id uuid REFERENCES tools(id) ON DELETE CASCADE,
  category_id uuid REFERENCES tool_categories(id) ON DELETE CASCADE,
  plugin_id uuid REFERENCES plugins(id) ON DELETE CASCADE,
  conditions jsonb NOT NULL DEFAULT '{}'::jsonb,
  priority integer NOT NULL DEFAULT 0,
  is_active boolean NOT NULL DEFAULT true,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_visibility_rules_active_idx ON tool_visibility_rules (is_active, priority DESC);

-- Seed 001 table 5: immutable version history.
CREATE TABLE tool_versions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  version integer NOT NULL,
  snapshot jsonb NOT NULL,
  changed_fields text[] NOT NULL DEFAULT '{}',
  change_reason text,
  content_hash char(64) NOT NULL,
  schema_version text NOT NULL,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tool_id, version)
);

-- Seed 001 table 6: Beta posteriors per (tool, context key).
CREATE TABLE tool_bandit_stats (
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  context_key text NOT NULL,
  alpha double precision NOT NULL DEFAULT 1.0 CHECK (alpha > 0),
  beta_param double precision NOT NULL DEFAULT 1.0 CHECK (beta_param > 0),
  total_selections bigint NOT NULL DEFAULT 0,
  total_successes bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tool_id, context_key)
);

-- Seed 001 table 7: one row per selection; the outcome columns are filled in later.
CREATE TABLE tool_selection_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  query_text text NOT NULL,
  page_context text,
  org_id text,
  user_id text,
  workspace_id uuid,
  project_id uuid,
  session_id text,
  context_key text NOT NULL,
  selected_tool_ids uuid[] NOT NULL DEFAULT '{}',
  candidate_count integer NOT NULL DEFAULT 0,
  selection_method text NOT NULL,
  latency_ms double precision NOT NULL DEFAULT 0,
  stage_timings jsonb NOT NULL DEFAULT '{}'::jsonb,
  tokens_used integer NOT NULL DEFAULT 0,
  tokens_total integer NOT NULL DEFAULT 0,
  tokens_saved integer NOT NULL DEFAULT 0,
  warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  tools_called text[],
  tool_call_success boolean,
  outcome text,
  outcome_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_selection_events_created_idx ON tool_selection_events (created_at);
CREATE INDEX tool_selection_events_org_idx ON tool_selection_events (org_id, created_at);

-- API keys: only a SHA-256 of the key is stored; `prefix` lets an admin recognise one.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash char(64) NOT NULL UNIQUE,
  scopes text[] NOT NULL DEFAULT '{}',
  workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
  project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
  org_id text,
  user_id text,
  roles text[] NOT NULL DEFAULT '{}',
  tier text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

INSERT INTO workspaces (name, display_name) VALUES ('default', 'Default workspace');
