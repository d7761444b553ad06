-- Durable background jobs (issue #10; reused by #11 and #16) and signed verification reports
-- (seed 000 §4.2, Appendix B).
--
-- A job is claimed by exactly one worker with FOR UPDATE SKIP LOCKED; the claim takes a lease
-- (`lease_until`) the worker renews while it runs. A worker that dies stops renewing, and once
-- the lease has run out any worker may claim the job again (a new attempt).
CREATE TABLE jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_.-]{0,63}$'),
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
  -- Jobs with the same key are one job while queued or running (enqueue returns the existing one).
  dedupe_key text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  run_after timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_until timestamptz,
  last_error text,
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX jobs_dedupe_active_key ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running');
CREATE INDEX jobs_runnable_idx ON jobs (run_after) WHERE status = 'queued';
CREATE INDEX jobs_lease_idx ON jobs (lease_until) WHERE status = 'running';

-- One row per verification run: the signed report as issued (jsonb, verbatim) and the columns
-- the lists and the trust columns of `plugins` are read from.
CREATE TABLE verification_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  job_id text NOT NULL UNIQUE,
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  version text NOT NULL,
  score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
  grade text NOT NULL,
  trust_level text NOT NULL,
  report jsonb NOT NULL,
  signature text NOT NULL,
  key_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX verification_reports_plugin_idx ON verification_reports (plugin_id, created_at DESC);

-- The hub's Ed25519 signing key: generated once by whichever replica needs it first (the
-- primary key makes a second insert lose), the private key sealed with the secret box.
CREATE TABLE hub_signing_keys (
  name text PRIMARY KEY,
  algorithm text NOT NULL,
  public_key text NOT NULL,
  private_key_sealed jsonb NOT NULL,
  key_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
