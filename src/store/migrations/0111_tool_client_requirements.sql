-- The client capabilities a plugin's tool needs (issue #24). A 2026-07-28 plugin may list a tool
-- only to requests whose `_meta` declares what it uses (sampling, elicitation, roots); discovery
-- lists it again without each of them (runtime/client-requirements.ts) and records here, per
-- tool, the capabilities without which the tool was not listed. The gateway offers such a tool
-- (tools/list, search_tools) and runs it (tools/call, call_tool) only for a caller that declared
-- them all. Replaced as a whole at each install, sync and update of the plugin; a tool without
-- a row needs nothing (every 2025-era plugin's tools). Keyed like tool_pins: by plugin and the
-- tool's own name, so a row exists before, and apart from, the tool's catalog version.
CREATE TABLE tool_client_requirements (
  plugin_id uuid NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
  tool_name text NOT NULL,
  capabilities text[] NOT NULL CHECK (cardinality(capabilities) > 0),
  PRIMARY KEY (plugin_id, tool_name)
);
