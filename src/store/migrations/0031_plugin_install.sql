-- What the installer learnt about a plugin beyond the initial schema: the resources and
-- prompts discovery listed and the server's self-description, and the credentials the
-- plugin declares (quiver.json `credentials`, or a marketplace entry's environmentVariables).
ALTER TABLE plugins ADD COLUMN discovery jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE plugins ADD COLUMN credentials jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Plugin credentials, encrypted at rest with AES-256-GCM (DESIGN §3.5): one random 12-byte IV
-- per value, the GCM auth tag, and the id of the key that sealed it (so a key rotation can
-- find what to re-seal). The plaintext is never stored; base64 text keeps both engines alike.
CREATE TABLE plugin_secrets (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  key text NOT NULL CHECK (key ~ '^[A-Za-z_][A-Za-z0-9_-]{0,127}$'),
  ciphertext text NOT NULL,
  iv text NOT NULL,
  auth_tag text NOT NULL,
  key_id text NOT NULL,
  algorithm text NOT NULL DEFAULT 'aes-256-gcm',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin_id, key)
);
