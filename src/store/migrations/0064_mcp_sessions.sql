-- Issue #16: MCP sessions any replica can serve. One row per live session of `/mcp`: who it
-- belongs to (identity as resolved from the API key, never from the client), what the client
-- declared at initialize, the gateway's session state (bound tools with TTL/LRU order, loop-guard
-- windows, search history, the open selection event) and an `extensions` bag other parts keep
-- per-session values in. `version` grows on every write: a replica holding a cached copy
-- compares it per request. Expired rows are deleted by one replica (the sessions.collect job).
CREATE TABLE mcp_sessions (
  id text PRIMARY KEY,
  identity jsonb NOT NULL,
  identity_key text NOT NULL,
  owner_key text NOT NULL,
  owner_org text,
  protocol_version text,
  client jsonb NOT NULL DEFAULT '{}'::jsonb,
  state jsonb NOT NULL DEFAULT '{}'::jsonb,
  extensions jsonb NOT NULL DEFAULT '{}'::jsonb,
  version bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX mcp_sessions_expires_idx ON mcp_sessions (expires_at);
CREATE INDEX mcp_sessions_owner_key_idx ON mcp_sessions (owner_key, last_seen_at);
CREATE INDEX mcp_sessions_owner_org_idx ON mcp_sessions (owner_org, last_seen_at) WHERE owner_org IS NOT NULL;
