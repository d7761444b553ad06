-- Non-secret settings of a plugin (issue #15): environment variables stored in plain, shown by
-- `plugin show` and passed to the plugin's process beside its decrypted credentials. A key is
-- either a setting or a secret (plugin_secrets), never both; the service refuses the clash.
CREATE TABLE plugin_env (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  key text NOT NULL CHECK (key ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
  value text NOT NULL CHECK (length(value) <= 65536),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin_id, key)
);
