-- Replica-wide rate limits and concurrency caps (issue #16). With several replicas on one
-- PostgreSQL, a plugin's declared limits hold across all of them: one token bucket row per
-- scope (a plugin, or a plugin's tool), refilled in SQL from the time since its last update and
-- taken atomically by INSERT ... ON CONFLICT DO UPDATE ... WHERE; and one lease row per
-- concurrency slot, claimed through the primary key and expiring by itself, so a replica that
-- dies frees its slots once their leases lapse (runtime/shared-limits.ts).
CREATE TABLE runtime_rate_buckets (
  scope text PRIMARY KEY,
  tokens double precision NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE runtime_concurrency_leases (
  scope text NOT NULL,
  slot integer NOT NULL CHECK (slot >= 0),
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (scope, slot)
);
