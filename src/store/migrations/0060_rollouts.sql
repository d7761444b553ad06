-- Upgrades without downtime (issue #11; seed 000 §5.1 blue-green deployment, §6.2 `deployments`).
--
-- Every plugin has at most two deployments, its blue and its green slot. The active slot serves
-- the plugin's installed version; an upgrade installs the new version into the idle slot and a
-- rollout moves traffic to it step by step (10 % → 50 % → 100 % by default), judged against the
-- active slot over the same window. A rolled-back version stays in its slot for inspection.
CREATE TABLE deployments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  version text NOT NULL,
  slot text NOT NULL CHECK (slot IN ('blue', 'green')),
  -- active: serves the plugin; canary: takes a share of traffic during a rollout;
  -- idle: the previous version, kept to go back to; failed: rolled back, kept for inspection.
  status text NOT NULL CHECK (status IN ('active', 'canary', 'idle', 'failed')),
  traffic_percent integer NOT NULL DEFAULT 0 CHECK (traffic_percent BETWEEN 0 AND 100),
  health_score integer CHECK (health_score BETWEEN 0 AND 100),
  execution_mode text,
  -- The version label the runtime uses for this slot's processes (call events carry it).
  runtime_version text NOT NULL,
  -- The git ref or npm version asked for, and the staged install (fields, tools, categories…).
  requested_ref text,
  install jsonb,
  -- Tools a canary may serve during the rollout: those it serves exactly as the active slot does.
  -- New or changed tools wait for promotion (catalog sync and pin screening happen there).
  routable_tools jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (plugin_id, slot)
);

-- One rollout per upgrade. `decider` holds a short lease: exactly one replica judges and moves a
-- running rollout; the others read the state (NOTIFY on quiver_rollouts) and route alike.
CREATE TABLE plugin_rollouts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  from_deployment uuid NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  to_deployment uuid NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('running', 'paused', 'promoted', 'rolled_back')),
  steps jsonb NOT NULL,
  step integer NOT NULL DEFAULT 0 CHECK (step >= 0),
  step_started_at timestamptz NOT NULL DEFAULT now(),
  step_window_ms integer NOT NULL CHECK (step_window_ms >= 0),
  reason text,
  decider text,
  decider_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX plugin_rollouts_one_open_idx ON plugin_rollouts (plugin_id) WHERE status IN ('running', 'paused');
CREATE INDEX plugin_rollouts_plugin_idx ON plugin_rollouts (plugin_id, created_at);

-- The history of a rollout: started, step, health, promoted, rolled back (with why), paused…
CREATE TABLE plugin_rollout_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  rollout_id uuid NOT NULL REFERENCES plugin_rollouts(id) ON DELETE CASCADE,
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  kind text NOT NULL,
  message text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plugin_rollout_events_rollout_idx ON plugin_rollout_events (rollout_id, created_at);

-- Health per slot is read from the call events: they now say which version (slot) served them.
ALTER TABLE plugin_call_events ADD COLUMN version text;
CREATE INDEX plugin_call_events_plugin_version_idx ON plugin_call_events (plugin_id, version, created_at);
