-- Selection pipeline (seed 001 §5, §8.4): what the outcome and analytics queries need
-- beyond the initial schema.
-- * provider / tier: which provider format was sent and the tier the request ran under.
-- * called_tool_ids: the offered tools the LLM actually called (resolved from the names it
--   reported), so the hit rate is an array overlap instead of a name join.
ALTER TABLE tool_selection_events
  ADD COLUMN provider text,
  ADD COLUMN tier text,
  ADD COLUMN called_tool_ids uuid[];

-- The bandit loads every arm of one context key at a time (seed 001 §5.5).
CREATE INDEX tool_bandit_stats_context_idx ON tool_bandit_stats (context_key);
-- Outcome analytics read recent events that have an outcome.
CREATE INDEX tool_selection_events_outcome_idx ON tool_selection_events (outcome_at) WHERE outcome_at IS NOT NULL;
