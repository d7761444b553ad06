-- "Called after" (issue #25, plan steps): within an organisation scope, tool B was called after
-- tool A in one successful session (or both in one successful outcome). One row per (scope, from,
-- to, contributor), so a transition's weight is the number of distinct contributors (user, else
-- session) who made it and one contributor's repeats only bump hits. Written by
-- selection/learning only from tools that may learn (successful, not loop-flagged, not
-- quarantined, learning not switched off); capped per (scope, from) and swept with the learned
-- examples' retention.
CREATE TABLE learned_transitions (
  org_scope text NOT NULL,
  from_tool uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  to_tool uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  contributor text NOT NULL,
  hits integer NOT NULL DEFAULT 1 CHECK (hits >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_scope, from_tool, to_tool, contributor),
  CHECK (from_tool <> to_tool)
);

CREATE INDEX learned_transitions_from_idx ON learned_transitions (org_scope, from_tool, last_seen_at);
CREATE INDEX learned_transitions_last_seen_idx ON learned_transitions (last_seen_at);
