-- Learned example queries (DESIGN §3.10, issue #13): a request that led to a successful call of
-- a tool becomes an example query of that tool, scoped to the organisation of the caller
-- (org_scope: the org id, or '' for callers without an organisation: its own scope). The text
-- is redacted before it is written; text_key is its normalised form, so near-identical requests
-- of one contributor are one row (hits counts them). The per-tool cap, the per-contributor
-- share and retention are enforced by selection/learning (documented there).
CREATE TABLE learned_examples (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_scope text NOT NULL,
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  text text NOT NULL CHECK (length(text) BETWEEN 1 AND 1000),
  text_key text NOT NULL,
  -- Who taught it: 'user:<id>', else 'session:<id>' (the share cap counts per contributor).
  contributor text NOT NULL,
  source text NOT NULL CHECK (source IN ('gateway', 'api')),
  hits integer NOT NULL DEFAULT 1 CHECK (hits >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX learned_examples_identity_idx ON learned_examples (org_scope, tool_id, contributor, text_key);
CREATE INDEX learned_examples_scope_tool_idx ON learned_examples (org_scope, tool_id, last_seen_at);
CREATE INDEX learned_examples_last_seen_idx ON learned_examples (last_seen_at);

-- Learning switched off for a tool by an admin: in one organisation scope, or in every scope
-- (org_scope NULL). A disabled tool learns nothing and its learned examples do not rank.
CREATE TABLE learned_example_blocks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_scope text,
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (org_scope, tool_id)
);
