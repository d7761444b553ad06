-- Trust that an admin grants and that runtime behaviour adjusts, and the enforced egress
-- allow-list of each plugin (issue #10, seed 000 §4.1 and §4.3, DESIGN §3.6).

-- Admin grants and caps, history kept: the newest row of a plugin is the one in force
-- ('grant' sets the level, 'cap' limits it, 'clear' removes both). `actor` is who: an API key's
-- id and name, or `cli`.
CREATE TABLE plugin_trust_grants (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('grant', 'cap', 'clear')),
  level text CHECK (level IN ('UNVERIFIED', 'COMMUNITY', 'ENTERPRISE', 'VERIFIED_PUBLISHER', 'OFFICIAL')),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'clear') = (level IS NULL))
);
CREATE INDEX plugin_trust_grants_plugin_idx ON plugin_trust_grants (plugin_id, id DESC);

-- Where a sandboxed plugin may connect: host (lower case name or IP literal) and port.
CREATE TABLE plugin_egress_rules (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  host text NOT NULL CHECK (host = lower(host) AND length(host) BETWEEN 1 AND 253),
  port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  reason text NOT NULL DEFAULT '',
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin_id, host, port)
);

-- Every connection the egress proxy allowed or refused (port 0: a name lookup the sandbox's
-- DNS stub refused). Written in batches off the call path; pruned by age.
CREATE TABLE plugin_egress_decisions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  host text NOT NULL,
  port integer NOT NULL CHECK (port BETWEEN 0 AND 65535),
  allowed boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plugin_egress_decisions_plugin_idx ON plugin_egress_decisions (plugin_id, created_at DESC);
CREATE INDEX plugin_egress_decisions_created_idx ON plugin_egress_decisions (created_at);

-- Users flagging a plugin (`quiver plugin report`): each lowers its runtime trust for a while
-- and queues a re-verification.
CREATE TABLE plugin_user_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plugin_user_reports_plugin_idx ON plugin_user_reports (plugin_id, created_at DESC);

-- The latest runtime trust score of a plugin (seed 000 §4.3) and what it was made of;
-- `below_threshold` lowers the effective level at the plugin's next start.
CREATE TABLE plugin_runtime_trust (
  plugin_id uuid PRIMARY KEY REFERENCES plugins(id) ON DELETE CASCADE,
  score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
  below_threshold boolean NOT NULL,
  factors jsonb NOT NULL,
  computed_at timestamptz NOT NULL
);
