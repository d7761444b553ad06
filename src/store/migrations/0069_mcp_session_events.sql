-- Issue #16 follow-up: resumable SSE across replicas. Every message the `/mcp` transport sends on
-- an SSE stream of a stored session is kept here for a while, so a client that lost its stream
-- can reconnect with `Last-Event-ID` to any replica and receive what it missed. `id` is the
-- event id (monotonic across replicas); rows go with their session (ON DELETE CASCADE, so the
-- sessions.collect job and DELETE remove them) and are bounded per session and by age.
CREATE TABLE mcp_session_events (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
  stream_id text NOT NULL,
  message jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_session_events_stream_idx ON mcp_session_events (session_id, stream_id, id);
CREATE INDEX mcp_session_events_created_idx ON mcp_session_events (created_at);
