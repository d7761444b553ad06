-- Plugins area (seed 003, DESIGN §3.5). The marketplace: installable MCP servers imported from
-- catalogs in the official MCP Registry `server.json` format, kept whole in `server` and
-- searched lexically over name, title and description.
CREATE TABLE marketplace_servers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Reverse-DNS registry name, e.g. io.github.user/server.
  name text NOT NULL UNIQUE CHECK (name <> '' AND length(name) <= 200),
  title text,
  description text NOT NULL DEFAULT '',
  version text,
  server jsonb NOT NULL,
  source text,
  imported_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
