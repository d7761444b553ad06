-- Plugin call events (DESIGN §3.6; runtime issue "Health"): one row per upstream tool call the
-- supervisor made (plugin, tool, latency, outcome, error class), written in batches off the hot
-- path by runtime/call-event-recorder.ts. They feed the health API and CLI, analytics, the
-- bandit and, later, dynamic trust (seed 000 §5.1).
CREATE TABLE plugin_call_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  plugin_name text NOT NULL,
  tool_name text NOT NULL,
  latency_ms double precision NOT NULL CHECK (latency_ms >= 0),
  outcome text NOT NULL CHECK (outcome IN ('success', 'error', 'timeout', 'rejected')),
  -- The QuiverError code of a failed call (`timeout`, `circuit_open`, `tool_error`, …); NULL on success.
  error_class text,
  session_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX plugin_call_events_plugin_created_idx ON plugin_call_events (plugin_id, created_at);
CREATE INDEX plugin_call_events_created_idx ON plugin_call_events (created_at);
