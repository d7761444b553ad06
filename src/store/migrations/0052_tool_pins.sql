-- Tool pinning (issue #10, DESIGN §3.7): per plugin tool, the approved definition as the plugin
-- served it (name, title, description, inputSchema, outputSchema, annotations), its canonical
-- hash (core/hash.ts), who approved it and how; and, when a later listing serves a different
-- definition (a "rug pull") or a tool nobody approved, the quarantine: the served definition,
-- the catalog entry built from it (applied only on approval) and the reason. A quarantined tool
-- is hidden from selection and its calls are refused until re-verification or an admin approves.
CREATE TABLE tool_pins (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  tool_name text NOT NULL,
  -- NULL for a tool that appeared after the plugin was pinned and awaits its first approval.
  approved_hash text,
  approved_definition jsonb,
  -- The catalog tool input built from the approved definition (what the catalog keeps serving).
  approved_entry jsonb,
  approved_by text,
  approved_at timestamptz,
  source text CHECK (source IN ('verification', 'admin', 'first-discovery')),
  -- True when the tool was in the plugin's last listing (absent tools keep their pin).
  present boolean NOT NULL DEFAULT true,
  quarantined_at timestamptz,
  quarantine_reason text,
  served_hash text,
  served_definition jsonb,
  served_entry jsonb,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin_id, tool_name),
  CHECK (approved_hash IS NOT NULL OR quarantined_at IS NOT NULL),
  CHECK (quarantined_at IS NULL OR (served_hash IS NOT NULL AND served_definition IS NOT NULL AND served_entry IS NOT NULL AND quarantine_reason IS NOT NULL))
);

CREATE INDEX tool_pins_quarantined_idx ON tool_pins (plugin_id, tool_name) WHERE quarantined_at IS NOT NULL;
