-- Token counts of each tool's provider-formatted schema (issue #28: a restarted server answers
-- selections without loading the ~20 MB o200k tokenizer). One row per tool and provider
-- format; `json_key` is a 53-bit hash of the tokenizer's name and the exact compact JSON that
-- was counted, so a count is used only for the very text it counts (an override, an
-- enrichment or a rename gives another key, counted again and written back). Written when a
-- tool is synced and when a selection had to count; dropped with the tool.
CREATE TABLE tool_token_counts (
  tool_id uuid NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
  provider text NOT NULL,
  json_key bigint NOT NULL CHECK (json_key >= 0 AND json_key < 9007199254740992),
  tokens integer NOT NULL CHECK (tokens >= 0),
  PRIMARY KEY (tool_id, provider)
);
