-- Issue #11 follow-up: a rollout first waits in `verifying` while the staged version runs
-- through the verification pipeline; it takes no traffic then, but it is open (one per plugin).
ALTER TABLE plugin_rollouts DROP CONSTRAINT plugin_rollouts_status_check;
ALTER TABLE plugin_rollouts ADD CONSTRAINT plugin_rollouts_status_check
  CHECK (status IN ('verifying', 'running', 'paused', 'promoted', 'rolled_back'));
DROP INDEX plugin_rollouts_one_open_idx;
CREATE UNIQUE INDEX plugin_rollouts_one_open_idx ON plugin_rollouts (plugin_id) WHERE status IN ('verifying', 'running', 'paused');
