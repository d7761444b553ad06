-- Host folders as a declared permission (issue #26): the host paths an admin granted a plugin,
-- bound at the same path in its sandbox, read-only ('ro') or read-write ('rw'). `actor` is who
-- granted it (an API key's id and name, `cli`, or `import` of a client configuration), and
-- `reason` why. The hub's own paths are refused before a row is written and at every launch.
CREATE TABLE plugin_host_mounts (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  path text NOT NULL CHECK (length(path) BETWEEN 1 AND 4096 AND left(path, 1) = '/'),
  mode text NOT NULL CHECK (mode IN ('ro', 'rw')),
  reason text NOT NULL DEFAULT '',
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin_id, path)
);
