-- The sign-in throttle of the built-in authorization server (issue #27): failed sign-ins per
-- account and per client address, kept in the database so the limits survive a restart and are
-- shared by every replica. A key is the SHA-256 of 'account:<email>' or 'address:<ip>' (no
-- attacker-chosen text stored); rows older than the window are deleted as new failures come.
CREATE TABLE auth_login_failures (
  key_hash text NOT NULL CHECK (length(key_hash) = 64),
  failed_at timestamptz NOT NULL
);
CREATE INDEX auth_login_failures_key ON auth_login_failures (key_hash, failed_at DESC);
CREATE INDEX auth_login_failures_age ON auth_login_failures (failed_at);
