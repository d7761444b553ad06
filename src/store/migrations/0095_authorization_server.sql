-- The built-in authorization server (issue #27, docs/authorization.md): the accounts an admin
-- invites, the records of the OAuth provider (grants, codes, refresh tokens, sessions,
-- registered clients, interactions), and its signing keys (the private key sealed with the
-- hub's secret key, like plugin secrets; plaintext never reaches SQL).
CREATE TABLE auth_users (
  id text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 100),
  email text NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 320),
  org_id text NOT NULL CHECK (length(org_id) BETWEEN 1 AND 200),
  roles jsonb NOT NULL DEFAULT '[]',
  scopes jsonb NOT NULL DEFAULT '["mcp"]',
  -- scrypt$N$r$p$salt$hash; null until the user has signed up through the invitation.
  password_hash text,
  -- SHA-256 of the one-time sign-up token; null once used.
  invite_hash text UNIQUE,
  invite_expires_at timestamptz,
  disabled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auth_provider_records (
  model text NOT NULL CHECK (length(model) BETWEEN 1 AND 64),
  id text NOT NULL CHECK (length(id) BETWEEN 1 AND 4096),
  payload jsonb NOT NULL,
  grant_id text,
  user_code text,
  uid text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX auth_provider_records_grant ON auth_provider_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX auth_provider_records_uid ON auth_provider_records (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX auth_provider_records_user_code ON auth_provider_records (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX auth_provider_records_expiry ON auth_provider_records (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE auth_signing_keys (
  kid text PRIMARY KEY CHECK (length(kid) BETWEEN 1 AND 200),
  public_jwk jsonb NOT NULL,
  ciphertext text NOT NULL,
  iv text NOT NULL,
  auth_tag text NOT NULL,
  key_id text NOT NULL,
  algorithm text NOT NULL DEFAULT 'aes-256-gcm',
  created_at timestamptz NOT NULL DEFAULT now()
);
