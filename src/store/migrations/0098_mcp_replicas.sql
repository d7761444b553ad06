-- Replicas that answer MCP requests (issue #24): each running `quiver serve` on PostgreSQL
-- registers the URL other replicas reach it at and renews heartbeat_at every few seconds. A
-- 2026-07-28 retry that resumes a call paused on another replica (its route sealed in the
-- requestState) is forwarded to that replica's URL while its heartbeat is fresh.
CREATE TABLE mcp_replicas (
  id text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
  url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);
