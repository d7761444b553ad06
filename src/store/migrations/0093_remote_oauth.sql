-- Quiver as an OAuth client of remote plugins (issue #27): per remote MCP server (its URL, the
-- protected resource), the sealed OAuth state — client registration, tokens, the discovered
-- authorization server, a pending authorization's state and PKCE verifier — as one AES-256-GCM
-- value bound to the URL (plugins/secret-box). Plaintext never reaches SQL.
CREATE TABLE remote_oauth (
  resource text PRIMARY KEY CHECK (length(resource) BETWEEN 1 AND 4096),
  ciphertext text NOT NULL,
  iv text NOT NULL,
  auth_tag text NOT NULL,
  key_id text NOT NULL,
  algorithm text NOT NULL DEFAULT 'aes-256-gcm',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
