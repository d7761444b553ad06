-- Remote plugins authorized per user or per organisation (issue #27): the authorization of a
-- remote MCP server belongs to an owner — the hub ('hub', owner_id ''), one Quiver user
-- ('user', the principal's user id) or one organisation ('organisation', its id) — so tokens
-- are keyed by (resource, owner_kind, owner_id); existing rows are the hub's. Which kind of
-- owner a server's calls use is the admin's setting per server URL (remote_oauth_servers; no
-- row: 'hub', as before).
ALTER TABLE remote_oauth ADD COLUMN owner_kind text NOT NULL DEFAULT 'hub' CHECK (owner_kind IN ('hub', 'user', 'organisation'));
ALTER TABLE remote_oauth ADD COLUMN owner_id text NOT NULL DEFAULT '' CHECK (length(owner_id) <= 512 AND ((owner_kind = 'hub') = (owner_id = '')));
ALTER TABLE remote_oauth DROP CONSTRAINT remote_oauth_pkey;
ALTER TABLE remote_oauth ADD PRIMARY KEY (resource, owner_kind, owner_id);

CREATE TABLE remote_oauth_servers (
  resource text PRIMARY KEY CHECK (length(resource) BETWEEN 1 AND 4096),
  owner_kind text NOT NULL CHECK (owner_kind IN ('hub', 'user', 'organisation')),
  updated_at timestamptz NOT NULL DEFAULT now()
);
